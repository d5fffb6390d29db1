"""GPU architectures: parse compute capabilities and arch lists, and tell whether a build's GPU
code runs on a GPU. A leaf: the checks, `recommend`, the compat queries and the smoke test all
decide arch coverage here, and nowhere else.

A build carries GPU code in two forms (`torch.cuda.get_arch_list()` names them `sm_XY` and
`compute_XY`; `TORCH_CUDA_ARCH_LIST` names them `X.Y` and `X.Y+PTX`):

- a cubin (SASS) for sm_XY runs on any GPU of compute capability X.Z with Z ≥ Y — the same
  major, the same or a higher minor: "a cubin generated for compute capability 8.0 is
  supported to run on a GPU with compute capability 8.6 [...] a cubin generated with compute
  capability 8.x is not supported to run on a GPU with compute capability 9.0" (NVIDIA,
  Blackwell Compatibility Guide for CUDA Applications, §1.2,
  https://docs.nvidia.com/cuda/blackwell-compatibility-guide/);
- PTX for compute_XY is JIT-compiled by the driver for any GPU of compute capability ≥ X.Y, of
  any later major (same guide, §1.2: "PTX is compiled at runtime to cubin and is forward
  compatible");
- an architecture-specific target, `sm_90a` / `compute_100a` (CUDA 12.0+), uses features that
  "are not guaranteed to be available or might change significantly on subsequent compute
  architectures": it runs only on exactly that compute capability, with no forward
  compatibility at all (CUDA C++ Programming Guide, "Feature Set Compiler Targets");
- a family-specific target, `sm_100f` / `compute_120f` (CUDA 12.9+, Blackwell), uses the
  features common to a family: it runs on the GPUs of the same family, i.e. the same major
  with the same or a higher minor (sm_100f on 10.0 and 10.3, sm_120f on 12.0 and 12.1, never
  on another major) — NVIDIA, "NVIDIA Blackwell and NVIDIA CUDA 12.9 Introduce
  Family-Specific Architecture Features",
  https://developer.nvidia.com/blog/nvidia-blackwell-and-nvidia-cuda-12-9-introduce-family-specific-architecture-features/
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

# at most 3 digits a part: no compute capability has more (and int() refuses past 4300)
_CC = re.compile(r"(?:(?:sm|compute)_)?(\d{1,3})\.(\d{1,3})([af]?)|"
                 r"(?:(?:sm|compute)_)?(\d{1,3})(\d)([af]?)", re.ASCII)


def parse_cc(text: str) -> tuple[int, int] | None:
    """A compute capability: "8.6", "sm_86", "86", "compute_90a", "12.0+PTX" → (major, minor).

    The suffix of an arch name is dropped here: the GPU's compute capability is the number.
    """
    m = _CC.fullmatch(text.strip().lower().removesuffix("+ptx"))
    if m is None:
        return None
    if m[1] is not None:
        return int(m[1]), int(m[2])
    return int(m[4]), int(m[5])


def sm_name(cc: tuple[int, int]) -> str:
    """(8, 9) → "sm_89"."""
    return f"sm_{cc[0]}{cc[1]}"


def sm_of(cc: str) -> str:
    """A compute capability as torch and nvcc name its arch: "8.6" -> "sm_86" ("sm_?" if it is
    not one)."""
    parsed = parse_cc(cc)
    return sm_name(parsed) if parsed else "sm_?"


def cc_text(cc: tuple[int, int]) -> str:
    """(8, 9) → "8.9"."""
    return f"{cc[0]}.{cc[1]}"


@dataclass(frozen=True, slots=True)
class Arch:
    """One piece of a build's GPU code: a cubin for sm_XY, or PTX for compute_XY."""

    major: int
    minor: int
    ptx: bool  # PTX, JIT-compiled by the driver; else a cubin (SASS)
    suffix: str = ""  # "" | "a" (architecture-specific) | "f" (family-specific)

    @property
    def name(self) -> str:
        """"sm_90a", "compute_120", as torch.cuda.get_arch_list() spells it."""
        return f"{'compute' if self.ptx else 'sm'}_{self.major}{self.minor}{self.suffix}"

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """Whether this code runs on a GPU of compute capability `cc` (see the module)."""
        if self.suffix == "a":
            return (self.major, self.minor) == cc
        if self.ptx and not self.suffix:
            return (self.major, self.minor) <= cc
        return self.major == cc[0] and self.minor <= cc[1]


def parse_arch(entry: str) -> tuple[Arch, ...]:
    """The code one arch-list entry stands for; () when it is not one.

    `sm_86` → a cubin; `compute_90` → PTX; `sm_90a`, `sm_100f` keep their suffix;
    TORCH_CUDA_ARCH_LIST's `8.6` → a cubin and `8.6+PTX` → a cubin and PTX.
    """
    text = entry.strip().lower()
    m = re.fullmatch(r"(sm|compute)_(\d+)(\d)([af]?)", text)
    if m:
        return (Arch(int(m[2]), int(m[3]), m[1] == "compute", m[4]),)
    m = re.fullmatch(r"(\d+)\.(\d+)([af]?)(\+ptx)?", text)
    if m:
        sass = Arch(int(m[1]), int(m[2]), False, m[3])
        return (sass, Arch(sass.major, sass.minor, True, m[3])) if m[4] else (sass,)
    return ()


