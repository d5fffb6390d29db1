"""Log lines of the driver, NCCL and the container stack, decoded through their enumerations.

- `NVRM: Xid (PCI:...): N` (and `Xid N` as tools quote it) → NVIDIA's Xid catalog: what N
  means, its immediate and investigatory actions, and its cause class (most Xids are hardware;
  13, 31, 43 are usually the application's own fault, as the catalog says).
- `nvidia-nvswitch: SXid (PCI:...): N` → the NVSwitch error of that number.
- `NVRM: ...` messages → the kernel module's own messages (API mismatch, fallen off the bus,
  RmInitAdapter failed, another driver owns the GPU …), matched by their longest fixed text,
  whatever the driver release wrapped them into (dmesg, syslog's `#012`).
- `NCCL WARN ...` / NCCL's `Last error:` / XLA's "Last NCCL warning(error)" → NCCL's WARN
  messages, by source family.
- `nvidia-container-cli: <stage> error: <detail>` and the container toolkit's own errors.
- `NV_ERR_*` / `NV_WARN_*` (the status an NVRM call returned) → the kernel module's NV_STATUS
  codes: the few that name a cause (a GPU lost or needing a reset, ECC, NVLink, Fabric Manager)
  rank as causes, the rest as detail.
- NCCL's `Cuda failure 'named symbol not found'` (or another no-kernel-for-this-GPU message):
  NCCL looks up its own kernels when it initialises, so its build lacks this GPU's architecture.
- A `docker run` / `podman run` command line (its lines ending in a backslash joined) that
  gives the container no GPU (no `--gpus`, `--runtime nvidia`, `--device nvidia.com/gpu=…` or
  `/dev/nvidia…`, NVIDIA_VISIBLE_DEVICES), in a text whose program then finds no GPU
  (`match.find_matches` asks `run_without_gpus`): the container was started without one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.explain.catalog import Message, XidEntry, load_catalog
from gpudoctor.explain.classes import CAUSE_CLASSES
from gpudoctor.explain.decode import Decoded
from gpudoctor.explain.found import Match, derived, found, hits, kebab, slug

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

# the PCI address as the kernel prints it, or redacted by whoever pasted it ("PCI:...",
# "PCI:xxxx:xx:00")
_ADDRESS = r"\((?:PCI:)?(?:[0-9a-fA-F:.]{4,20}|[0-9a-fA-FxX:.*…]{1,20})\)"
_XID = re.compile(rf"\bXid\s{{0,8}}(?:{_ADDRESS})?\s{{0,8}}[:,]?\s{{0,8}}(?P<n>\d{{1,3}})\b", re.I)
_SXID = re.compile(rf"\bSXid\s{{0,8}}{_ADDRESS}\s{{0,8}}:\s{{0,8}}(?P<n>\d{{5}})\b", re.I)
_CLI = re.compile(r"nvidia-container-cli(?:\.real)?:\s{0,8}(?P<stage>[a-z]+) error:\s{0,8}"
                  r"(?P<detail>[^\n]{0,300})")
_CUDA_REQ = re.compile(r"cuda\s{0,8}>=?\s{0,8}(?P<v>\d+\.\d+)")
_NV_STATUS = re.compile(r"\b(NV_(?:ERR|WARN)_[A-Z0-9_]{2,60})\b")
_NCCL_CUDA_FAILURE = re.compile(r"NCCL WARN Cuda failure(?: \d{1,4})? '(?P<msg>[^'\n]{3,120})'")
# what the CUDA runtime says when a module has no code for the device (cudaErrorSymbolNotFound
# is what a kernel lookup in a fat binary without this architecture returns on recent drivers)
_NO_KERNEL = ("named symbol not found", "invalid device function",
              "no kernel image is available for execution on the device",
              "device kernel image is invalid")
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
        # (XLA and JAX quote the last one as "Last NCCL warning(error) …: '<message>'")
        out += _messages(text, lowered, "nccl_warnings", ("warn ", "last error:",
                                                          "last nccl warning"))
    if "nv_err_" in lowered or "nv_warn_" in lowered:
        out += _nv_status(text)
    if "cuda failure" in lowered and "nccl" in lowered:
        out += _nccl_kernels(text)
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


def _nv_status(text: str) -> list[Match]:
    statuses = load_catalog().nv_status
    seen: dict[str, Match] = {}
    for m in hits(_NV_STATUS, text):
        code = statuses.get(m[1])
        if code is None or code.name in seen:
            continue
        cls = CAUSE_CLASSES[code.cause_class]
        said = (f"The NVIDIA kernel module returned {code.name} (0x{code.number:08x}, "
                f"\"{code.message}\")")
        if code.strong:
            cause, fix = f"{said}. The cause it points to: {cls.meaning}.", cls.fix
        else:
            cause = (f"{said}: the driver's own detail of a failing call, which names no cause "
                     "alone.")
            fix = ("read the kernel log around it (sudo dmesg | grep -iE 'nvrm|xid') for the "
                   "first NVRM error or Xid")
        sig = derived(f"nv-status-{kebab(code.name)}", f"NVRM: {code.name}", "driver",
                      code.cause_class, cause, fix, (code.source,),
                      priority=1 if code.strong else -2)
        lo = text.rfind("\n", 0, m.start()) + 1
        hi = text.find("\n", m.end())
        seen[code.name] = found(sig, (lo, m.end(), text[lo:hi if hi >= 0 else len(text)]))
    return list(seen.values())


def _nccl_kernels(text: str) -> list[Match]:
    for m in hits(_NCCL_CUDA_FAILURE, text):
        msg = m["msg"].strip().lower()
        if not any(msg.startswith(k) for k in _NO_KERNEL):
            continue
        sig = derived(
            "nccl-kernels-not-for-this-gpu", "NCCL has no kernels for this GPU", "nccl",
            "arch-not-in-build",
            f"NCCL failed with the CUDA error \"{m['msg']}\" where it looks up its own kernels "
            "(at initialisation, cudaFuncGetAttributes on every NCCL kernel): the NCCL build in "
            "use (a framework bundles its own) has no code for this GPU's architecture.",
            "install an NCCL (or the framework build that bundles it) made for a CUDA release "
            "that supports the GPU, e.g. a PyTorch built for CUDA 12.8 or later for a "
            "Blackwell GPU; check `python -c 'import torch; print(torch.cuda.nccl.version())'`",
            ("https://github.com/NVIDIA/nccl/blob/v2.14.3-1/src/enqueue.cc",), priority=1)
        return [found(sig, m)]
    return []


def _stream(text: str, lowered: str, anchors: tuple[str, ...],
            wrap: int = 5) -> list[tuple[int, int, str]]:
    """The log lines around each anchor: (start, end, normalised lower-case message). A message
    spans its anchor's line and the lines after it, up to `wrap` in all (the kernel module wraps
    its messages over lines that each begin with its prefix, so a window starts at every anchor
    line: a message may begin on any of them). NCCL prints one WARN per line, and "Last error:"
    on the line before its message: its windows are 2 lines."""
    text = text.replace("#012", "\n   ") if "#012" in text else text  # syslog's newline
    out: list[tuple[int, int, str]] = []
    pos, last_end = 0, -1
    while len(out) < _LINES:
        hit = min((h for h in (lowered.find(a, pos) for a in anchors) if h >= 0), default=-1)
        if hit < 0:
            break
        start = text.rfind("\n", 0, hit) + 1
        end = start
        for _ in range(wrap):
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
        if start >= last_end:
            chunk = re.sub(r"\[\s{0,8}[\d.]+\]|NVRM:|NCCL WARN|\bWARN\b", " ", text[start:end])
            out.append((start, end, " ".join(chunk.split()).lower()))
            last_end = text.find("\n", hit)
            last_end = len(text) if last_end < 0 else last_end
        pos = text.find("\n", hit) + 1 if text.find("\n", hit) >= 0 else len(text)
    return out


# NCCL's own log lines: "misc/socket.cc:71 NCCL WARN ...", older "include/socket.h:344 WARN ..."
_NCCL_WARN = re.compile(r"(?:\b(?:include|misc|transport|graph|plugin|os|proxy|bootstrap|init|"
                        r"enqueue|net)\b[\w/]{0,40}\.(?:h|cc|cu):\d+ (?:NCCL )?WARN|NCCL WARN) "
                        r"(?P<msg>[^\n]{3,200})")


def _messages(text: str, lowered: str, kind: str, anchors: tuple[str, ...]) -> list[Match]:
    entries = [e for e in load_catalog().messages[kind] if len(e.fragment) >= MIN_FRAGMENT]
    seen: dict[str, Match] = {}
    nccl = kind == "nccl_warnings"
    for start, end, msg in _stream(text, lowered, anchors, 2 if nccl else 5):
        found_ = [e for e in entries if e.fragment in msg]
        # one NCCL line is one message: a template whose every fixed text is there, in order,
        # wins over one that shares only its longest (a WARN of another release keeps the
        # longest); the kernel module's lines may hold several messages: the longest wins
        whole = [e for e in found_ if nccl and _in_order(e.parts, msg)]
        best: Message | None = max(whole or found_, key=lambda e: len(e.fragment), default=None)
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


def _in_order(parts: tuple[str, ...], msg: str) -> bool:
    """Whether every fixed text of a template appears in the line, in the template's order."""
    at = 0
    for part in parts:
        at = msg.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


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
        if hit is None and stage == "requirement":
            # the requirement stage checks the image's cuda>= / driver>= against the host's
            # driver; a terminal's hard wrap can cut its words ("unsatisfied condi\ntion: cuda
            # >= 9.0"): the condition is read across the wrap
            after = re.sub(r"\s*\n\s*", "", text[m.start("detail"):m.end() + 200]).lower()
            req = req or _CUDA_REQ.search(after)
            if req or re.search(r"driver\s{0,8}>=?\s{0,8}\d", after):
                cls_name = "driver-too-old"
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


