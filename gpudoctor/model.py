"""Core value types: the facts probes gather, the findings checks make, the report.

Everything here is frozen plain data (stdlib only) so that an `Environment` round-trips through
JSON exactly (see `gpudoctor.snapshot`). Versions are kept as the strings the source printed:
`packaging.version.Version("580.65.06")` would print as "580.65.6", and a driver version that
changes on the way through the doctor is a wrong fact. Checks parse them when they compare.

A fact that could not be gathered is an `Unavailable` carrying the reason, never a bare None.
Where a field is `X | None`, None is itself the fact (e.g. `TorchRuntime.cuda` is None for a
CPU-only build, exactly as `torch.version.cuda` reports it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, NewType

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

SCHEMA_VERSION = 1


class _StrEnum(str, Enum):
    """`enum.StrEnum` for Python 3.10."""

    def __str__(self) -> str:
        return str(self.value)


class Status(_StrEnum):
    """Verdict of one check."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"  # not applicable, or an input is unavailable; the message says why


class Severity(IntEnum):
    """How bad a non-pass finding of a check is."""

    INFO = 10
    WARNING = 20
    ERROR = 30


class Reason(_StrEnum):
    """Why a fact is unavailable."""

    NOT_INSTALLED = "not-installed"
    DRIVER_NOT_LOADED = "driver-not-loaded"
    VERSION_MISMATCH = "version-mismatch"
    PERMISSION_DENIED = "permission-denied"
    NOT_SUPPORTED = "not-supported"
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # a child process died from a signal (abort, segfault)
    SKIPPED = "skipped"  # the user asked not to gather it (e.g. --no-torch)
    ERROR = "error"


class Layer(_StrEnum):
    """The layer of the stack a check belongs to; the report is grouped by it."""

    DRIVER = "driver"
    CUDA = "cuda"
    CUDNN = "cudnn"
    PYTORCH = "pytorch"
    HOST = "host"

    @property
    def heading(self) -> str:
        """Heading used by renderers."""
        return _LAYER_TITLES[self]


_LAYER_TITLES = {
    Layer.DRIVER: "Driver & GPUs",
    Layer.CUDA: "CUDA",
    Layer.CUDNN: "cuDNN",
    Layer.PYTORCH: "PyTorch",
    Layer.HOST: "Environment",
}


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A fact that could not be gathered, and why."""

    reason: Reason
    message: str  # one actionable sentence
    detail: str | None = None  # exception type and text, stderr tail: for -v and JSON


# --------------------------------------------------------------------------- host


@dataclass(frozen=True, slots=True)
class DeviceNode:
    """One /dev/nvidia* node and what this user may do with it."""

    path: str
    readable: bool
    writable: bool


@dataclass(frozen=True, slots=True)
class HostFacts:
    """The operating system, the process environment and the device nodes."""

    os_name: str  # PRETTY_NAME from os-release, or platform.system()
    kernel: str
    machine: str
    glibc: str | Unavailable
    python_version: str
    python_executable: str
    container: str | None  # "docker", "podman", "kubernetes", "container"; None on bare metal
    wsl: bool
    env: tuple[tuple[str, str], ...]  # the CUDA-related variables that are set, in a fixed order
    ld_library_path_missing: tuple[str, ...]  # LD_LIBRARY_PATH entries that are not directories
    dev_nodes: tuple[DeviceNode, ...]
    shm_bytes: int | Unavailable

    def getenv(self, name: str) -> str | None:
        """The value of a recorded environment variable, None when it was not set."""
        return dict(self.env).get(name)


# --------------------------------------------------------------------------- driver


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """One GPU as NVML reports it."""

    index: int
    name: str
    uuid: str
    compute_capability: str  # "9.0"
    memory_total: int  # bytes
    memory_free: int  # bytes
    pci_bus_id: str
    persistence_mode: bool | Unavailable
    mig_mode: bool | Unavailable


@dataclass(frozen=True, slots=True)
class NvmlFacts:
    """The driver as NVML reports it."""

    driver_version: str  # "580.65.06"
    cuda_driver_version: int | Unavailable  # 1000*major + 10*minor: the highest CUDA it runs
    nvml_version: str | Unavailable
    binding: str  # "nvidia-ml-py 13.580.82"
    gpus: tuple[GpuFacts | Unavailable, ...]


@dataclass(frozen=True, slots=True)
class LibcudaFacts:
    """The CUDA driver library, read without NVML (`cuDriverGetVersion`)."""

    path: str
    cuda_driver_version: int  # 1000*major + 10*minor; 0 when no driver is installed
    driver_version: str | Unavailable  # from /proc/driver/nvidia/version


# --------------------------------------------------------------------------- toolkit


@dataclass(frozen=True, slots=True)
class VersionReading:
    """One way of reading a toolkit's version, and what it gave."""

    method: str  # "version.json", "version.txt", "cuda.h", "nvcc", "libcudart"
    path: str
    value: str | Unavailable