def parse_arch_list(entries: Iterable[str]) -> tuple[Arch, ...]:
    """Every piece of code an arch list names, in its order; unknown entries are left out."""
    return tuple(a for e in entries for a in parse_arch(e))


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which entry of an arch list runs on a GPU, and why it may."""

    arch: Arch
    cc: tuple[int, int]
    how: str  # "native" | "same-major" | "family" | "ptx"

    def explain(self) -> str:
        """One line for the evidence: "sm_86 cubins run on sm_89 (same major)"."""
        gpu = sm_name(self.cc)
        if self.how == "native":
            return f"{self.arch.name} cubins run natively on {gpu}"
        if self.how == "same-major":
            return f"{self.arch.name} cubins run on {gpu} (same major)"
        if self.how == "family":
            kind = "PTX JIT-compiles" if self.arch.ptx else "cubins run"
            return f"{self.arch.name} {kind} on {gpu} (family {self.arch.major}.x)"
        return f"{self.arch.name} PTX JIT-compiles for {gpu}"


def coverage(arch_list: Iterable[str], cc: tuple[int, int]) -> Coverage | None:
    """The best entry of `arch_list` that runs on compute capability `cc`, None if none does.

    A native cubin beats a cubin of a lower minor, which beats PTX (JIT costs start-up time);
    among PTX, the newest wins.
    """
    best: tuple[tuple[int, int, int], Coverage] | None = None
    for arch in parse_arch_list(arch_list):
        if not arch.runs_on(cc):
            continue
        if not arch.ptx and (arch.major, arch.minor) == cc:
            how, rank = "native", 3
        elif arch.suffix == "f":
            how, rank = "family", 2 if not arch.ptx else 1
        elif not arch.ptx:
            how, rank = "same-major", 2
        else:
            how, rank = "ptx", 1
        key = (rank, arch.major, arch.minor)
        if best is None or key > best[0]:
            best = (key, Coverage(arch, cc, how))
    return best[1] if best else None


def covers(arch_list: Iterable[str], cc: str | tuple[int, int]) -> bool:
    """Whether some entry of `arch_list` runs on `cc` ("8.9", "sm_89" or (8, 9))."""
    target = parse_cc(cc) if isinstance(cc, str) else cc
    return target is not None and coverage(arch_list, target) is not None


# --- Version integers and compute-capability keys ---------------------------------------------


def decode_cudnn_version(v: int) -> tuple[int, int, int]:
    """Split `cudnnGetVersion()` / `torch.backends.cudnn.version()` into (major, minor, patch).

    cuDNN <= 8: MAJOR*1000 + MINOR*100 + PATCH (8907); cuDNN 9: MAJOR*10000 + ... (90100). The
    largest v8 value is 8999, so v >= 10000 means the v9 formula.
    """
    if v < 0:
        raise ValueError(f"a cuDNN version integer is >= 0, got {v}")
    if v >= 10000:
        return v // 10000, v % 10000 // 100, v % 100
    return v // 1000, v % 1000 // 100, v % 100


def encode_cudnn_version(major: int, minor: int, patch: int) -> int:
    """The `cudnnGetVersion()` integer of a release: (9, 1, 0) → 90100, (8, 9, 7) → 8907
    (`decode_cudnn_version`'s inverse)."""
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


def format_cudnn_version(v: int) -> str:
    """`cudnnGetVersion()` as "X.Y.Z": 90100 → "9.1.0" (v9+), 8907 → "8.9.7" (≤ v8)."""
    return ".".join(str(part) for part in decode_cudnn_version(v))


def decode_cuda_version(v: int) -> str:
    """12040 → "12.4": the 1000*major + 10*minor encoding of cudaDriverGetVersion,
    cudaRuntimeGetVersion, NVML's CUDA driver version and cuda.h's CUDA_VERSION."""
    return f"{v // 1000}.{(v % 1000) // 10}"


def normalize_cc(cc: str) -> str | None:
    """Compute capability "8.6", "sm_86", "compute_90a", "86", "12.0+PTX" -> "X.Y" (or None)."""
    parsed = parse_cc(cc)
    return cc_text(parsed) if parsed else None


def encode_cuda_version(text: str) -> int | None:
    """"12.4" → 12040: `decode_cuda_version` reversed, for the CUDA version NVML and
    nvidia-smi print; None for text that is not a CUDA version."""
    major, _, minor = text.strip().partition(".")
    if not (major.isascii() and major.isdigit() and len(major) < 6
            and (minor or "0").isascii() and (minor or "0").isdigit()):
        return None
    return int(major) * 1000 + int((minor or "0")[:2].ljust(1, "0")) * 10


def arch_list_supports(arch_list: tuple[str, ...], cc: str) -> bool:
    """Whether code built for `arch_list` (TORCH_CUDA_ARCH_LIST "8.6", "12.0+PTX", or
    get_arch_list()'s "sm_86", "compute_90", "sm_90a") runs on compute capability `cc`.

    The rules (same-major cubins, PTX JIT, `a`/`f` suffixes) are `gpudoctor.versions`'.
    """
    return covers(arch_list, cc)


@functools.lru_cache(maxsize=1024)
def parse_version(text: str) -> Version | None:
    """`packaging` Version of a version string as a machine or a table printed it; None if it
    does not parse."""
    try:
        return Version(text.strip())
    except (InvalidVersion, ValueError):  # ValueError: a part past int()'s 4300 digits
        return None


def minor_key(text: str) -> tuple[int, int] | None:
    """The "X.Y" key of a version: "12.4.1" -> (12, 4); None for a bare major or garbage."""
    version = parse_version(text)
    return (version.release[0], version.release[1]) if version and version.release[1:] else None


def minor_of(version: str) -> tuple[int, int]:
    """(major, minor) of a version string the caller has validated ("13" -> (13, 0))."""
    v = Version(version)
    return v.major, v.minor


def release3(text: str) -> tuple[int, ...] | None:
    """The first three release fields, zero-padded: "9.1" -> (9, 1, 0), "7.6.5.32" -> (7, 6, 5)."""
    version = parse_version(text)
    return (*version.release, 0, 0)[:3] if version else None
