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

from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import NewType, TypeAlias

# re-exported: the model's leaves, so `from gpudoctor.model import …` reaches every type
from gpudoctor.model_base import NOT_RECORDED as NOT_RECORDED
from gpudoctor.model_base import Reason as Reason
from gpudoctor.model_base import StrEnum as _StrEnum
from gpudoctor.model_base import Unavailable as Unavailable
from gpudoctor.model_health import GpuHealth as GpuHealth
from gpudoctor.model_health import GpuProcess as GpuProcess
from gpudoctor.model_smoke import DistributedRun, SmokeRun
from gpudoctor.requirements import Requirement

# a field's metadata key: its JSON key is left out where the value is None (a fact only a
# pasted report states, added after snapshots of real machines were written)
OMITTED_WHEN_NONE = "omitted_when_none"


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


class Layer(_StrEnum):
    """The layer of the stack a check belongs to; the report is grouped by it."""

    DRIVER = "driver"
    CUDA = "cuda"
    CUDNN = "cudnn"
    PYTORCH = "pytorch"
    HOST = "host"
    REQUIREMENTS = "requirements"  # what a CI job asked for (`check --require`)

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
    Layer.REQUIREMENTS: "Requirements",
}


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

    # the probe fills every field; a pasted report (`gpudoctor.reports.system`) states a few
    # (the device nodes `ls -l /dev/nvidia*` lists, the driver the kernel log shows bound to a
    # GPU) and leaves the others Unavailable(NOT_REPORTED)
    os_name: str | Unavailable  # PRETTY_NAME from os-release, or platform.system()
    kernel: str | Unavailable
    machine: str | Unavailable
    glibc: str | Unavailable
    python_version: str | Unavailable
    python_executable: str | Unavailable
    # "docker", "podman", "kubernetes", "container"; None on bare metal
    container: str | Unavailable | None
    wsl: bool | Unavailable
    # the CUDA-related variables that are set, in a fixed order
    env: tuple[tuple[str, str], ...] | Unavailable
    # LD_LIBRARY_PATH entries that are not directories
    ld_library_path_missing: tuple[str, ...] | Unavailable
    dev_nodes: tuple[DeviceNode, ...] | Unavailable
    shm_bytes: int | Unavailable
    # NVIDIA display / 3D controllers on the PCI bus ("0000:01:00.0 10de:2684"): a GPU is there
    # even when no driver is loaded
    pci_gpus: tuple[str, ...] | Unavailable = NOT_RECORDED
    pci_gpu_drivers: tuple[tuple[str, str], ...] = ()  # (PCI address, bound driver or "")
    # the NVIDIA kernel module's version (/proc/driver/nvidia/version, /sys/module/nvidia/version)
    nvidia_module: str | Unavailable = NOT_RECORDED
    # (path of a libnvidia-ml.so.1, the driver version its real file is named after)
    nvml_libraries: tuple[tuple[str, str], ...] = ()
    # (LD_LIBRARY_PATH entry, the directory it resolves to): /proc/self/maps shows the latter
    ld_library_path_real: tuple[tuple[str, str], ...] = ()
    cdi_specs: tuple[str, ...] = ()  # Container Device Interface specs: /etc/cdi, /var/run/cdi
    # the node's name (`socket.gethostname()`): `gpudoctor fleet` names nodes by it
    hostname: str | Unavailable = NOT_RECORDED
    # NVML's error inside this container where a pasted report also shows the driver working
    # (the host's nvidia-smi beside the container's "Failed to initialize NVML: Unknown
    # Error"): the container's own view, kept beside the host's driver facts. None otherwise
    # (a probed machine's NVML error is `Environment.nvml` itself)
    container_nvml_error: str | None = None
    # a pasted report whose nvidia-smi ran inside the container (`docker run|exec … nvidia-smi`,
    # at a container's prompt, in a Compose service's log): its table is the container's view
    smi_in_container: bool = False
    # a pasted report whose GPU is another vendor's by its own words (Ollama's issue template:
    # "### GPU" answered "AMD"): "AMD", "Intel", "Apple"; None where it says none
    other_gpu_vendor: str | None = None

    def getenv(self, name: str) -> str | Unavailable | None:
        """The value of a recorded environment variable, None when it was not set, and `env`
        itself where the environment is unknown (a pasted report does not state it)."""
        return self.env if isinstance(self.env, Unavailable) else dict(self.env).get(name)


