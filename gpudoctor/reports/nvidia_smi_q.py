"""`nvidia-smi -q` (indented "Key : Value" text) and `nvidia-smi -q -x` (XML).

Both show, per GPU, the product name, UUID, bus id, frame-buffer memory, persistence and MIG
mode, and the health counters kept as `GpuHealth`: ECC mode and error counts, retired pages
(before Ampere), remapped rows (Ampere and later), temperature and its thresholds, power draw
and limit, the PCIe link and its replay counter, the active clock-event reasons (called "Clocks
Throttle Reasons" before driver 535, "Clocks Event Reasons" since), the "GPU Recovery Action"
(recent drivers), the NVSwitch "Fabric" State and Status, and the Processes. The names of the
counters changed across driver generations and both are read: ECC "Single Bit"/"Double Bit"
totals (older) or "SRAM/DRAM Correctable/Uncorrectable" (newer, the SRAM uncorrectable count
split into "Parity" and "SEC-DED" since 535); "Pending" or "Pending Page Blacklist". "N/A" is a
counter the GPU does not have (NOT_SUPPORTED); a line the output lacks is NOT_REPORTED. Neither
output has the compute capability: the checks take it from the product name.

A cut-off paste keeps what it has: the text is read line by line, the XML with an incremental
parser, so the GPUs before the cut are facts and the rest are not there.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError, XMLPullParser

from gpudoctor.model import GpuFacts, GpuHealth, GpuProcess, NvmlFacts, Reason, Unavailable
from gpudoctor.reports.interface import (
    MOST_GPUS,
    Q_SECTIONS,
    Partial,
    not_reported,
    stated_driver,
)
from gpudoctor.versions import encode_cuda_version

START_TEXT = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$")
# the same text pasted without its banner (`nvidia-smi -a` copied from its first field on): the
# header's fields flush left and padded to the colon, as nvidia-smi writes them
HEADLESS = re.compile(r"^(?:Timestamp {4,}: \S|Driver Version {4,}: \d)")
START_XML = re.compile(r"<nvidia_smi_log>")
# a piece of -q pasted on its own, with no banner, driver or GPU line (`nvidia-smi -q | grep
# -A5 Fabric`, a comment quoting a section, a paste that starts mid-GPU): a section's heading
# alone on its line, indented as -q indents a GPU's sections (4 spaces; Fabric also flush, as
# `grep -A4` prints it), or the GPU's UUID line. `parse_fragment` reads what its sections state
# (and refuses headings without values: a word in prose)
# The headings of several words no prose line is made of alone also count flush left (a README
# quoting one section, its indentation stripped)
_SECTIONS = (r"^[ \t]*(?:Remapped Rows|ECC Errors|Retired Pages|Clocks (?:Event|Throttle) "
             r"Reasons|GPU Power Readings|FB Memory Usage|BAR1 Memory Usage)[ \t]*$"
             r"|^[ \t]+(?:Temperature|Power Readings|Max Clocks|Applications Clocks|"
             r"Inforom Version|GPU Reset Status|Ecc Mode|ECC Mode|GPU Virtualization Mode|"
             r"Compute Mode)[ \t]*$"
             r"|^[ \t]+GPU UUID[ \t]+: GPU-[0-9a-fA-F-]{36}[ \t]*$"
             # a GPU's product line as -q pads it (`nvidia-smi -q | grep "Product Name"`)
             r"|^[ \t]{4}Product (?:Name|Architecture|Brand)[ \t]{8,}: \S")
FRAGMENT = re.compile(rf"{_SECTIONS}|^\s*Fabric\s*$")
# a piece of `-q -x` without its <nvidia_smi_log> root (a comment quoting a GPU's elements, a
# paste that starts inside <processes>): an element of a <gpu> on its own line
_XML_ELEMENTS = ("product_name|product_brand|uuid|fb_memory_usage|bar1_memory_usage|pci|"
                 "pci_bus_id|ecc_errors|retired_pages|remapped_rows|temperature|power_readings|"
                 "gpu_power_readings|clocks_event_reasons|clocks_throttle_reasons|processes|"
                 "process_info|process_name|used_memory|persistence_mode|compute_mode|"
                 "mig_mode|fabric")
FRAGMENT_XML = re.compile(rf"^[ \t]*</?(?:{_XML_ELEMENTS})>")
_TAG = re.compile(r"<(/?)([A-Za-z_][\w.-]{0,60})(?:\s[^<>]{0,200})?(/?)>")
LONGEST = 1000  # no -q line is longer; longer ones are not read (and no regex sees them)


@dataclass
class _Node:
    key: str
    value: str | None = None
    children: list[_Node] = field(default_factory=list)

    def find(self, *path: str) -> _Node | None:
        node: _Node | None = self
        for key in path:
            low = key.lower()
            node = next((c for c in node.children if c.key.lower() == low), None) if node else None
        return node


def _text_tree(text: str) -> _Node:
    root = _Node("")
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip() or len(line) > LONGEST or START_TEXT.match(line):
            continue
        key, colon, value = line.partition(" :")  # "Bus Id   : 00000000:01:00.0"
        indent = len(line) - len(line.lstrip())
        node = _Node(key.strip(), value.strip()) if colon else _Node(line.strip())
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


def _xml_tree(text: str) -> _Node | None:
    """The XML as the same tree (tags as keys); None if it is not well-formed where it ends."""
    if "<!ENTITY" in text:  # no entity expansion from a pasted file
        return None
    parser: XMLPullParser[Element] = XMLPullParser(events=("start",))
    root: Element | None = None
    # a lone surrogate (an undecodable byte of argv, `explain "$(cat x)"`) cannot be fed to the
    # parser: as U+FFFD, like any byte that is not UTF-8
    body = text[text.index("<nvidia_smi_log"):].encode("utf-8", "surrogatepass").decode(
        "utf-8", "replace")
    with contextlib.suppress(ParseError):  # cut off or damaged: keep what came before
        parser.feed(body)
        for event in parser.read_events():
            element = event[-1] if isinstance(event, tuple) else None
            if root is None and isinstance(element, Element):
                root = element
    return _convert(root) if root is not None else None


# nvidia-smi's XML nests 6 levels at most (<nvidia_smi_log><gpu><processes><process_info>…):
# a deeper paste is not its output, and is not walked (a crafted one would exhaust the stack)
DEEPEST = 24


def _convert(e: Element, depth: int = 0) -> _Node:
    node = _Node(e.tag, (e.text or "").strip() or None)
    if e.get("id"):
        node.children.append(_Node("id", e.get("id")))
    if depth < DEEPEST:
        node.children.extend(_convert(c, depth + 1) for c in e)
    return node


# field → (text paths, xml paths); the first path present wins
_Paths = tuple[tuple[str, ...], ...]
_FIELDS: dict[str, tuple[_Paths, _Paths]] = {
    "name": ((("Product Name",),), (("product_name",),)),
    "brand": ((("Product Brand",),), (("product_brand",),)),
    "uuid": ((("GPU UUID",),), (("uuid",),)),
    "persistence": ((("Persistence Mode",),), (("persistence_mode",),)),
    "mig": ((("MIG Mode", "Current"),), (("mig_mode", "current_mig"),)),
    "bus": ((("PCI", "Bus Id"),), (("pci", "pci_bus_id"), ("id",))),
    "total": ((("FB Memory Usage", "Total"),), (("fb_memory_usage", "total"),)),
    "free": ((("FB Memory Usage", "Free"),), (("fb_memory_usage", "free"),)),
    "ecc_mode": ((("ECC Mode", "Current"),), (("ecc_mode", "current_ecc"),)),
    "retired_sbe": ((("Retired Pages", "Single Bit ECC"),),
                    (("retired_pages", "multiple_single_bit_retirement", "retired_count"),)),
    "retired_dbe": ((("Retired Pages", "Double Bit ECC"),),
                    (("retired_pages", "double_bit_retirement", "retired_count"),)),
    "retired_pending": ((("Retired Pages", "Pending Page Blacklist"), ("Retired Pages", "Pending")),
                        (("retired_pages", "pending_blacklist"),
                         ("retired_pages", "pending_retirement"))),
    "remap_corr": ((("Remapped Rows", "Correctable Error"),),
                   (("remapped_rows", "remapped_row_corr"),)),
    "remap_unc": ((("Remapped Rows", "Uncorrectable Error"),),
                  (("remapped_rows", "remapped_row_unc"),)),
    "remap_pending": ((("Remapped Rows", "Pending"),),
                      (("remapped_rows", "remapped_row_pending"),)),
    "remap_failure": ((("Remapped Rows", "Remapping Failure Occurred"),),
                      (("remapped_rows", "remapped_row_failure"),)),
    "ecc_pending": ((("ECC Mode", "Pending"),), (("ecc_mode", "pending_ecc"),)),
    "compute_mode": ((("Compute Mode",),), (("compute_mode",),)),
    "temp": ((("Temperature", "GPU Current Temp"),), (("temperature", "gpu_temp"),)),
    "temp_slow": ((("Temperature", "GPU Slowdown Temp"),),
                  (("temperature", "gpu_temp_slow_threshold"),)),
    "temp_shut": ((("Temperature", "GPU Shutdown Temp"),),
                  (("temperature", "gpu_temp_max_threshold"),)),
    "power": ((("GPU Power Readings", "Power Draw"), ("Power Readings", "Power Draw")),
              (("gpu_power_readings", "power_draw"), ("power_readings", "power_draw"))),
    "power_limit": ((("GPU Power Readings", "Current Power Limit"),
                     ("Power Readings", "Enforced Power Limit"), ("Power Readings", "Power Limit")),
                    (("gpu_power_readings", "current_power_limit"),
                     ("power_readings", "enforced_power_limit"),
                     ("power_readings", "power_limit"))),
    "pcie_gen": ((("PCI", "GPU Link Info", "PCIe Generation", "Current"),),
                 (("pci", "pci_gpu_link_info", "pcie_gen", "current_link_gen"),)),
    "pcie_gen_max": ((("PCI", "GPU Link Info", "PCIe Generation", "Max"),),
                     (("pci", "pci_gpu_link_info", "pcie_gen", "max_link_gen"),)),
    "pcie_width": ((("PCI", "GPU Link Info", "Link Width", "Current"),),
                   (("pci", "pci_gpu_link_info", "link_widths", "current_link_width"),)),
    "pcie_width_max": ((("PCI", "GPU Link Info", "Link Width", "Max"),),
                       (("pci", "pci_gpu_link_info", "link_widths", "max_link_width"),)),
    "replays": ((("PCI", "Replays Since Reset"), ("PCI", "Replays since reset")),
                (("pci", "replay_counter"),)),
    "recovery": ((("GPU Recovery Action",),), (("gpu_recovery_action",),)),
    "fabric_state": ((("Fabric", "State"),), (("fabric", "state"),)),
    "fabric_status": ((("Fabric", "Status"),), (("fabric", "status"),)),
    "fabric_summary": ((("Fabric", "Health", "Summary"),), (("fabric", "health", "summary"),)),
}
# the fabric health flags under Fabric > Health (drivers from 550), by their key as -q prints
# it (lower case, "_" for spaces, as the XML's tags), with the problem each names in NVML's
# words (probes.nvml_health.FABRIC_HEALTH_BITS): a flag is a problem when "True"
_FABRIC_FLAGS = {
    "route_recovery_in_progress": "Route Recovery In Progress",
    "route_unhealthy": "Route Unhealthy",
    "access_timeout_recovery": "Access Timeout Recovery In Progress",
    "access_timeout_recovery_in_progress": "Access Timeout Recovery In Progress",
}
# ECC counters: (text names, xml names) under ECC Errors / Volatile|Aggregate
_UNC = (("SRAM Uncorrectable", "SRAM Uncorrectable Parity", "SRAM Uncorrectable SEC-DED",
         "DRAM Uncorrectable"),
        ("sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
         "dram_uncorrectable"))
_CORR = (("SRAM Correctable", "DRAM Correctable"), ("sram_correctable", "dram_correctable"))


@dataclass
class _Gpu:
    node: _Node
    xml: bool

    def raw(self, name: str) -> str | None:
        for path in _FIELDS[name][1 if self.xml else 0]:
            found = self.node.find(*path)
            if found is not None and found.value is not None:
                return found.value
            parent = self.node.find(*path[:-1]) if len(path) > 1 else None
            if parent is not None and not parent.children and parent.value:
                return parent.value  # "Remapped Rows : N/A" stands for every field under it
        return None

    def _get(self, name: str, what: str) -> str | Unavailable:
        raw = self.raw(name)
        if raw is None:
            return not_reported(f"{what} is not in the report")
        if raw.upper() == "N/A" or "deprecated" in raw or "Not Supported" in raw:
            return Unavailable(Reason.NOT_SUPPORTED, f"{what}: nvidia-smi shows {raw}")
        return raw

    def text(self, name: str, what: str) -> str | Unavailable:
        """A field as nvidia-smi prints it."""
        return self._get(name, what)

    def number(self, name: str, what: str) -> int | Unavailable:
        """A count, or MiB as bytes."""
        raw = self._get(name, what)
        n = _int(raw) if isinstance(raw, str) else None
        return raw if isinstance(raw, Unavailable) else n if n is not None else not_reported(
            f"{what}: nvidia-smi shows {raw!r}")

    def watts(self, name: str, what: str) -> float | Unavailable:
        """"59.77 W" as watts."""
        raw = self._get(name, what)
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*W", raw.strip()) if isinstance(raw, str) else None
        return raw if isinstance(raw, Unavailable) else float(m[1]) if m else not_reported(
            f"{what}: nvidia-smi shows {raw!r}")

    def flag(self, name: str, what: str) -> bool | Unavailable:
        """Yes/No, Enabled/Disabled."""
        raw = self._get(name, what)
        b = _yes(raw) if isinstance(raw, str) else None
        return raw if isinstance(raw, Unavailable) else b if b is not None else not_reported(
            f"{what}: nvidia-smi shows {raw!r}")


def _int(raw: str) -> int | None:
    m = re.fullmatch(r"(\d+)(?:\s*(MiB|C|x))?", raw.strip())  # "42", "80 MiB", "45 C", "16x"
    return (int(m[1]) << 20 if m[2] == "MiB" else int(m[1])) if m else None


def _yes(raw: str) -> bool | None:
    return {"yes": True, "no": False, "enabled": True, "disabled": False}.get(raw.lower())


def _ecc_count(g: _Gpu, scope: str, names: tuple[Sequence[str], Sequence[str]],
               old: str, what: str) -> int | Unavailable:
    """Sum the ECC counters of a scope ("Volatile"/"Aggregate"); older drivers: one total."""
    base = g.node.find("ecc_errors", scope.lower()) if g.xml else g.node.find("ECC Errors", scope)
    if base is None:
        return not_reported(f"{what} is not in the report")
    keys = names[1] if g.xml else names[0]
    raws = [n.value for n in base.children if n.key in keys and n.value is not None]
    if not raws:  # "Double Bit" / "Single Bit" → "Total" (pre-Ampere drivers)
        total = base.find(old.lower().replace(" ", "_"), "total") if g.xml else base.find(
            old, "Total")
        raws = [total.value] if total is not None and total.value is not None else []
    if not raws:
        return not_reported(f"{what} is not in the report")
    if all(r.upper() == "N/A" for r in raws):
        return Unavailable(Reason.NOT_SUPPORTED, f"{what}: nvidia-smi shows N/A (no ECC)")
    counts = [_int(r) for r in raws if r.upper() != "N/A"]
    return sum(c for c in counts if c is not None)


def _clock_events(g: _Gpu) -> tuple[tuple[str, ...], bool] | Unavailable:
    """The active clock-event reasons but Idle, and whether Idle is active."""
    names = (("clocks_event_reasons",), ("clocks_throttle_reasons",)) if g.xml else (
        ("Clocks Event Reasons",), ("Clocks Throttle Reasons",))
    node = next((n for path in names if (n := g.node.find(*path)) is not None), None)
    if node is None:
        return not_reported("the clock-event reasons are not in the report")
    active = []
    idle = False
    for n in _walk(node):
        if (n.value or "").lower() == "active":
            words = re.sub(r"^clocks_(?:event|throttle)_reason_", "", n.key).split("_")
            label = " ".join(w.upper() if w.lower() in ("hw", "sw", "gpu") else w[:1].upper()
                             + w[1:] for w in " ".join(words).split())  # as -q's text spells it
            if label.lower() in ("idle", "gpu idle"):
                idle = True
            else:
                active.append(label)
    return tuple(active), idle


def _walk(node: _Node) -> list[_Node]:
    return [n for c in node.children for n in (c, *_walk(c))]


def _health(g: _Gpu) -> GpuHealth:
    events = _clock_events(g)
    return GpuHealth(
        ecc_mode_pending=g.text("ecc_pending", "the pending ECC mode"),
        temperature=g.number("temp", "the GPU temperature"),
        temperature_slowdown=g.number("temp_slow", "the slowdown temperature"),
        temperature_shutdown=g.number("temp_shut", "the shutdown temperature"),
        power_draw=g.watts("power", "the power draw"),
        power_limit=g.watts("power_limit", "the power limit"),
        pcie_gen=g.number("pcie_gen", "the PCIe generation"),
        pcie_gen_max=g.number("pcie_gen_max", "the maximum PCIe generation"),
        pcie_width=g.number("pcie_width", "the PCIe link width"),
        pcie_width_max=g.number("pcie_width_max", "the maximum PCIe link width"),
        pcie_replays=g.number("replays", "the PCIe replay counter"),
        gpu_idle=events if isinstance(events, Unavailable) else events[1],
        ecc_mode=g.text("ecc_mode", "ECC mode"),
        ecc_volatile_uncorrectable=_ecc_count(g, "Volatile", _UNC, "Double Bit",
                                              "volatile uncorrectable ECC errors"),
        ecc_aggregate_uncorrectable=_ecc_count(g, "Aggregate", _UNC, "Double Bit",
                                               "aggregate uncorrectable ECC errors"),
        ecc_volatile_correctable=_ecc_count(g, "Volatile", _CORR, "Single Bit",
                                            "volatile correctable ECC errors"),
        ecc_aggregate_correctable=_ecc_count(g, "Aggregate", _CORR, "Single Bit",
                                             "aggregate correctable ECC errors"),
        retired_pages_single_bit=g.number("retired_sbe", "pages retired for single-bit ECC "
                                          "errors"),
        retired_pages_double_bit=g.number("retired_dbe", "pages retired for double-bit ECC "
                                          "errors"),
        retired_pages_pending=g.flag("retired_pending", "a pending page retirement"),
        remapped_rows_correctable=g.number("remap_corr", "rows remapped for correctable errors"),
        remapped_rows_uncorrectable=g.number("remap_unc", "rows remapped for uncorrectable "
                                             "errors"),
        remapped_rows_pending=g.flag("remap_pending", "a pending row remap"),
        remapped_rows_failure=g.flag("remap_failure", "a failed row remap"),
        clock_events=events if isinstance(events, Unavailable) else events[0],
        recovery_action=g.text("recovery", "the GPU recovery action"),
        fabric_state=g.text("fabric_state", "the NVSwitch fabric state"),
        fabric_status=g.text("fabric_status", "the NVSwitch fabric status"),
        fabric_health=_fabric_health(g),
        fabric_health_summary=g.text("fabric_summary", "the NVSwitch fabric's health summary"),
        processes=_processes(g),
    )


def _fabric_health(g: _Gpu) -> tuple[str, ...] | Unavailable:
    """The problems the Fabric > Health flags name (empty: none); NOT_REPORTED without them."""
    node = g.node.find("fabric", "health") if g.xml else g.node.find("Fabric", "Health")
    if node is None or not node.children:
        return not_reported("the NVSwitch fabric's health flags are not in the report")
    found: list[str] = []
    for c in node.children:
        key = re.sub(r"\W+", "_", c.key.strip().lower())
        value = (c.value or "").strip()
        if key == "bandwidth" and value.lower() not in ("", "full", "n/a"):
            found.append("Degraded Bandwidth")
        elif key in _FABRIC_FLAGS and value.lower() == "true":
            found.append(_FABRIC_FLAGS[key])
        elif key == "incorrect_configuration" and value.lower() not in (
                "", "none", "n/a", "false", "not supported"):
            found.append(f"Incorrect Configuration: {value[:60]}")
    return tuple(dict.fromkeys(found))


def _processes(g: _Gpu) -> tuple[GpuProcess, ...] | Unavailable:
    """The Processes section: "None", or per process its pid, type, name and used memory (the
    text output repeats the keys under one "Processes" node; the XML has a process_info each)."""
    node = g.node.find("processes" if g.xml else "Processes")
    if node is None:
        return not_reported("the GPU's processes are not in the report")
    if g.xml:
        rows = [{c.key: c.value or "" for c in p.children} for p in node.children
                if p.key == "process_info"]
    else:
        rows = []
        for c in node.children:  # "Process ID" starts a process; its fields follow or nest
            if c.key == "Process ID":
                rows.append({c.key: c.value or ""})
            if rows:
                rows[-1].update({n.key: n.value or "" for n in (c, *c.children)})
    found = []
    for row in rows:
        pid = _int(row.get("pid", row.get("Process ID", "")))
        if pid is None:
            continue
        used = _int(row.get("used_memory", row.get("Used GPU Memory", "")))
        found.append(GpuProcess(
            pid, row.get("process_name", row.get("Name", "")) or f"pid {pid}",
            used if used is not None else Unavailable(
                Reason.NOT_SUPPORTED, "nvidia-smi does not show this process's memory"),
            row.get("type", row.get("Type", "C")) or "C"))
    return tuple(found)


def _gpu_facts(index: int, g: _Gpu) -> GpuFacts | Unavailable:
    """The GPU as -q shows it; Unavailable where NVML's answer to its name or brand is
    "Unknown Error" (nvmlErrorString of NVML_ERROR_UNKNOWN, where a GPU that answers gives its
    product): the GPU does not answer NVML. Other fields may read "Unknown Error" on a healthy
    GPU (Addressing Mode on drivers that do not report it), and are not taken for it."""
    failed = [key for key in ("name", "brand")
              if (g.raw(key) or "").strip().lower() == "unknown error"]
    if failed:
        bus = g.raw("bus") or f"#{index}"
        return Unavailable(Reason.ERROR, f"GPU {bus}: NVML answers 'Unknown Error' for its "
                           f"{' and '.join(failed)} (nvidia-smi -q): the GPU does not answer "
                           "(a failing or lost GPU, or its firmware: the kernel log's Xids "
                           "say which)")
    return GpuFacts(
        index=index,
        name=g.raw("name") or "(name not in the report)",
        uuid=g.text("uuid", "the GPU's UUID"),
        compute_capability=not_reported("the compute capability is not in nvidia-smi -q"),
        memory_total=g.number("total", "the GPU's memory"),
        memory_free=g.number("free", "the GPU's free memory"),
        pci_bus_id=g.text("bus", "the GPU's bus id"),
        persistence_mode=g.flag("persistence", "persistence mode"),
        mig_mode=g.flag("mig", "MIG mode"),
        health=_health(g),
        compute_mode=g.text("compute_mode", "the compute mode"),
    )


# the sections and fields of one GPU in `-q`'s text (the first key of each of its paths): a
# fragment's GPUs are told apart by them
_GPU_KEYS = frozenset({path[0].lower() for text_paths, _ in _FIELDS.values()
                       for path in text_paths} | {"ecc errors", "clocks event reasons",
                                                  "clocks throttle reasons", "processes"})


def _fragment_gpus(tree: _Node) -> list[_Node]:
    """A fragment's sections, grouped into GPUs: in order, a new GPU where a section repeats
    (the next GPU's); a section nested under prose (a `# nvidia-smi -q | grep` line) counts."""
    found = []
    stack = list(reversed(tree.children))
    while stack:
        node = stack.pop()
        if node.key.lower() in _GPU_KEYS:
            found.append(node)
        else:
            stack += reversed(node.children)
    gpus: list[_Node] = []
    for node in found:
        if not gpus or gpus[-1].find(node.key) is not None:
            gpus.append(_Node(f"GPU {len(gpus)}", None, []))
        gpus[-1].children.append(node)
    return gpus


def parse_fragment(text: str) -> Partial | None:
    """Sections of `-q` pasted alone (`nvidia-smi -q | grep -A4 Fabric`, a comment quoting the
    clock-event reasons): the GPUs they belong to, in order, with what the sections state
    (nvidia-smi printed them: the driver answers); every other fact NOT_REPORTED. None: no
    section states anything (a line "Fabric" in prose)."""
    gpus = [g for g in _fragment_gpus(_text_tree(text)) if any(
        c.value is not None or c.children for c in g.children)][:MOST_GPUS]
    if not gpus or not any(_has_facts(g) for g in gpus):
        return None
    return _sections_alone(gpus, False, "is not in the report (sections of nvidia-smi -q alone)")


def parse_xml_fragment(text: str) -> Partial | None:
    """A piece of `-q -x` without its root: one GPU's elements (nvidia-smi printed them: the
    driver answers), every other fact NOT_REPORTED. Closing tags whose opening the paste cut
    off are dropped, and the elements still open where it ends are closed; None when no
    element states a value."""
    start = FRAGMENT_XML.search(text)
    if start is None or "<!ENTITY" in text or "<nvidia_smi_log" in text:
        return None
    body = text[start.start():]
    body = body[:body.rfind(">") + 1]  # a tag cut mid-way is not read
    kept, stack, last = [], [], 0
    for m in _TAG.finditer(body):
        kept.append(body[last:m.start()])
        last = m.end()
        if m[3]:  # <empty/>
            kept.append(m[0])
        elif not m[1]:
            stack.append(m[2])
            kept.append(m[0])
            if len(stack) > DEEPEST:
                return None  # nested deeper than nvidia-smi writes: not its output
        elif stack and stack[-1] == m[2]:
            stack.pop()
            kept.append(m[0])
        # else: the closing of an element whose start was cut off: dropped
    kept.append(body[last:])
    xml = ("<nvidia_smi_log><gpu>" + "".join(kept) + "".join(f"</{t}>" for t in reversed(stack))
           + "</gpu></nvidia_smi_log>")
    tree = _xml_tree(xml)
    gpu = tree.find("gpu") if tree is not None else None
    if gpu is None or not _has_facts(gpu):
        return None
    return _sections_alone([gpu], True, "is not in the report (a piece of nvidia-smi -q -x alone)")


def _has_facts(gpu: _Node) -> bool:
    """Whether a fragment's GPU states a value under its sections (not headings alone)."""
    return any(n.value for n in _walk(gpu))


def _without_header(gpu_nodes: list[_Node], xml: bool, kind: str) -> Partial:
    """A whole `-q -x` (or `-q`) whose driver lines were cut away (a test fixture trimmed to one
    GPU, `nvidia_smi_log` holding only `gpu`): read as its sections alone, like a fragment
    (nvidia-smi printed them: the driver answers); nothing when no GPU states a value."""
    gpus = [g for g in gpu_nodes if _has_facts(g)]
    if not gpus:
        return Partial(kind=kind, rank=5, complete=False)
    return _sections_alone(gpus, xml, f"is not in the report ({kind} without its driver lines)")


def _sections_alone(gpus: list[_Node], xml: bool, why: str) -> Partial:
    """GPUs of `-q` (or `-q -x`) read without its driver lines, in order: what their sections
    state (nvidia-smi printed them: the driver answers), every other fact NOT_REPORTED(<fact>
    `why`)."""
    return Partial(kind=Q_SECTIONS, rank=5, nvml=stated_driver(
        Q_SECTIONS, why, tuple(_gpu_facts(i, _Gpu(g, xml)) for i, g in enumerate(gpus))))


def parse(text: str, xml: bool) -> Partial:
    """The facts of one `nvidia-smi -q` (xml=False) or `-q -x` (xml=True) block (its first
    MOST_GPUS GPUs: more is more than one machine's)."""
    tree = _xml_tree(text) if xml else _text_tree(text)
    kind = "nvidia-smi -q -x" if xml else "nvidia-smi -q"
    if tree is None:
        return Partial(kind=kind, rank=5, complete=False)
    if xml:
        gpu_nodes = [c for c in tree.children if c.key == "gpu"]
        top = tree
        complete = "</nvidia_smi_log>" in text
    else:
        gpu_nodes = [c for c in tree.children if c.key.startswith("GPU ") and c.children]
        top = tree
        complete = bool(gpu_nodes) and gpu_nodes[-1].find("Processes") is not None
    gpu_nodes = gpu_nodes[:MOST_GPUS]
    driver_node = top.find("driver_version" if xml else "Driver Version")
    cuda_node = top.find("cuda_version" if xml else "CUDA Version")
    if driver_node is None or not driver_node.value:
        return _without_header(gpu_nodes, xml, kind)
    gpus = []
    for i, node in enumerate(gpu_nodes):
        if not xml and node.find("PCI", "Bus Id") is None:
            node.children.append(_Node("PCI", None, [_Node("Bus Id", node.key[4:].strip())]))
        gpus.append(_gpu_facts(i, _Gpu(node, xml)))
    cuda = (encode_cuda_version(cuda_node.value) if cuda_node is not None and cuda_node.value
            else None)
    nvml = NvmlFacts(
        driver_version=driver_node.value,
        cuda_driver_version=cuda if cuda is not None else not_reported(
            "the highest CUDA the driver runs is not in the report (nvidia-smi before driver "
            "410 does not print it)"),
        nvml_version=not_reported("the NVML version is not in nvidia-smi -q"),
        binding=f"nvidia-smi {'-q -x' if xml else '-q'}",
        gpus=tuple(gpus),
    )
    return Partial(kind=kind, rank=5, complete=complete, nvml=nvml)
