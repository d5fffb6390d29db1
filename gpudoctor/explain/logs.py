"""Log lines of the driver, NCCL and the container stack, decoded through their enumerations.

- `NVRM: Xid (PCI:...): N` (and `Xid N` as tools quote it) → NVIDIA's Xid catalog: what N
  means, its immediate and investigatory actions, and its cause class (most Xids are hardware;
  13, 31, 43 are usually the application's own fault, as the catalog says).
- `nvidia-nvswitch: SXid (PCI:...): N` → the NVSwitch error of that number.
- `NVRM: ...` messages → the kernel module's own messages (API mismatch, fallen off the bus,
  RmInitAdapter failed, another driver owns the GPU …), matched by their longest fixed text,
  whatever the driver release wrapped them into (dmesg, syslog's `#012`).
- `NCCL WARN ...` / NCCL's `Last error:` → NCCL's WARN messages, by source family.
- `nvidia-container-cli: <stage> error: <detail>` and the container toolkit's own errors.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.explain.catalog import Message, XidEntry, load_catalog
from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.decode import Decoded
from gpudoctor.explain.derive import derived, found, hits, slug
from gpudoctor.explain.match import Match

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

_XID = re.compile(r"\bXid\s*(?:\((?:PCI:)?[0-9a-fA-F:.]{4,20}\))?\s*[:,]?\s*(?P<n>\d{1,3})\b",
                  re.I)
_SXID = re.compile(r"\bSXid\s*\((?:PCI:)?[0-9a-fA-F:.]{4,20}\)\s*:\s*(?P<n>\d{5})\b", re.I)
_CLI = re.compile(r"nvidia-container-cli(?:\.real)?:\s*(?P<stage>[a-z]+) error:\s*"
                  r"(?P<detail>[^\n]{0,300})")
_CUDA_REQ = re.compile(r"cuda\s*>=?\s*(?P<v>\d+\.\d+)")
_LINES = 64  # log lines read per source, at most
MIN_FRAGMENT = 12


def log_matches(text: str, lowered: str, tables: Tables) -> list[Match]:
    """The diagnoses of every driver, NCCL and container log line the text holds."""
    out: list[Match] = []
    if "xid" in lowered:
        out += _xids(text)
    if "nvrm" in lowered:
        out += _messages(text, lowered, "nvrm", ("nvrm:",))
    if "nccl" in lowered or " warn " in lowered:
        out += _messages(text, lowered, "nccl_warnings", ("warn ", "last error:"))
    if "nvidia-container" in lowered or "nvidia-ctk" in lowered or "cdi" in lowered:
        out += _container(text)
        out += _messages(text, lowered, "container_toolkit",
                         ("nvidia-container", "nvidia-ctk", "nvidia-cdi", "cdi"))
    return out


def _xids(text: str) -> list[Match]:
    cat = load_catalog()
    seen: dict[str, Match] = {}
    for pattern, table, switch in ((_SXID, cat.sxids, True), (_XID, cat.xids, False)):
        for m in hits(pattern, text):
            n = int(m["n"])
            key = f"{'s' if switch else ''}xid-{n}"
            if key in seen or (not switch and text[max(0, m.start() - 1):m.start()] in "sS"):
                continue
            entry = table.get(n)
            seen[key] = _xid_match(key, n, entry, switch, m)
    return list(seen.values())


def _xid_match(key: str, n: int, entry: XidEntry | None, switch: bool,
               m: re.Match[str]) -> Match:
    kind = "SXid" if switch else "Xid"
    if entry is None:
        sig = derived(key, f"{kind} {n}", "hardware", "hardware-fault",
                      f"The NVIDIA driver logged {kind} {n}, which is not in the catalog "
                      "gpudoctor holds (a newer driver's).",
                      "look it up in NVIDIA's Xid catalog; check the GPU: nvidia-smi -q",
                      ("https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",))
        return found(sig, m)
    cls = CAUSE_CLASSES[entry.cause_class]
    unused = (" (NVIDIA's catalog marks it unused on Ampere and later GPUs)"
              if entry.description == "Unused" else "")
    cause = (f"The NVIDIA driver logged {kind} {n} ({entry.mnemonic}): "
             f"{entry.description}{unused}. The cause it points to: {cls.meaning}.")
    fix = f"{entry.immediate}; if it recurs: {entry.investigate}"
    if entry.cause_class == "hardware-fault":
        fix += "; check the GPU: nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER"
    priority = -2 if entry.weak else 1 if entry.cause_class == "hardware-fault" else 0
    sig = derived(key, f"{kind} {n}: {entry.description}", "hardware", entry.cause_class,
                  cause, fix, (entry.source,), priority=priority)
    return found(sig, m, (Decoded("xid", "xid", str(n), f"{entry.mnemonic}: "
                                  f"{entry.description}", entry.immediate),))


def _stream(text: str, lowered: str, anchors: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """The log lines around each anchor: (start, end, normalised lower-case message)."""
    text = text.replace("#012", "\n   ") if "#012" in text else text  # syslog's newline
    out: list[tuple[int, int, str]] = []
    pos, last_end = 0, -1
    while len(out) < _LINES:
        hit = min((h for h in (lowered.find(a, pos) for a in anchors) if h >= 0), default=-1)
        if hit < 0:
            break
        start = text.rfind("\n", 0, hit) + 1
        end = start
        for _ in range(5):  # a message wrapped over up to five lines
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
        if start >= last_end:
            chunk = re.sub(r"\[\s*[\d.]+\]|NVRM:|NCCL WARN|\bWARN\b", " ", text[start:end])
            out.append((start, end, " ".join(chunk.split()).lower()))
            last_end = end
        pos = text.find("\n", hit) + 1 if text.find("\n", hit) >= 0 else len(text)
    return out


# NCCL's own log lines: "misc/socket.cc:71 NCCL WARN ...", older "include/socket.h:344 WARN ..."
_NCCL_WARN = re.compile(r"(?:\b(?:include|misc|transport|graph|plugin|os|proxy|bootstrap|init|"
                        r"enqueue|net)\b[\w/]{0,40}\.(?:h|cc|cu):\d+ (?:NCCL )?WARN|NCCL WARN) "
                        r"(?P<msg>[^\n]{3,200})")


def _messages(text: str, lowered: str, kind: str, anchors: tuple[str, ...]) -> list[Match]:
    entries = [e for e in load_catalog().messages[kind] if len(e.fragment) >= MIN_FRAGMENT]
    seen: dict[str, Match] = {}
    for start, end, msg in _stream(text, lowered, anchors):
        best: Message | None = None
        for e in entries:
            if e.fragment in msg and (best is None or len(e.fragment) > len(best.fragment)):
                best = e
        if best is not None and best.template not in seen:
            seen[best.template] = _message_match(best, (start, end, text[start:end]))
    if kind == "nccl_warnings" and not seen:  # a WARN of another NCCL release than the one read
        for m in hits(_NCCL_WARN, text):
            if "cuda failure" in m["msg"].lower():
                continue
            sig = derived("nccl-warning", "NCCL warning", "nccl", "nccl-setup",
                          f"NCCL warned: \"{m['msg'].strip()}\" (a message of another NCCL "
                          "release than the one gpudoctor read). NCCL fails for an environment "
                          "reason: its network, P2P or shared-memory transport.",
                          CAUSE_CLASSES["nccl-setup"].fix,
                          ("https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/"
                           "troubleshooting.html",))
            return [found(sig, m)]
    return list(seen.values())


_WHAT = {"nvrm": ("the NVIDIA kernel module (NVRM)", "driver"),
         "nccl_warnings": ("NCCL", "nccl"),
         "container_toolkit": ("the NVIDIA Container Toolkit", "container"),
         "libnvidia_container": ("nvidia-container-cli", "container")}


def _message_match(e: Message, span: tuple[int, int, str]) -> Match:
    who, family = _WHAT[e.kind]
    cls = CAUSE_CLASSES[e.cause_class]
    cause = f"{who} says: \"{e.template}\". The cause it points to: {cls.meaning}."
    source = {"nvrm": "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/",
              "nccl_warnings": "https://github.com/NVIDIA/nccl/blob/5067397c/",
              "container_toolkit": "https://github.com/NVIDIA/nvidia-container-toolkit/blob/"
                                   "d34b3046/"}.get(e.kind, "")
    where = e.where if e.where.startswith("https://") else source + e.where
    sig = derived(f"{e.kind.replace('_', '-')}-{slug(e.fragment)}",
                  f"{who}: {e.fragment[:60]}", family, e.cause_class, cause, cls.fix, (where,),
                  priority=-2 if e.weak else 1 if e.cause_class != "other-environment" else 0)
    return found(sig, span)


def _container(text: str) -> list[Match]:
    cat = load_catalog()
    details = cat.messages["libnvidia_container"]
    out: dict[str, Match] = {}
    for m in hits(_CLI, text):
        stage, detail = m["stage"], m["detail"].lower()
        what = cat.container_stages.get(stage)
        if what is None:
            continue
        hit = next((d for d in details if d.fragment and d.fragment in detail), None)
        cls_name = hit.cause_class if hit else "container-gpu-setup"
        caps: tuple[Decoded, ...] = ()
        req = _CUDA_REQ.search(detail)
        if req and cls_name == "driver-too-old":
            caps = (Decoded("requires", "text", f"cuda>={req['v']}",
                            f"the image needs a driver that runs CUDA {req['v']}"),)
        cls = CAUSE_CLASSES[cls_name]
        cause = (f"nvidia-container-cli failed at its {stage} step ({what}): "
                 f"\"{m['detail'].strip()}\". The cause it points to: {cls.meaning}.")
        fix = cls.fix
        if cls_name == "driver-too-old" and req:
            fix = (f"update the host's NVIDIA driver to one that runs CUDA {req['v']}, or use an "
                   "image built for an older CUDA (NVIDIA_DISABLE_REQUIRE=true skips the check "
                   "where the forward-compatibility package applies)")
        elif stage == "mount" and "file exists" in detail:
            fix = ("remove the NVIDIA driver libraries the image itself installs (libnvidia-*, "
                   "nvidia-utils): the toolkit mounts the host's into the container")
        sig = derived(f"container-cli-{stage}", f"nvidia-container-cli: {stage} error",
                      "container", cls_name, cause, fix,
                      ("https://github.com/NVIDIA/libnvidia-container/blob/09df17a2424704c1e4a"
                       "f310d3ce51fe475ba292a/src/cli/configure.c",), priority=1)
        out.setdefault(stage, found(sig, m, caps))
    return list(out.values())