# --------------------------------------------------------------------------- driver


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """One GPU as NVML reports it."""

    index: int
    name: str
    # NVML always has the fields below; a pasted report (nvidia-smi's table, collect_env's GPU
    # list) may lack them, and they are then Unavailable(NOT_REPORTED), never guessed
    uuid: str | Unavailable
    compute_capability: str | Unavailable  # "9.0"
    memory_total: int | Unavailable  # bytes
    memory_free: int | Unavailable  # bytes
    pci_bus_id: str | Unavailable
    persistence_mode: bool | Unavailable
    mig_mode: bool | Unavailable
    health: GpuHealth | Unavailable = NOT_RECORDED  # `nvidia-smi -q` counters, when read
    compute_mode: str | Unavailable = NOT_RECORDED  # "Default", "Prohibited", "Exclusive_…"


@dataclass(frozen=True, slots=True)
class NvmlFacts:
    """The driver as NVML reports it."""

    # "580.65.06"; Unavailable only from a report cut off before the driver's version, whose
    # GPU list (collect_env's, from `nvidia-smi -L`) shows the driver answered
    driver_version: str | Unavailable
    cuda_driver_version: int | Unavailable  # 1000*major + 10*minor: the highest CUDA it runs
    nvml_version: str | Unavailable
    binding: str  # "nvidia-ml-py 13.580.82"
    gpus: tuple[GpuFacts | Unavailable, ...]
    # the version nvidia-smi prints as its own ("NVIDIA-SMI 450.66"), from a pasted table: the
    # release of the user-space tools; it differs from driver_version when they come from
    # another release than the kernel module, and on WSL (beside the Windows driver's version)
    smi_version: str | Unavailable = NOT_RECORDED


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
    lacks: tuple[str, ...] = ()  # parts builds need that are missing: "bin/nvcc", …
    # architectures a pasted build log shows this nvcc refusing ("nvcc fatal : Unsupported gpu
    # architecture 'compute_86'"), as "8.6"; never read on a machine
    refused_archs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NamedRoot:
    """A directory the user named as the CUDA toolkit, and what is really there."""

    path: str
    named_by: str  # "--cuda-home", "CUDA_HOME", "CUDA_PATH"
    # "toolkit", "missing", "file" (not a directory), "empty", "not-a-toolkit" (a directory
    # without version.json / version.txt / include/cuda.h / bin/nvcc), "unreadable"
    kind: str
    lacks: tuple[str, ...] = ()  # for a toolkit: "bin/nvcc", "include/cuda_runtime.h"


