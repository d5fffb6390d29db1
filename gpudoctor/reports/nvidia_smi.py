"""`nvidia-smi` (the table) and the errors nvidia-smi prints instead of it.

The table's banner has the driver version and, since driver 410, "CUDA Version": the highest
CUDA the driver runs (on WSL the banner's NVIDIA-SMI version differs from "Driver Version",
the Windows driver's; the latter is the driver). Each GPU takes three rows:

    |   0  NVIDIA GeForce RTX 4090        On  |   00000000:01:00.0 Off |                  Off |
    |  0%   45C    P8             22W / 450W  |      1MiB /  24564MiB  |      0%      Default |
    |                                         |                        |                  N/A |

(index, name — cut with "..." when long —, persistence mode or, on Windows, the driver model;
bus id, display; volatile uncorrected ECC errors; memory used / total; MIG mode). The column
widths differ between driver generations, so rows are split on "|", not on positions.

nvidia-smi's errors are NVML's (nvidia-smi is an NVML client), mapped to the reasons the NVML
probe gives for the same error (gpudoctor/probes/nvml.py):

- "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
  (NVML_ERROR_DRIVER_NOT_LOADED) → DRIVER_NOT_LOADED
- "Failed to initialize NVML: Driver/library version mismatch" (NVML_ERROR_LIB_RM_VERSION_
  MISMATCH; NVML's string alone, quoted in prose, is read too) → VERSION_MISMATCH
- "Failed to initialize NVML: Insufficient Permissions" / "No permission", or another
  program's "nvml: Insufficient Permissions" → PERMISSION_DENIED
- "NVIDIA-SMI couldn't find libnvidia-ml.so library", "nvidia-smi: command not found" (Ubuntu's
  command-not-found: "Command 'nvidia-smi' not found, but can be installed with:")
  → NOT_INSTALLED
- "Failed to initialize NVML: Unknown Error" → ERROR
- "No devices were found" (NVML started: the driver is loaded, but no GPU came up; also
  quoted in prose on a line that names nvidia-smi) and
  "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost" (that GPU does
  not answer) are the driver's facts with a failed GPU in them
"""

from __future__ import annotations

import re

from gpudoctor.model import GpuFacts, GpuHealth, GpuProcess, NvmlFacts, Reason, Unavailable
from gpudoctor.reports.interface import (
    CUDA_NA,
    NGC_NO_DRIVER,
    NVML_INIT_FAILED,
    SMI_MISSING,
    Partial,
    not_reported,
    stated_driver,
)
from gpudoctor.versions import encode_cuda_version

# R610 (and some R580 builds) print "KMD Version" (the kernel-mode driver) and "CUDA UMD
# Version" (the highest CUDA the user-mode driver runs) where earlier ones print "Driver
# Version" and "CUDA Version"; WSL drivers may print "CUDA Version: ERR!"
BANNER = re.compile(r"NVIDIA-SMI\s+([\d.]+)\s+(?:Driver|KMD) Version:\s*([\w.]+)"
                    r"(?:\s+CUDA(?: UMD)? Version:\s*([\d.]+|N/A|ERR!))?")
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_ROW = re.compile(r"^\s*(\d+)\s+(.+?)\s+(On|Off|N/A|WDDM|TCC|MCDM)\s*$")
# a GPU's first row of the table ("|   0  NVIDIA A100 ...   On  |   00000000:42:00.0 Off |"):
# where a paste cut the banner off, the rows start the table
ROW_START = re.compile(r"^[ \t]*\|[ \t]{1,6}\d{1,3}[ \t]{1,6}\S[^|\n]{0,60}?[ \t]"
                       r"(?:On|Off|N/A|WDDM|TCC|MCDM)[ \t]*\|[ \t]{0,6}[0-9A-Fa-f]{4,8}:"
                       r"[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f][ \t]", re.MULTILINE)