@dataclass(frozen=True, slots=True)
class ToolkitFacts:
    """One CUDA toolkit found on disk."""

    root: str
    found_by: str  # provenance: "--cuda-home", "CUDA_HOME", "nvcc on PATH", "/usr/local/cuda", …
    version: str | Unavailable  # "12.4" or "12.4.1": the best reading
    readings: tuple[VersionReading, ...]
    nvcc: str | None  # path of bin/nvcc when present
    pip_assembled: bool  # assembled from nvidia-* wheels (a dist-info/ folder, no version.json)
    in_use: bool  # the one builds and `gpudoctor install-cudnn` would use


@dataclass(frozen=True, slots=True)
class CudaFacts:
    """Every CUDA toolkit found, the first in search order being the one in use."""

    toolkits: tuple[ToolkitFacts, ...]

    @property
    def in_use(self) -> ToolkitFacts | None:
        """The toolkit in use, None when no toolkit was found."""
        return next((t for t in self.toolkits if t.in_use), None)


# --------------------------------------------------------------------------- torch


@dataclass(frozen=True, slots=True)
class TorchStatic:
    """What is installed, read from package metadata without importing torch."""

    version: str  # from the distribution metadata, e.g. "2.13.0+cpu"
    location: str  # the torch package directory
    version_py: tuple[tuple[str, str], ...]  # `torch/version.py` assignments (cuda, git_version…)
    nvidia_wheels: tuple[tuple[str, str], ...]  # ("nvidia-cudnn-cu12", "9.1.0.70"), sorted


@dataclass(frozen=True, slots=True)
class TorchDevice:
    """One device as torch sees it."""

    index: int
    name: str
    capability: str  # "9.0"
    total_memory: int


@dataclass(frozen=True, slots=True)
class TorchRuntime:
    """What `import torch` in the probed interpreter reported."""

    version: str
    cuda: str | None  # torch.version.cuda; None for a CPU-only build
    hip: str | None  # torch.version.hip; None unless a ROCm build
    cudnn_version: int | None  # torch.backends.cudnn.version(); None when cuDNN is not there
    cuda_available: bool
    cuda_init_error: str | None  # the text of torch.cuda.init()'s error when not available
    device_count: int
    arch_list: tuple[str, ...]  # torch.cuda.get_arch_list(): "sm_90", "compute_90", …
    devices: tuple[TorchDevice, ...]
    cudnn_conv: str  # "ok", "not-run: <why>" or "error: <text>": the small convolution
    mapped_libraries: tuple[str, ...]  # libcudart/libcudnn*/libcublas* paths in /proc/self/maps


@dataclass(frozen=True, slots=True)
class TorchFacts:
    """PyTorch in the probed interpreter: installed (static) and imported (runtime)."""

    python: str  # the interpreter probed
    static: TorchStatic | Unavailable
    runtime: TorchRuntime | Unavailable
    seconds: float  # how long the child took


# --------------------------------------------------------------------------- cuDNN


@dataclass(frozen=True, slots=True)
class CudnnLibrary:
    """One file of a cuDNN install: a libcudnn* library, or a cudnn*.h header."""

    name: str  # file name, e.g. "libcudnn_ops.so.9"
    path: str
    symlink_target: str | None  # os.readlink() when it is a symlink
    size: int  # bytes of the file it resolves to; -1 when it dangles
    mode: int  # permission bits of the resolved file; -1 when it dangles
    world_readable: bool  # the resolved file has the o+r bit
    readable: bool = True  # this user can open it (os.access R_OK)