@dataclass(frozen=True, slots=True)
class ToolkitsFacts:
    """Every CUDA toolkit found, the first in search order being the one in use."""

    toolkits: tuple[ToolkitFacts, ...]
    # --cuda-home, CUDA_HOME, CUDA_PATH as set, whatever they point at; a named directory that
    # is no toolkit leaves `toolkits` empty rather than making the facts Unavailable
    named: tuple[NamedRoot, ...] = ()

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
    # every installed torch distribution on sys.path, in path order: (metadata version, the
    # torch package directory it installed); `location` is a shadow when it is none of these
    distributions: tuple[tuple[str, str], ...] = ()
    cwd: str | Unavailable = NOT_RECORDED  # the probed interpreter's working directory
    # torchvision / torchaudio installed beside torch: ("torchvision", "0.20.1+cu124"), from
    # their distribution metadata (never imported); an install line pins them to match torch
    companions: tuple[tuple[str, str], ...] = ()


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

    # torch.__version__; a report that quotes only torch's warnings does not state it
    version: str | Unavailable
    # torch.version.cuda; None for a CPU-only build; Unavailable: a CUDA build whose version
    # the report does not state (torch's arch warning, printed only by CUDA builds)
    cuda: str | Unavailable | None
    hip: str | None  # torch.version.hip; None unless a ROCm build
    # the probe always has the fields below; a pasted report (collect_env) lacks them, and they
    # are then Unavailable(NOT_REPORTED), never guessed
    cudnn_version: int | Unavailable | None  # torch.backends.cudnn.version(); None: no cuDNN
    cuda_available: bool | Unavailable  # a report cut off before it does not say
    cuda_init_error: str | Unavailable | None  # torch.cuda.init()'s error when not available
    device_count: int | Unavailable
    arch_list: tuple[str, ...] | Unavailable  # torch.cuda.get_arch_list(): "sm_90", …
    devices: tuple[TorchDevice, ...] | Unavailable
    cudnn_conv: str | Unavailable  # "ok", "not-run: <why>", "error: <text>": a convolution
    mapped_libraries: tuple[str, ...] | Unavailable  # libcudart/libcudnn*/… in /proc/self/maps
    file: str | Unavailable = NOT_RECORDED  # torch.__file__ of the torch that imported
    # (name, compute capability) of GPUs torch's own warnings name ("… with CUDA capability
    # sm_120 is not compatible …"): in a pasted report, some of the GPUs, not the list of them
    warned_gpus: tuple[tuple[str, str], ...] = ()
    # (name, compute capability) of the GPUs torch's own warning calls older than its build
    # supports ("PyTorch no longer supports this GPU because it is too old", "Minimum and
    # Maximum cuda capability supported by this version of PyTorch is (7.0) - (12.0)" for a
    # 6.1 GPU): no code of the build runs on them, PTX included (PTX runs only forward)
    too_old_gpus: tuple[tuple[str, str], ...] = ()
    # (name, compute capability) of the GPUs torch's `_check_cubins` warning calls not
    # compatible with its build ("… with CUDA capability sm_120 is not compatible with the
    # current PyTorch installation"): torch found no cubin of the GPU's major in its arch list
    # (it does not count PTX: an older architecture's PTX could still run there)
    incompatible_gpus: tuple[tuple[str, str], ...] = ()
    # the cuDNN torch says it was compiled against ("8.7.0"), from its own "cuDNN version
    # incompatibility: PyTorch was compiled against (8, 7, 0) but found runtime version
    # (8, 6, 0)" in a pasted report; NOT_RECORDED where torch did not say it
    cudnn_built: str | Unavailable = NOT_RECORDED
    # torch's CUDA error on a kernel launch that a pasted report quotes, when it says no code
    # runs on the GPU ("CUDA error: no kernel image is available for execution on the device"):
    # the kernel torch launched (its own, or an extension's) has no cubin or PTX for the GPU;
    # None where a report quotes none. A probe never records one, so a snapshot leaves the key
    # out when it is None (`OMITTED_WHEN_NONE`): a machine's snapshot reads as it was written
    launch_error: str | None = field(default=None, metadata={OMITTED_WHEN_NONE: True})


@dataclass(frozen=True, slots=True)
class TorchFacts:
    """PyTorch in the probed interpreter: installed (static) and imported (runtime)."""

    python: str | Unavailable  # the interpreter probed (a report may not name it)
    static: TorchStatic | Unavailable
    runtime: TorchRuntime | Unavailable
    seconds: float | Unavailable  # how long the child took (a report does not say)
    # that interpreter's version ("3.10.12"), torch or not: the install line must have wheels
    # for it (a report's "Python version" line; older snapshots did not record it)
    python_version: str | Unavailable = NOT_RECORDED
    # the release a pasted report names where it does not show which build it is ("PyTorch
    # Version: 1.7.1", no tag, no CUDA, no availability: `runtime` is then Unavailable), so
    # the rules that hold for every build of a release can judge it; None for a probe
    stated_version: str | None = None