# as nvidia-smi prints it (a line of its own), or quoted in prose on a line that names
# nvidia-smi ('I ran "nvidia-smi" and got "No devices were found"'), or its exact words quoted
NO_DEVICES = re.compile(r"^[ \t]*No devices were found[ \t]*$"
                        r"|(?i:^[^\n]*nvidia-smi[^\n]*\bno devices were found\b)"
                        # its exact words quoted (a script's trace: X='No devices were found')
                        r"|['\"`]No devices were found['\"`]"
                        # a Kubernetes probe that runs nvidia-smi (the GPU operator's driver
                        # pod: "Startup probe failed: No devices were found")
                        r"|\b[Pp]robe failed:[ \t]{0,4}No devices were found\b", re.MULTILINE)
# (pattern, reason, message); matched against the whole block
ERRORS: tuple[tuple[re.Pattern[str], Reason, str], ...] = (
    # as printed, or retyped ("NVIDIA SMI has failed because it could not communicate …")
    (re.compile(r"(?i:NVIDIA[- ]SMI) has failed because it (?:couldn.?t|could not|cannot|can.?t) "
                r"communicate with the NVIDIA driver"), Reason.DRIVER_NOT_LOADED,
     "nvidia-smi could not talk to the NVIDIA driver: its kernel module is not loaded"),
    # NVML's own string for NVML_ERROR_LIB_RM_VERSION_MISMATCH, which nothing else prints:
    # read where a user quotes it without nvidia-smi's "Failed to initialize NVML: ", and as
    # nvidia-container-cli prints it, lower-cased ("initialization error: nvml error:
    # driver/library version mismatch"): the hook initialises NVML on the host
    (re.compile(r"(?i:Driver/library version mismatch)"),
     Reason.VERSION_MISMATCH,
     "the driver's user-space library and kernel module differ (nvidia-smi: 'Driver/library "
     "version mismatch'): reboot, or reload the nvidia kernel module"),
    # TensorFlow's CUDA diagnostics (stream_executor's cuda_diagnostics): the kernel module's
    # version and libcuda's (the DSO) differ, the same split as NVML's mismatch
    (re.compile(r"kernel version \d{3}\.\d{1,3}(?:\.\d{1,3})? does not match DSO version "
                r"\d{3}\.\d{1,3}(?:\.\d{1,3})?"), Reason.VERSION_MISMATCH,
     "the driver's kernel module and its user-space library (libcuda) are different releases "
     "(TensorFlow: 'kernel version … does not match DSO version …'): reboot, or reload the "
     "nvidia kernel module"),
    # NVML_ERROR_NO_PERMISSION's string after nvidia-smi's prefix, or after the "nvml: " of
    # a program that prints NVML's error (nvidia-docker 1.0: "Error: nvml: Insufficient
    # Permissions")
    # (nvidia-container-cli lower-cases it: "nvml error: insufficient permissions")
    (re.compile(r"(?:Failed to initialize NVML|(?i:\bnvml)(?: error)?): (?i:Insufficient "
                r"Permissions|No permission)"),
     Reason.PERMISSION_DENIED, "no permission to talk to the driver (nvidia-smi: 'Failed to "
     "initialize NVML: Insufficient Permissions')"),
    # the shell's words, and Python's when a script runs it (subprocess: "FileNotFoundError:
    # [Errno 2] No such file or directory: 'nvidia-smi'")
    # (a container runtime's: 'exec: "nvidia-smi": executable file not found in $PATH', its
    # quotes escaped inside docker's own message)
    # NVML_ERROR_DRIVER_NOT_LOADED's string, as nvidia-smi prints it and as the container
    # toolkit's hook does (it initialises NVML on the host: "nvidia-container-cli:
    # initialization error: nvml error: driver not loaded")
    (re.compile(r"(?i:Failed to initialize NVML|\bnvml error):? (?i:Driver Not Loaded)\b"),
     Reason.DRIVER_NOT_LOADED, "NVML finds no loaded NVIDIA kernel module ('Driver Not "
     "Loaded'): the driver is installed but its module is not loaded"),
    (re.compile(r"NVIDIA-SMI couldn.?t find libnvidia-ml\.so|nvidia-smi: (?:command )?not "
                r"found|'nvidia-smi' is not recognized|Command 'nvidia-smi' not found"
                r"|No such file or directory: '(?:[^'\n]{0,200}/)?nvidia-smi'"
                r"|exec: \\?\"nvidia-smi\\?\": executable file not found in \$PATH"),
     Reason.NOT_INSTALLED, SMI_MISSING),
    # an NGC image's entrypoint banner (its check: no libcuda.so.1, or no /dev/nvidiactl)
    (re.compile(r"The NVIDIA Driver was not detected\.[ \t]{0,4}GPU functionality will not be "
                r"available"), Reason.NOT_INSTALLED, NGC_NO_DRIVER),
    # NVML's own text (nvmlErrorString: "Unknown Error", "GPU access blocked by the operating
    # system" …) ends the line, or a quote, backtick or full stop of the prose around it
    # (any case, the colon left out, as users retype it: "failed to initialize nvml unknown
    # error"; Markdown's ** around it)
    (re.compile(r"(?i:Failed to initialize NVML):?[ \t]([^`\"'*\n]{1,80}?)[ \t]*"
                r"(?:[`\"'*]|\.(?=\s|$)|$)",
                re.MULTILINE), Reason.ERROR,
     NVML_INIT_FAILED),
    (NO_DEVICES, Reason.ERROR,
     "nvidia-smi found no GPU ('No devices were found'): the driver is loaded but sees none"),
)
# one GPU that does not answer: nvidia-smi prints this instead of (or after) the table;
# "detect" on Windows, "determine" on Linux. Its PCI domain is 4 or 8 digits; a paste may hold
# fewer where it was retyped ("GPU 000:BA:80.0"), as explain's signature reads it too
LOST = re.compile(r"Unable to (?:determine|detect) the device handle for GPU ?"
                  r"([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]):[ \t]*([^\n]+)")
