"""Row types of the compat tables, and the version helpers their queries share.

`gpudoctor.compat` re-exports every public name here. Each row type mirrors one `[[table]]` of
`compat_tables/*.toml` (see `gpudoctor.compat.load` for the field specs). Version decoding
(CUDA/cuDNN integers, `sm_XY`, "X.Y") lives in the leaf `gpudoctor.versions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from packaging.version import Version

from gpudoctor.versions import minor_key as _minor_key
from gpudoctor.versions import normalize_cc, sm_of
from gpudoctor.versions import parse_version as _ver
from gpudoctor.versions import release3 as _release3

FactStatus = Literal["verified", "copy", "secondary", "derived", "exists", "unverified"]
STATUSES: tuple[str, ...] = ("verified", "copy", "secondary", "derived", "exists", "unverified")
UNVERIFIED = "unverified"
EXISTS = "exists"  # only the release's existence (a package version on PyPI) was checked


class CompatTableError(ValueError):
    """A compat table is missing or malformed; the message names the file and the row."""


# --- Row types: keyword-only, sharing `source`, `status` and `note` ---------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Sourced:
    """Where a row's facts come from: primary-document URL, status, optional why-note."""

    source: str
    status: str
    note: str | None = None


_R = TypeVar("_R", bound=Sourced)


@dataclass(frozen=True, slots=True, kw_only=True)
class CudaRelease(Sourced):
    """One CUDA Toolkit release and the driver bundled with it (its full-feature minimum)."""

    version: str  # "12.4.1"; NVIDIA's own number where it prints one ("10.0.130")
    label: str  # "12.4 Update 1"
    kind: str  # "ga" | "update" | "rc"
    min_driver_linux: str | None = None
    min_driver_windows: str | None = None

    @property
    def minor(self) -> str:
        """The "X.Y" this release belongs to."""
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True, slots=True, kw_only=True)
class CudaFamily(Sourced):
    """Minor-version-compatibility floor of one CUDA major (11 and newer)."""

    major: int
    min_driver_linux: str
    min_driver_windows: str | None = None
    driver_range: str | None = None  # NVIDIA's range, e.g. ">= 525, < 580"


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverBranch(Sourced):
    """Driver branch -> the highest CUDA version it reports (a derived lower bound)."""

    branch: int
    cuda: str
    min_driver: str | None = None  # None: first driver of the branch unknown


@dataclass(frozen=True, slots=True)
class DriverMinimum:
    """What CUDA "X.Y" needs from the driver: `full` feature set, or the `family` (MVC) floor."""

    cuda: str
    full: str | None  # Linux driver of the GA release (or of the exact release asked for)
    family: str | None  # minor-version-compatibility floor; majors >= 11 only
    windows_full: str | None
    windows_family: str | None
    source: str
    status: str  # of the `full` row
    family_source: str | None = None
    family_status: str | None = None