# --------------------------------------------------------------------------- cuDNN


@dataclass(frozen=True, slots=True)
class ElfFacts:
    """What a library file's ELF headers state (`gpudoctor.elf` reads them)."""

    e_type: int  # 3 (ET_DYN) for a shared object, and for a position-independent program
    machine: str  # "x86_64", "aarch64", …
    interpreter: bool  # it has a PT_INTERP header: a program, not a library
    extent: int  # the least size its headers say the file has (more than `size`: cut short)


@dataclass(frozen=True, slots=True)
class CudnnLibrary:
    """One file of a cuDNN install: a libcudnn* library, or a cudnn*.h header."""

    name: str  # file name, e.g. "libcudnn_ops.so.9"
    path: str
    symlink_target: str | None  # os.readlink() when it is a symlink
    size: int  # bytes of the file it resolves to; -1 when it dangles
    mode: int  # permission bits of the resolved file (setuid/setgid/sticky too); -1: dangles
    world_readable: bool  # the resolved file has the o+r bit
    readable: bool = True  # this user can open it (os.access R_OK)
    # a shared library's (libcudnn*.so*) ELF headers, or why they could not be read (not ELF,
    # unreadable); None: not read (a header, a static archive, a snapshot from before)
    elf: ElfFacts | Unavailable | None = None
    # True: it loaded (ctypes, in a child); Unavailable: the loader's error, a crash, a
    # timeout; None: not tried (not a shared object by its headers, a snapshot from before)
    loads: bool | Unavailable | None = None


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


# --------------------------------------------------------------------------- smoke test


@dataclass(frozen=True, slots=True)
class SmokeFailure:
    """The smoke test ran but measured nothing; `message` says why, `fix` what to do."""

    reason: Reason
    message: str
    fix: str
    detail: str | None = None  # the child's stderr tail or traceback


# what `check --smoke` / `smoke-test` found; the measurements are in gpudoctor.model_smoke
SmokeFacts: TypeAlias = SmokeRun | DistributedRun | SmokeFailure
SMOKE_NOT_RUN = Unavailable(
    Reason.SKIPPED, "the smoke test did not run: pass --smoke (or run gpudoctor smoke-test)")


# --------------------------------------------------------------------------- snapshot


@dataclass(frozen=True, slots=True)
class Environment:
    """The snapshot: every fact, frozen; JSON round-trips exactly (`gpudoctor.snapshot`)."""

    gpudoctor_version: str
    created: str  # ISO 8601, UTC
    host: HostFacts | Unavailable
    nvml: NvmlFacts | Unavailable
    libcuda: LibcudaFacts | Unavailable
    toolkits: ToolkitsFacts | Unavailable  # the CUDA toolkits found (snapshots before v2: "cuda")
    torch: TorchFacts | Unavailable
    cudnn: CudnnFacts | Unavailable
    smoke: SmokeFacts | Unavailable = SMOKE_NOT_RUN  # `check --smoke`, `smoke-test`
    # the pasted reports the facts were read from ("collect_env in issue-123.md"); () when the
    # probes gathered them on this machine
    sources: tuple[str, ...] = ()
    requirements: tuple[Requirement, ...] = ()  # `check --require gpus>=8`: GD601-GD607 judge


# the Environment fields a check can read (`Check.reads`); the other three are metadata (which
# gpudoctor, when, and from which pasted reports: advice may say "the report", any check may)
ENVIRONMENT_FIELDS: frozenset[str] = frozenset(f.name for f in fields(Environment)) - {
    "gpudoctor_version", "created", "sources"}


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
    # this finding's own severity, where it differs from the check's: INFO makes a WARN a note
    # (e.g. no driver on a machine with no GPU), WARNING makes an INFO check's WARN a warning
    severity: Severity | None = None


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