# NVML_ERROR_GPU_IS_LOST in a program's own words where no bus id is printed: the enum's name
# (C's, or a binding's "GpuIsLost" as NVML wrappers name it), or nvmlErrorString's "GPU is
# lost" after a line's "NVML"
NVML_LOST = re.compile(r"(?i:\b(?:NVML_ERROR_GPU_IS_LOST|GpuIsLost)\b|\bnvml\b[^\n]{0,160}?"
                       r"\bGPU is lost\b)"
                       # nvidia-smi's words for it quoted without the bus id before them
                       r"|\bGPU is lost\.?[ \t]{1,4}(?:Please[ \t]+)?[Rr]eboot\b")
ERROR_START = re.compile("|".join([*(f"(?:{p.pattern})" for p, _, _ in ERRORS), LOST.pattern,
                                   NVML_LOST.pattern]), re.MULTILINE)
_INFOROM = re.compile(r"infoROM is corrupted at gpu ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:"
                      r"[0-9A-Fa-f]{2}\.[0-9A-Fa-f])", re.IGNORECASE)


def parse_error(text: str) -> Partial | None:
    """An nvidia-smi error message as the driver facts it stands for; None if there is none."""
    for pattern, reason, message in ERRORS:
        m = pattern.search(text)
        if m and pattern is NO_DEVICES:
            return _loaded(text, (Unavailable(reason, message + ": no GPU came up (the kernel log "
                                              "says why: sudo dmesg | grep -e NVRM -e Xid)"),))
        if m:
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            detail = " | ".join(lines[:4])  # e.g. "NVML library version: 535.129"
            if m.groups():  # "Failed to initialize NVML: <NVML's own text>"
                message = f"{message}: {m[1].strip()}"
            return Partial(kind="nvidia-smi (error)", rank=3,
                           nvml=Unavailable(reason, message, detail))
    lost = _lost(text)
    if not lost and (m := NVML_LOST.search(text)) is not None:
        end = text.find("\n", m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1:end if end >= 0 else None].strip()[:400]
        lost = (Unavailable(Reason.ERROR, "a GPU: NVML reports it lost (NVML_ERROR_GPU_IS_LOST: "
                            "it fell off the bus or stopped answering; the kernel log's Xid "
                            "says why): it needs a reset or a reboot", line),)
    return _loaded(text, lost) if lost else None