@dataclass(frozen=True, slots=True)
class TorchVariant:
    """One CUDA wheel variant of a PyTorch release."""

    tag: str  # "cu121"
    cuda: str  # "12.1"
    index_url: str
    cudnn: str | None
    arch_list: tuple[str, ...] | None  # TORCH_CUDA_ARCH_LIST, e.g. ("7.5", ..., "12.0+PTX")
    experimental: bool = False
    source: str | None = None  # None: the release row's; set where a variant has its own
    status: str | None = None  # None: the release row's (e.g. "secondary" for a variant only
    #                            on download.pytorch.org, read in the next-best source)
    # the Linux aarch64 (SBSA) wheel of this variant, which PyTorch builds with its own arch
    # list: the lists its sources leave open (one where they settle it), their source, status
    aarch64_lists: tuple[tuple[str, ...], ...] = ()
    aarch64_source: str | None = None
    aarch64_status: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TorchIndex(Sourced):
    """The wheel index of one install method (`torch.toml` `[[index]]`); "{tag}" in `url` is the
    variant tag ("cu121")."""

    install: str  # "find-links" | "extra-index-url" | "index-url"
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TorchRelease(Sourced):
    """One PyTorch release with its CUDA wheel variants."""

    version: str
    variants: tuple[TorchVariant, ...]
    install: str  # "find-links" | "extra-index-url" | "index-url"
    pypi_default: str | None = None  # tag of plain `pip install torch` (Linux x86_64)
    torchvision: str | None = None
    torchaudio: str | None = None  # None: none paired with this release in the tables
    python: tuple[str, ...] | None = None  # CPython minors with wheels: "3.10", ...

    def variant(self, tag: str) -> TorchVariant | None:
        """The variant with this tag ("cu121"), if the release has one."""
        return next((v for v in self.variants if v.tag == tag), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuArch(Sourced):
    """A compute capability, its architecture family and the toolkits that compile for it."""

    cc: str
    family: str
    products: tuple[str, ...]
    first_cuda: str | None = None  # None: older than the tables
    last_cuda: str | None = None  # None: still supported


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuProduct(Sourced):
    """Products of one compute capability as a page lists them (`gpu.toml` `[[product]]`): a
    row of NVIDIA's CUDA GPUs pages (its `source` is the page), or a product those pages do not
    list, with the evidence that gives its compute capability."""

    cc: str
    segment: str  # "data center" | "workstation/consumer" | "jetson"
    names: tuple[str, ...]  # exactly as the page prints them ("GeForce RTX 3050 Ti")


@dataclass(frozen=True, slots=True, kw_only=True)
class CudnnSupport(Sourced):
    """cuDNN releases `first`..`last` support GPUs of compute capability `min_cc`..`max_cc`
    (inclusive, as NVIDIA's support matrix lists them), in their CUDA builds `cuda`."""

    first: str
    last: str | None = None  # None: still current
    cuda: str | None = None  # "12.8-12.9", "13", "10.0-10.2"; None: the union over every build
    min_cc: str
    max_cc: str

    def supports(self, cc: str) -> bool:
        """Whether compute capability `cc` ("8.6", "sm_86") lies in `min_cc`..`max_cc`."""
        key = _minor_key(normalize_cc(cc) or "")
        low, high = _minor_key(self.min_cc), _minor_key(self.max_cc)
        return key is not None and low is not None and high is not None and low <= key <= high

    def range_text(self) -> str:
        """"compute capability 5.0-12.0 (sm_50 to sm_120)"."""
        return (f"compute capability {self.min_cc}-{self.max_cc} "
                f"({sm_of(self.min_cc)} to {sm_of(self.max_cc)})")

    def covers_cuda(self, cuda: str) -> bool:
        """Whether this row is the one for CUDA `cuda`: "12.8" or "12.8.1" inside `self.cuda`,
        or a bare major ("13") equal to it. A row without `cuda` covers no single build."""
        if self.cuda is None:
            return False
        if cuda.strip().isdigit():
            return cuda.strip() == self.cuda
        key = _minor_key(cuda)
        return key is not None and _build_covers(self.cuda, key)


@dataclass(frozen=True, slots=True, kw_only=True)
class CudnnRelease(Sourced):
    """One cuDNN release: CUDA builds, tarball names, stated minimum drivers, GPUs."""

    version: str  # "7.6.5"
    build: str | None = None  # "7.6.5.32": NVIDIA's own number, the one its tarballs carry
    wheel_build: str | None = None  # the nvidia-cudnn-cuNN wheels' number where it differs
    cuda_builds: tuple[str, ...]  # "10.1", "11.0-11.8", or "12" (the whole major)
    tarballs: tuple[str, ...] = ()
    min_driver: tuple[tuple[str, str], ...] = ()  # (CUDA build key, Linux driver)
    compute_capabilities: tuple[str, ...] | None = None  # as the support matrix lists them

    def supports_cuda(self, cuda: str) -> bool:
        """Whether one of the CUDA builds covers CUDA "X.Y" (or "X.Y.Z")."""
        key = _minor_key(cuda)
        return key is not None and any(_build_covers(b, key) for b in self.cuda_builds)

    def min_driver_for(self, cuda: str) -> str | None:
        """The Linux driver the support matrix states for the build covering `cuda`."""
        key = _minor_key(cuda)
        exact = [d for k, d in self.min_driver if key and _minor_key(k) == key]
        major = [d for k, d in self.min_driver if key and k == str(key[0])]
        return next(iter(exact or major), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class CudnnLayout(Sourced):
    """Files of one cuDNN major and how its version integer is encoded."""

    major: int
    headers: tuple[str, ...]
    libraries: tuple[str, ...]  # SONAMEs
    version_header: str
    version_multiplier: int  # CUDNN_VERSION = MAJOR*multiplier + MINOR*100 + PATCHLEVEL


@dataclass(frozen=True, slots=True, kw_only=True)
class TarballFormat(Sourced):
    """Naming and unpack layout of one era of cuDNN Linux x86_64 tarballs."""

    first: str
    last: str | None = None
    pattern: str  # with {cuda} and {build}
    cuda_key: str  # "minor" ({cuda} = "11.5") or "major" ({cuda} = "11")
    include_dir: str  # inside the archive; {stem} = the archive name without its extension
    lib_dir: str


@dataclass(frozen=True, slots=True)
class CudnnTarball:
    """What a cuDNN tarball's file name says."""

    name: str
    build: str  # "7.6.5.32"
    cuda: str  # "10.1", or the major ("12") from 8.5 on
    format: TarballFormat
    include_dir: str  # inside the archive
    lib_dir: str


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownBadCudnn(Sourced):
    """A cuDNN release with a published defect."""

    version: str
    reason: str


# --- Version helpers ---------------------------------------------------------------------------


def _V(text: str) -> Version:  # for strings the loader validated
    version = _ver(text)
    if version is None:
        raise ValueError(f"not a version: {text!r}")
    return version


def _build_covers(build: str, key: tuple[int, int]) -> bool:
    if "-" in build:
        low, high = (_minor_key(part) for part in build.split("-"))
        return low is not None and high is not None and low <= key <= high
    return key[0] == int(build) if "." not in build else _minor_key(build) == key


def _newest(rows: tuple[_R, ...], version: Callable[[_R], str], include_unverified: bool) -> _R:
    usable = [r for r in rows if include_unverified or r.status != UNVERIFIED]
    return max(usable or rows, key=lambda r: _V(version(r)))


def _within(key: tuple[int, ...], first: str, last: str | None) -> bool:
    return (_release3(first) or ()) <= key and (last is None or key <= (_release3(last) or ()))
