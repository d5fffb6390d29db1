"""`nvidia-smi --query-gpu=FIELDS --format=csv`: one line per GPU, the fields asked for.

    $ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
    name, driver_version, compute_cap
    NVIDIA B200, 580.126.09, 10.0

With `noheader` only the rows are printed, so the fields are the command line's; with the
header, the header names them (with units, "memory.total [MiB]", unless `nounits`). Every GPU
is listed unless `-i`/`--id` chose some. The fields read: index, name, driver_version,
compute_cap, uuid, pci.bus_id, memory.total, memory.free, persistence_mode; what the query did
not ask for stays Unavailable(NOT_REPORTED). A value nvidia-smi could not read ("[N/A]",
"[Not Supported]", "[Unknown Error]") is not a value.

Sources: `nvidia-smi --help-query-gpu` (the field names), https://docs.nvidia.com/deploy/
nvidia-smi/index.html
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import GpuFacts
from gpudoctor.reports.interface import MOST_GPUS, QUERY_SOME, Partial, named_gpu, stated_driver

# the fields `nvidia-smi --help-query-gpu` lists, by name or family (memory.total, clocks.sm …)
_FIELD = (r"(?:index|count|timestamp|name|serial|uuid|driver_version|vbios_version|compute_cap|"
          r"compute_mode|persistence_mode|pstate|addressing_mode|display_\w{1,20}|gpu_\w{1,20}|"
          r"vgpu_\w{1,20}|(?:fan|pci|pcie|memory|temperature|utilization|power|clocks\w{0,20}|"
          r"mig|ecc|retired_pages|remapped_rows|enforced|accounting|inforom|gom|driver_model|"
          r"encoder|reset_status|fabric|platform|protected_memory)(?:\.[a-z_]{1,30}){1,3})")
_HEADER_FIELD = rf"{_FIELD}(?: \[[^\]\n]{{1,12}}\])?"
# the header line: two fields or more, one of those this reader reads among them
HEADER = re.compile(rf"^[ \t]*(?=[^\n]*\b(?:name|driver_version|compute_cap|pci\.bus_id)\b)"
                    rf"({_HEADER_FIELD}(?:, {_HEADER_FIELD})+)[ \t]*$", re.MULTILINE)
COMMAND = re.compile(r"nvidia-smi\b[^\n]{0,200}?--query-gpu[= ]([\w.,]{2,400})([^\n]*)")
START = re.compile(rf"{HEADER.pattern}|{COMMAND.pattern}", re.MULTILINE)
_NOT_A_VALUE = re.compile(r"\A\[[^\]]{1,40}\]\Z|\AN/A\Z")
_SIZE = re.compile(r"\A(\d{1,9})(?: MiB)?\Z")
_CC = re.compile(r"\A(\d{1,2})\.(\d)\Z")


def parse(text: str) -> Partial | None:
    """The GPUs of a `--query-gpu` block; None when no row matches its fields."""
    command = COMMAND.search(text)
    header = HEADER.search(text)
    if header is not None and (command is None or header.start() > command.start()):
        fields = [re.sub(r" \[.*\]\Z", "", f) for f in header[1].split(", ")]
        start = header.end()
    elif command is not None and "noheader" in command[2]:
        fields = [f for f in command[1].split(",") if f]
        start = command.end()
    else:
        return None
    rows: list[dict[str, str]] = []
    for line in text[start:].splitlines():
        if not line.strip():
            if rows:
                break  # the rows end at the first blank line after them
            continue
        cells = [c.strip() for c in line.strip().split(", ")]
        if len(cells) != len(fields) or not _a_row(row := dict(zip(fields, cells,
                                                                      strict=True))):
            break
        rows.append(row)
        if len(rows) == MOST_GPUS:
            break  # more than one machine's GPUs: the rest is not read
    if not rows or "name" not in fields:
        return None
    why = "is not in the report (nvidia-smi --query-gpu printed only the fields it was asked for)"
    gpus = tuple(_gpu(i, row, why) for i, row in enumerate(rows))
    drivers = {row.get("driver_version", "") for row in rows} - {""}
    driver = next(iter(drivers)) if len(drivers) == 1 and _DRIVER.match(
        next(iter(drivers))) else None
    some = command is not None and re.search(r"(?:^|\s)(?:-i|--id)[= ]", command[2])
    binding = QUERY_SOME if some else "nvidia-smi --query-gpu"
    return Partial(kind="nvidia-smi --query-gpu", rank=4,
                   nvml=stated_driver(binding, why, gpus, driver))


_DRIVER = re.compile(r"\A\d{2,3}\.\d{1,3}(?:\.\d{1,3})?\Z")
# a field's value as nvidia-smi prints it, for the fields that tell a row from other text
_FORMS = (("name", re.compile(r"\A[A-Za-z][\w .()/+-]{1,60}\Z")), ("driver_version", _DRIVER),
          ("index", re.compile(r"\A\d{1,3}\Z")))


def _a_row(row: dict[str, str]) -> bool:
    """A line of the query's output, not the next command or prose: a GPU's name, a driver's
    version, an index, each as nvidia-smi prints them (or a value it could not read)."""
    return all(field not in row or form.match(row[field]) or _NOT_A_VALUE.match(row[field])
               for field, form in _FORMS)


def _value(row: dict[str, str], field: str) -> str | None:
    value = row.get(field)
    return None if value is None or not value or _NOT_A_VALUE.match(value) else value


def _gpu(position: int, row: dict[str, str], why: str) -> GpuFacts:
    index = _value(row, "index")
    cc = _CC.match(_value(row, "compute_cap") or "")
    gpu = named_gpu(int(index) if index and index.isdigit() else position,
                    _value(row, "name") or "(name not read)", why,
                    uuid=_value(row, "uuid"),
                    compute_capability=f"{cc[1]}.{cc[2]}" if cc else None)
    facts: dict[str, object] = {}
    for field, key in (("memory.total", "memory_total"), ("memory.free", "memory_free")):
        size = _SIZE.match(_value(row, field) or "")
        if size:
            facts[key] = int(size[1]) * 1024 * 1024
    if bus := _value(row, "pci.bus_id"):
        facts["pci_bus_id"] = bus
    persistence = _value(row, "persistence_mode")
    if persistence in ("Enabled", "Disabled"):
        facts["persistence_mode"] = persistence == "Enabled"
    return replace(gpu, **facts)  # type: ignore[arg-type]