def _loaded(text: str, failed: tuple[Unavailable, ...]) -> Partial:
    """NVML started (the driver is loaded), but these GPUs do not answer."""
    return Partial(kind="nvidia-smi (error)", rank=3, nvml=stated_driver(
        "nvidia-smi (its error for a GPU)",
        "is not in the report (nvidia-smi printed only a GPU's error)", failed))


def bus_id(bus: str) -> str:
    """A PCI bus id as the table prints it: the domain as 8 hex digits ("0008:00:00.0" in a
    warning is "00000008:00:00.0" in the table), a domain or function the text leaves out (the
    kernel log's "PCI:0000:ae:00", "01:00.0") completed as 0."""
    parts = bus.upper().split(":")
    if len(parts) == 2:
        parts = ["0", *parts]
    rest = ":".join(parts[1:])
    return f"{parts[0]:0>8}:{rest}" + ("" if "." in rest else ".0")


def _lost(text: str) -> tuple[Unavailable, ...]:
    """The GPUs nvidia-smi could not reach ("Unable to determine the device handle for GPU
    0000:02:00.0: GPU is lost"), once each (a log repeats the line per query)."""
    found: dict[str, Unavailable] = {}
    for m in LOST.finditer(text[:200_000]):
        why = m[2].strip()[:300]
        found.setdefault(bus_id(m[1]), Unavailable(
            Reason.ERROR, f"GPU {m[1]}: nvidia-smi cannot reach it ({why})"
            + ("" if "reboot" in why.lower() else ": it may be lost, or need a reset"),
            f"nvidia-smi: {m[0].strip()[:400]}"))
    return tuple(found.values())


def _cells(line: str) -> list[str]:
    return [c.strip()[:300] for c in line.strip().strip("|").split("|")]  # no cell is longer


# the temperature a GPU's second row shows ("N/A   51C    P0 …"; "ERR!" where it does not answer)
_TEMPERATURE = re.compile(r"(?:^|\s)\d{1,3}C(?:\s|$)")


