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
  MISMATCH) → VERSION_MISMATCH
- "Failed to initialize NVML: Insufficient Permissions" / "No permission" → PERMISSION_DENIED
- "NVIDIA-SMI couldn't find libnvidia-ml.so library", "nvidia-smi: command not found"
  → NOT_INSTALLED
- "Failed to initialize NVML: Unknown Error", "No devices were found" → ERROR
"""

from __future__ import annotations

import re

from gpudoctor.model import GpuFacts, GpuHealth, NvmlFacts, Reason, Unavailable
from gpudoctor.reports.interface import Partial, not_reported
from gpudoctor.versions import encode_cuda_version

BANNER = re.compile(r"NVIDIA-SMI\s+([\d.]+)\s+Driver Version:\s*([\w.]+)"
                    r"(?:\s+CUDA Version:\s*([\d.]+|N/A))?")
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_ROW = re.compile(r"^\s*(\d+)\s+(.+?)\s+(On|Off|N/A|WDDM|TCC|MCDM)\s*$")

# (pattern, reason, message); matched against the whole block
ERRORS: tuple[tuple[re.Pattern[str], Reason, str], ...] = (
    (re.compile(r"NVIDIA-SMI has failed because it couldn.?t communicate with the NVIDIA "
                r"driver"), Reason.DRIVER_NOT_LOADED,
     "nvidia-smi could not talk to the NVIDIA driver: its kernel module is not loaded"),
    (re.compile(r"Failed to initialize NVML: Driver/library version mismatch"),
     Reason.VERSION_MISMATCH,
     "the driver's user-space library and kernel module differ (nvidia-smi: 'Driver/library "
     "version mismatch'): reboot, or reload the nvidia kernel module"),
    (re.compile(r"Failed to initialize NVML: (?:Insufficient Permissions|No permission)"),
     Reason.PERMISSION_DENIED, "no permission to talk to the driver (nvidia-smi: 'Failed to "
     "initialize NVML: Insufficient Permissions')"),
    (re.compile(r"NVIDIA-SMI couldn.?t find libnvidia-ml\.so|nvidia-smi: (?:command )?not "
                r"found|'nvidia-smi' is not recognized"), Reason.NOT_INSTALLED,
     "nvidia-smi or the driver's libnvidia-ml.so is missing: no NVIDIA driver is installed "
     "(or, in a container, GPU support was not requested)"),
    (re.compile(r"Failed to initialize NVML: (.+)"), Reason.ERROR,
     "nvidia-smi could not initialise NVML"),
    (re.compile(r"^[ \t]*No devices were found[ \t]*$", re.MULTILINE), Reason.ERROR,
     "nvidia-smi found no GPU ('No devices were found'): the driver is loaded but sees none"),
)
ERROR_START = re.compile("|".join(f"(?:{p.pattern})" for p, _, _ in ERRORS), re.MULTILINE)
_LOST = re.compile(r"Unable to determine the device handle for GPU ?([0-9A-Fa-f:.]+): (.+)")


def parse_error(text: str) -> Partial | None:
    """An nvidia-smi error message as the driver facts it stands for; None if there is none."""
    for pattern, reason, message in ERRORS:
        m = pattern.search(text)
        if m:
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            detail = " | ".join(lines[:4])  # e.g. "NVML library version: 535.129"
            if m.groups():  # "Failed to initialize NVML: <NVML's own text>"
                message = f"{message}: {m[1].strip()}"
            return Partial(kind="nvidia-smi (error)", rank=3,
                           nvml=Unavailable(reason, message, detail))
    return None


def _cells(line: str) -> list[str]:
    return [c.strip()[:300] for c in line.strip().strip("|").split("|")]  # no cell is longer


def _gpu(first: list[str], second: list[str] | None, third: list[str] | None
         ) -> GpuFacts | Unavailable:
    row = _ROW.match(first[0])
    assert row is not None
    index, name, mode = int(row[1]), row[2].strip(), row[3]
    if any("ERR!" in c for c in first + (second or [])):
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
        health=_ecc_cell(first[-1] if len(first) > 2 else ""),
    )


def _ecc_cell(value: str) -> GpuHealth | Unavailable:
    """The table's "Volatile Uncorr. ECC" column: a count, "Off" (ECC disabled) or "N/A"."""
    if not value:
        return not_reported("the GPU's ECC state is not in the report")
    more = not_reported("not in nvidia-smi's table (nvidia-smi -q shows it)")
    na = Unavailable(Reason.NOT_SUPPORTED, "the GPU has no ECC (nvidia-smi shows N/A)")
    if value.isdigit():
        mode: str | Unavailable = "Enabled"
        count: int | Unavailable = int(value)
    elif value == "Off":
        mode, count = "Disabled", Unavailable(Reason.NOT_SUPPORTED, "ECC is disabled")
    elif value == "N/A":
        mode, count = na, na
    else:
        return not_reported(f"the GPU's ECC column shows {value!r}")
    return GpuHealth(mode, count, more, more, more, more, more, more, more, more, more, more,
                     more)


def parse_table(text: str) -> Partial:
    """The facts of one `nvidia-smi` table (possibly cut off, possibly with errors in it)."""
    banner = BANNER.search(text)
    assert banner is not None
    driver, cuda = banner[2], banner[3]
    rows = [_cells(line) for line in text.splitlines() if line.strip().startswith("|")]
    gpus: list[GpuFacts | Unavailable] = []
    for i, cells in enumerate(rows):
        if len(cells) >= 2 and _ROW.match(cells[0]) and _BUS.match((cells[1].split() or [""])[0]):
            nxt = rows[i + 1] if i + 1 < len(rows) else None
            third = rows[i + 2] if i + 2 < len(rows) else None
            gpus.append(_gpu(cells, nxt, third))
    gpus.extend(Unavailable(Reason.ERROR, f"GPU {m[1]}: {m[2].strip()}",
                            f"nvidia-smi: {m[0].strip()}") for m in _LOST.finditer(text))
    last = [line.strip() for line in text.splitlines() if line.strip()][-1]
    ended = "Processes:" in text or bool(re.fullmatch(r"\+[-=+]+\+", last))
    cuda_v = encode_cuda_version(cuda) if cuda and cuda != "N/A" else None
    nvml = NvmlFacts(
        driver_version=driver,
        cuda_driver_version=cuda_v if cuda_v is not None else not_reported(
            "the highest CUDA the driver runs is not in the report (nvidia-smi before driver "
            "410 does not print it)" if cuda is None else f"nvidia-smi shows CUDA Version: {cuda}"),
        nvml_version=not_reported("the NVML version is not in nvidia-smi's table"),
        binding=f"nvidia-smi {banner[1]} (the table)",
        gpus=tuple(gpus),
    )
    return Partial(kind="nvidia-smi", rank=4, complete=ended, nvml=nvml)