@dataclass(frozen=True, slots=True)
class CudnnInstall:
    """One copy of cuDNN on the system (a header and/or libraries in one place)."""

    origin: str  # "toolkit /usr/local/cuda", "LD_LIBRARY_PATH", "ldconfig", "pip wheel", "conda"
    lib_dir: str
    header: str | None  # path of the header the version was read from
    header_version: str | Unavailable  # "8.9.7"
    libraries: tuple[CudnnLibrary, ...]
    library_version: str | Unavailable  # "8.9.7": cudnnGetVersion() in a child process
    missing_deps: tuple[str, ...] | Unavailable  # "libcublas.so.11" from ldd's "not found"
    cuda_build: str | Unavailable  # CUDA version the library was built for ("12", "10.1")
    # every way this copy was reached, in search order: "--cuda-home", "CUDA_HOME",
    # "/usr/local/cuda", "system headers", "LD_LIBRARY_PATH", "ldconfig", "pip wheel", "conda"
    found_by: tuple[str, ...] = ()
    prefix: str | None = None  # the CUDA toolkit prefix the copy lives in, when it is one
    in_use: bool = False  # that prefix is the toolkit in use (the first one found)
    include_dir: str | None = None
    headers: tuple[CudnnLibrary, ...] = ()  # the cudnn*.h files next to it
    cuda_build_from: str | None = None  # how cuda_build was told: "ldd", "dist-info", …
    real_lib_dir: str = ""  # lib_dir with symlinks resolved (what /proc/self/maps shows)


@dataclass(frozen=True, slots=True)
class CudnnFacts:
    """Every cuDNN copy found."""

    installs: tuple[CudnnInstall, ...]


# --------------------------------------------------------------------------- snapshot


@dataclass(frozen=True, slots=True)
class Environment:
    """The snapshot: every fact, frozen; JSON round-trips exactly (`gpudoctor.snapshot`)."""

    gpudoctor_version: str
    created: str  # ISO 8601, UTC
    host: HostFacts | Unavailable
    nvml: NvmlFacts | Unavailable
    libcuda: LibcudaFacts | Unavailable
    cuda: CudaFacts | Unavailable
    torch: TorchFacts | Unavailable
    cudnn: CudnnFacts | Unavailable


# --------------------------------------------------------------------------- checks


CheckId = NewType("CheckId", str)


@dataclass(frozen=True, slots=True)
class Finding:
    """What a check concluded."""

    status: Status
    message: str  # what is true, with the numbers
    fix: str | None = None  # imperative; the exact command when one exists
    evidence: tuple[tuple[str, str], ...] = ()
    check_id: CheckId = CheckId("")  # filled in by the runner


@dataclass(frozen=True, slots=True)
class Check:
    """One registered check: a pure function of (Environment, Tables)."""

    id: CheckId
    slug: str
    title: str
    layer: Layer
    severity: Severity  # applied to non-pass findings in renderers
    needs: str  # the facts it reads, for `gpudoctor checks`
    run: Callable[[Environment, Tables], Finding] = field(repr=False, compare=False)

    @property
    def doc(self) -> str:
        """The check's docs page: its function's docstring."""
        return (self.run.__doc__ or "").strip()


@dataclass(frozen=True, slots=True)
class Result:
    """A finding together with the check that made it."""

    check_id: CheckId
    slug: str
    title: str
    layer: Layer
    severity: Severity
    finding: Finding


@dataclass(frozen=True, slots=True)
class Report:
    """Everything a renderer needs: the environment and every result."""

    environment: Environment
    results: tuple[Result, ...]
    unknown_selectors: tuple[str, ...] = ()  # --only/--skip values that named no check
    notes: tuple[str, ...] = ()  # what to do next, printed after the tally

    def count(self, status: Status) -> int:
        """How many results have this status."""
        return sum(1 for r in self.results if r.finding.status is status)