def _gpu(first: list[str], second: list[str] | None, third: list[str] | None,
         processes: tuple[GpuProcess, ...] | Unavailable) -> GpuFacts | Unavailable:
    row = _ROW.match(first[0])
    assert row is not None
    index, name, mode = int(row[1]), row[2].strip(), row[3]
    if any("ERR!" in c for c in first + (second or [])) and (
            "ERR!" in first[0] or not _TEMPERATURE.search(second[0] if second else "")):
        # ERR! for its name or its temperature: the GPU does not answer. ERR! in one sensor's
        # reading beside its temperature (a notebook GPU's power cap "N/A / ERR!", a fan's
        # speed) is that query failing alone, the GPU answering the others
        return Unavailable(Reason.ERROR, f"GPU {index} ({name}): nvidia-smi shows ERR! (the "
                           "GPU does not answer: it may be lost or need a reset)",
                           " | ".join(first + (second or [])))
    bus_disp = first[1].split()
    bus: str | Unavailable = (bus_disp[0] if bus_disp and _BUS.match(bus_disp[0])
                              else not_reported("the GPU's bus id is not in the report"))
    mem = re.search(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB", " ".join(second or []))
    total: int | Unavailable = (int(mem[2]) << 20 if mem else
                                not_reported("the GPU's memory is not in the report"))
    persistence: bool | Unavailable
    if mode in ("On", "Off"):
        persistence = mode == "On"
    else:
        persistence = Unavailable(
            Reason.NOT_SUPPORTED, f"persistence mode: nvidia-smi shows {mode}"
            + (" (the Windows driver model)" if mode in ("WDDM", "TCC", "MCDM") else ""))
    mig_text = third[-1] if third and not third[0] else ""
    mig: bool | Unavailable
    if mig_text in ("Enabled", "Disabled"):
        mig = mig_text == "Enabled"
    elif mig_text == "N/A":
        mig = Unavailable(Reason.NOT_SUPPORTED, "MIG mode: nvidia-smi shows N/A")
    else:
        mig = not_reported("MIG mode is not in this nvidia-smi's table")
    return GpuFacts(
        index=index, name=name,
        uuid=not_reported("the GPU's UUID is not in nvidia-smi's table"),
        compute_capability=not_reported("the compute capability is not in nvidia-smi's table"),
        memory_total=total,
        memory_free=not_reported("the GPU's free memory is not in nvidia-smi's table (used + "
                                 "total is; the driver reserves some)"),
        pci_bus_id=bus,
        persistence_mode=persistence,
        mig_mode=mig,
        health=_health(first[-1] if len(first) > 2 else "", processes),
        compute_mode=_compute_mode(second[-1] if second and len(second) > 2 else ""),
    )


def _compute_mode(cell: str) -> str | Unavailable:
    """The end of the "GPU-Util  Compute M." cell, in NVML's words ("E. Process" is
    Exclusive_Process)."""
    m = re.search(r"(Default|E\. Process|E\. Thread|Prohibited)\s*$", cell)
    if m is None:
        return not_reported("the GPU's compute mode is not in the report" + (
            f" (nvidia-smi's cell reads {cell!r})" if cell else ""))
    return {"E. Process": "Exclusive_Process", "E. Thread": "Exclusive_Thread"}.get(m[1], m[1])


def _health(ecc: str, processes: tuple[GpuProcess, ...] | Unavailable
            ) -> GpuHealth | Unavailable:
    """What the table says of a GPU's health: its "Volatile Uncorr. ECC" column (a count, "Off"
    for ECC disabled, "N/A" for a GPU without ECC, "On" under MIG) and its processes."""
    more = not_reported("not in nvidia-smi's table (nvidia-smi -q shows it)")
    na = Unavailable(Reason.NOT_SUPPORTED, "the GPU has no ECC (nvidia-smi shows N/A)")
    unknown = not_reported("the GPU's ECC state is not in the report" + (
        f" (its column shows {ecc!r})" if ecc else ""))
    mode: str | Unavailable = unknown
    count: int | Unavailable = unknown
    if ecc.isdigit():
        mode, count = "Enabled", int(ecc)
    elif ecc == "Off":
        mode, count = "Disabled", Unavailable(Reason.NOT_SUPPORTED, "ECC is disabled")
    elif ecc == "On":  # a MIG GPU: the counts are per MIG device
        mode = "Enabled"
    elif ecc == "N/A":
        mode, count = na, na
    if ecc not in ("Off", "On", "N/A") and not ecc.isdigit() and isinstance(
            processes, Unavailable):
        return unknown  # the table states nothing of its health
    return GpuHealth(mode, count, more, more, more, more, more, more, more, more, more, more,
                     more, processes=processes)


# "|    0   N/A  N/A      1234      C   python             500MiB |" (GPU, GI, CI, PID, type,
# name, memory; GI and CI since driver 450) or "|    0      1850      G   /usr/lib/xorg/Xorg
# 1850MiB |" before; Windows shows N/A for the memory of WDDM processes
_PROCESS = re.compile(r"^(\d+)\s+(?:(?:\d+|N/A)\s+(?:\d+|N/A)\s+)?(\d+)\s+(C\+G|M\+C|C|G|M)\s+"
                      r"(.*?)\s+(?:(\d+)\s*MiB|N/A)$")


def _processes(lines: list[str]) -> dict[int, list[GpuProcess]] | None:
    """The Processes section by GPU index; None when the table has none or is cut off in it
    (a process list is evidence only when it is whole)."""
    start = next((i for i, line in enumerate(lines) if "Processes:" in line), None)
    if start is None:
        return None
    found: dict[int, list[GpuProcess]] = {}
    body = False
    for line in lines[start + 1:]:
        row = line.strip()
        if not body:
            body = row.startswith("|=")
            continue
        if row.startswith("+"):  # the section's closing border
            return found
        m = _PROCESS.match(row.strip("|").strip()[:300])
        if m:
            memory: int | Unavailable = int(m[5]) << 20 if m[5] else Unavailable(
                Reason.NOT_SUPPORTED, "nvidia-smi shows N/A for its memory (a Windows WDDM "
                "driver does not report it)")
            found.setdefault(int(m[1]), []).append(
                GpuProcess(int(m[2]), m[4] or f"pid {m[2]}", memory, m[3]))
    return None


def _with_inforom(gpus: list[GpuFacts | Unavailable], text: str
                  ) -> list[GpuFacts | Unavailable]:
    """nvidia-smi's "WARNING: infoROM is corrupted at gpu 0008:00:00.0": that GPU failed (its
    configuration store is damaged: the GPU may misbehave or stop; NVIDIA support, RMA)."""
    for m in _INFOROM.finditer(text[:200_000]):
        bus = bus_id(m[1])
        what = (f"nvidia-smi warns that its infoROM is corrupted ({m[0].strip()}): the board's "
                "configuration store is damaged; reflash or replace the GPU")
        at = next((i for i, g in enumerate(gpus) if isinstance(g, GpuFacts)
                   and isinstance(g.pci_bus_id, str) and bus_id(g.pci_bus_id) == bus), None)
        if at is None:
            gpus.append(Unavailable(Reason.ERROR, f"GPU {m[1]}: {what}"))
        else:
            g = gpus[at]
            assert isinstance(g, GpuFacts)
            gpus[at] = Unavailable(Reason.ERROR, f"GPU {g.index} ({g.name}, {m[1]}): {what}")
    return gpus


def parse_table(text: str) -> Partial:
    """The facts of one `nvidia-smi` table (possibly cut off, possibly with errors in it); a
    table whose banner the paste cut off gives its GPU rows (nvidia-smi printed them: the driver
    answers), the driver's version and CUDA NOT_REPORTED."""
    banner = BANNER.search(text)
    cut = "is not in the report (the table's banner is cut off)"
    driver: str | Unavailable = banner[2] if banner else not_reported(f"the driver's version {cut}")
    cuda = banner[3] if banner else None
    lines = text.splitlines()
    rows = [_cells(line) for line in lines if line.strip().startswith("|")]
    procs = _processes(lines)
    why = not_reported("the GPU's processes are not in the report" + (
        "" if "Processes:" not in text else " (the table is cut off inside them)"))
    gpus: list[GpuFacts | Unavailable] = []
    for i, cells in enumerate(rows):
        if len(cells) >= 2 and _ROW.match(cells[0]) and _BUS.match((cells[1].split() or [""])[0]):
            nxt = rows[i + 1] if i + 1 < len(rows) else None
            third = rows[i + 2] if i + 2 < len(rows) else None
            index = int(cells[0].split()[0])
            gpus.append(_gpu(cells, nxt, third, why if procs is None else tuple(
                procs.get(index, ()))))
    gpus = _with_inforom(gpus, text)  # MIG mode is the GPU's own "MIG M." cell
    gpus.extend(_lost(text))
    last = [line.strip() for line in text.splitlines() if line.strip()][-1]
    ended = "Processes:" in text or bool(re.fullmatch(r"\+[-=+]+\+", last))
    cuda_v = encode_cuda_version(cuda) if cuda and cuda != "N/A" else None
    nvml = NvmlFacts(
        driver_version=driver,
        cuda_driver_version=cuda_v if cuda_v is not None else not_reported(
            f"the highest CUDA the driver runs {cut}" if banner is None else
            "the highest CUDA the driver runs is not in the report (nvidia-smi before driver "
            "410 does not print it)" if cuda is None else CUDA_NA if cuda == "N/A" else
            f"nvidia-smi shows CUDA Version: {cuda}"),
        nvml_version=not_reported("the NVML version is not in nvidia-smi's table"),
        binding=f"nvidia-smi {banner[1]} (the table)" if banner else "nvidia-smi (the table)",
        gpus=tuple(gpus),
        smi_version=banner[1] if banner else not_reported(f"nvidia-smi's own version {cut}"),
    )
    if banner is None and not gpus:
        return Partial(kind="nvidia-smi (its rows)", rank=4, complete=False)
    return Partial(kind="nvidia-smi" if banner else "nvidia-smi (its rows)", rank=4,
                   complete=ended, nvml=nvml)