# a shell line that starts a container: the command at the line's start, or after a prompt
# ("$ ", "(base) root@host:~# ", "❯ ", "PS C:\\> "), sudo (not a sentence that names it)
_RUN = re.compile(r"^[ \t]{0,8}(?:[^\n$#>❯%]{0,80}[$#>❯%][ \t]{1,4})?(?:sudo[ \t]{1,4})?"
                  r"(?P<engine>docker|podman|nerdctl)[ \t]{1,4}(?:container[ \t]{1,4})?run\b"
                  r"(?P<args>[^\n]{0,2000})", re.MULTILINE)
# what gives a container the GPUs: the toolkit's flag, its runtime, CDI's device names, the
# device nodes by hand, or the variable the toolkit's runtime reads
_GIVES_GPUS = re.compile(r"(?:^|\s)(?:--gpus(?:[=\s]|$)|--runtime[=\s]{1,4}nvidia\b|"
                         r"--device[=\s]{1,4}(?:nvidia\.com/gpu|/dev/nvidia)|--cdi\b|"
                         r"(?:-e|--env)[=\s]{1,4}NVIDIA_VISIBLE_DEVICES\b|--privileged\b)")


def run_without_gpus(text: str) -> tuple[int, int, str] | None:
    """The span and words of the first `docker run` (podman, nerdctl) command line in the text
    that gives the container no GPU; None where there is none, or each gives one."""
    # a command continued with a backslash read as one line (spaces of the same length, so
    # that the spans still index the text)
    joined = re.sub(r"\\[ \t]*\n", lambda m: " " * len(m.group(0)), text[:200_000])
    for m in hits(_RUN, joined):
        if _GIVES_GPUS.search(m["args"]) is None:
            return m.start("engine"), m.end(), m.group(0).strip()[:200]
    return None


def run_without_gpus_match(span: tuple[int, int, str]) -> Match:
    """The diagnosis of a container started without GPUs, at its command line."""
    cause = ("The container was started without GPUs: its command line has no --gpus (nor "
             "--runtime nvidia, a CDI device nvidia.com/gpu=…, the /dev/nvidia* devices), so "
             "the NVIDIA Container Toolkit gave it neither the GPUs nor the driver's libraries, "
             "and the program in it finds no GPU (unless this docker's default runtime is "
             "nvidia and the image asks for the GPUs).")
    fix = ("start it with the GPUs: docker run --gpus all … (the NVIDIA Container Toolkit "
           "installed and configured: sudo nvidia-ctk runtime configure --runtime=docker), "
           "podman run --device nvidia.com/gpu=all … (CDI: sudo nvidia-ctk cdi generate "
           "--output=/etc/cdi/nvidia.yaml)")
    sig = derived("container-run-without-gpus", "a container started without GPUs",
                  "container", "container-gpu-setup", cause, fix,
                  ("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/"
                   "docker-specialized.html",), priority=1, confirm=("GD505",))
    return found(sig, span)
