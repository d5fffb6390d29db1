"""The family rules: what decides a verdict where the tables hold no exact row.

The tables hold published rows (a wheel's arch list, a CUDA release's minimum driver, a cuDNN
release's CUDA builds and GPU range). NVIDIA's documents also state rules that hold for a
whole family, and those decide wherever a row is missing: a wheel whose arch list the tables
lack, a CUDA or cuDNN release newer than the tables. Each rule lives here once, with its
source; a check, `recommend` and the compat queries ask this module, and every `Ruling` says
which rule (or which row) decided, so the finding can say it.

- **Arch** (`arch_in_build`): a build holds GPU code only for what its CUDA release's nvcc
  compiles (the nvcc GPU feature list of each release; the `[[arch]]` rows of gpu.toml give
  each compute capability's first and last toolkit). NVIDIA retires architectures oldest
  first and never brings one back (CUDA 11.0 dropped sm_30, 12.0 sm_35/sm_37, 13.0 sm_50 to
  sm_72), and newer code never runs on an older GPU: a cubin runs only on the same major with
  an equal or higher minor, PTX is JIT-compiled only forward (`gpudoctor.versions`). So a
  CUDA 13 build cannot run on a GTX 1080 (sm_61), whatever its arch list.
- **Driver** (`driver_for_cuda`): the release's own row first (the release notes' minimum
  driver: full feature set); a driver that reports a CUDA version at least as new runs it
  (backward compatibility); from CUDA 11 on, a driver at or above its major's floor runs every
  minor of that major by minor-version compatibility (11.x ≥ 450.80.02, 12.x ≥ 525.60.13,
  13.x ≥ 580.65.06: the `[[family]]` rows), with limits; before CUDA 11 there is no such rule,
  and a release without a row cannot be judged.
- **cuDNN ↔ CUDA** (`cudnn_runs_with_cuda`): from CUDA 11 on, a cuDNN build for CUDA N runs
  with every CUDA N.x; before, a build serves the CUDA minors it names.
- **cuDNN ↔ GPU** (`cudnn_supports_gpu`): the support matrix's range first; without a row, a
  cuDNN build cannot support a GPU its CUDA's compiler cannot target (the arch rule), nor one
  older than the lowest compute capability of the newest recorded release of its major
  (cuDNN, like CUDA, drops GPUs oldest first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import Version

from gpudoctor.compat.rows import UNVERIFIED, GpuArch
from gpudoctor.versions import minor_key, parse_cc, parse_version, release3, sm_name

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


@dataclass(frozen=True, slots=True)
class Rule:
    """A published rule that holds for a family of releases, and where it is written."""

    name: str
    text: str
    source: str


NVCC_ARCHS = Rule(
    "arch-range",
    "a build holds GPU code only for the compute capabilities its CUDA release's nvcc compiles; "
    "NVIDIA retires architectures oldest first and never brings one back",
    "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list")
BINARY_COMPAT = Rule(
    "binary-compatibility",
    "a cubin runs only on GPUs of the same major with an equal or higher minor; PTX is "
    "JIT-compiled only for the same or a newer GPU",
    "https://docs.nvidia.com/cuda/blackwell-compatibility-guide/")
DRIVER_ROW = Rule(
    "release-driver",
    "each CUDA release's minimum driver for its full feature set",
    "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html")
BACKWARD = Rule(
    "backward-compatibility",
    "a driver runs what any CUDA release up to the version it reports builds",
    "https://docs.nvidia.com/deploy/cuda-compatibility/index.html")
MINOR_VERSION = Rule(
    "minor-version-compatibility",
    "from CUDA 11 on, a driver at or above its major's floor runs every release of that major, "
    "without JIT of newer PTX and with calls that may return cudaErrorCallRequiresNewerDriver",
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html")
CUDNN_MATRIX = Rule(
    "cudnn-support-matrix",
    "NVIDIA's cuDNN support matrix: the CUDA builds and compute capabilities of each release",
    "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html")
CUDNN_PER_MAJOR = Rule(
    "cudnn-build-per-major",
    "from CUDA 11 on, a cuDNN build for CUDA N runs with every CUDA N.x (minor-version "
    "compatibility); before, a build serves the CUDA minors it names",
    "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html")
CUDNN_GPU_FLOOR = Rule(
    "cudnn-gpu-floor",
    "cuDNN drops GPUs oldest first: a newer release never supports a compute capability below "
    "the lowest of the newest recorded release of its major",
    "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html")

RULES = (NVCC_ARCHS, BINARY_COMPAT, DRIVER_ROW, BACKWARD, MINOR_VERSION, CUDNN_MATRIX,
         CUDNN_PER_MAJOR, CUDNN_GPU_FLOOR)


@dataclass(frozen=True, slots=True)
class Ruling:
    """A verdict, the sentence with its numbers, and the rule (or row) that decided it."""

    verdict: str
    why: str
    rule: Rule
    by_row: bool = False  # an exact table row decided, not the family rule

    @property
    def cited(self) -> str:
        """"<why> (rule: <name>, <source>)" for a finding's message."""
        what = "table row" if self.by_row else "rule"
        return f"{self.why} ({what}: {self.rule.name}, {self.rule.source})"


# --------------------------------------------------------------------------- arch


def _rows(tables: Tables) -> list[tuple[tuple[int, int], GpuArch]]:
    out = []
    for a in tables.gpu_archs:
        cc = parse_cc(a.cc)
        if cc is not None and a.status != UNVERIFIED:
            out.append((cc, a))
    return sorted(out, key=lambda r: r[0])


def _compiles(a: GpuArch, key: tuple[int, int]) -> bool:
    first = minor_key(a.first_cuda) if a.first_cuda else None
    last = minor_key(a.last_cuda) if a.last_cuda else None
    return (first is None or first <= key) and (last is None or key <= last)


def _retired(a: GpuArch, key: tuple[int, int]) -> bool:
    last = minor_key(a.last_cuda) if a.last_cuda else None
    return last is not None and last < key


def arch_in_build(tables: Tables, cuda: str, cc: str) -> Ruling:
    """Whether a build of CUDA `cuda` ("13.0", "12.8.1") can hold code that runs on compute
    capability `cc`. Verdicts:

    - "cannot": CUDA `cuda` compiles for nothing that runs there (the GPU's architecture was
      retired before it): no arch list can help;
    - "sass": it compiles cubins that run there (the GPU's own, or a lower minor of its major);
      whether a given build has them is its arch list's to say;
    - "ptx-only": it compiles nothing of the GPU's major up to it, only older architectures,
      whose PTX the driver may JIT-compile;
    - "unknown": the GPU table cannot tell.
    """
    key, target = minor_key(cuda), parse_cc(cc)
    if key is None or target is None:
        return Ruling("unknown", f"CUDA {cuda!r} or compute capability {cc!r} does not parse",
                      NVCC_ARCHS)
    gpu, build = sm_name(target), f"CUDA {key[0]}.{key[1]}"
    rows = _rows(tables)
    own = next((a for c, a in rows if c == target), None)
    compiled = [c for c, a in rows if _compiles(a, key)]
    if own is not None and _retired(own, key):
        return Ruling("cannot", f"no {build} build can hold code for {gpu} ({own.family}): CUDA "
                      f"{own.last_cuda} was the last release that compiles for it, and newer "
                      "architectures' code never runs on an older GPU", NVCC_ARCHS)
    if own is None and compiled and target < compiled[0]:
        gone = [(c, a) for c, a in rows if c < compiled[0] and _retired(a, key)]
        if gone:  # the floor moved up past the GPU: everything below it was retired
            return Ruling("cannot", f"no {build} build can hold code for {gpu}: {build} "
                          f"compiles for {sm_name(compiled[0])} and newer only (it retired "
                          f"{sm_name(gone[-1][0])} and everything older)", NVCC_ARCHS)
    if any(c[0] == target[0] and c <= target for c in compiled):
        return Ruling("sass", f"{build} compiles cubins that run on {gpu}", NVCC_ARCHS)
    if any(c < target for c in compiled):
        return Ruling("ptx-only", f"{build} compiles nothing of {gpu}'s major up to it: only "
                      "PTX of an older architecture, JIT-compiled by the driver, can run on it",
                      BINARY_COMPAT)
    return Ruling("unknown", f"the GPU table cannot tell whether {build} compiles for {gpu}",
                  NVCC_ARCHS)


# --------------------------------------------------------------------------- driver


def driver_for_cuda(tables: Tables, driver: str | None, cuda: str,
                    reports: str | None = None) -> Ruling:
    """How a Linux driver runs CUDA `cuda`: "full", "mvc" (only by minor-version
    compatibility), "no", or "unknown". `reports`: the highest CUDA the driver itself says it
    runs (NVML, cuDriverGetVersion), which decides "full" by backward compatibility. Unverified
    rows never decide."""
    want, told = parse_version(cuda), parse_version(reports) if reports else None
    if want is None:
        return Ruling("unknown", f"CUDA {cuda!r} does not parse", DRIVER_ROW)
    if told is not None and (told.major, told.minor) >= (want.major, want.minor):
        return Ruling("full", f"the driver reports CUDA {reports} ≥ {cuda}", BACKWARD)
    have = parse_version(driver) if driver else None
    if have is None:
        return Ruling("unknown", "the driver's version is not known", DRIVER_ROW)
    need = tables.cuda_min_driver(cuda)
    fam = tables.cuda_family(cuda)
    floor = fam.min_driver_linux if fam and fam.status != UNVERIFIED else None
    if need is not None and need.full and need.status != UNVERIFIED:
        if have >= Version(need.full):
            return Ruling("full", f"driver {driver} ≥ {need.full}, CUDA {need.cuda}'s driver",
                          DRIVER_ROW, by_row=True)
        if floor and have >= Version(floor):
            return Ruling("mvc", f"driver {driver} is older than {need.full} (CUDA {need.cuda}'s "
                          f"driver) but at or above the CUDA {want.major} floor {floor}",
                          MINOR_VERSION)
        return Ruling("no", f"driver {driver} is older than {need.full}, CUDA {need.cuda}'s "
                      "driver" + (f", and than the CUDA {want.major} floor {floor}" if floor
                                  else ""), DRIVER_ROW, by_row=True)
    held = (f"CUDA {cuda} is {tables.cuda_not_held(cuda)}" if need is None
            else f"the tables hold no verified Linux driver for CUDA {cuda}")
    if floor is None:
        why = ("no minor-version compatibility before CUDA 11" if want.major < 11 else
               f"no CUDA {want.major} family floor is recorded")
        return Ruling("unknown", f"{held}, and {why}", MINOR_VERSION)
    if have >= Version(floor):
        return Ruling("mvc", f"{held}: driver {driver} ≥ {floor}, the CUDA {want.major} floor, "
                      "runs it by minor-version compatibility (whether in full is not known)",
                      MINOR_VERSION)
    return Ruling("no", f"{held}: driver {driver} is older than {floor}, the CUDA {want.major} "
                  "floor", MINOR_VERSION)


def driver_runs(tables: Tables, driver: str, cuda: str) -> str | None:
    """`driver_for_cuda`'s verdict as "full", "mvc" or None (does not run, or cannot tell)."""
    verdict = driver_for_cuda(tables, driver, cuda).verdict
    return verdict if verdict in ("full", "mvc") else None


# --------------------------------------------------------------------------- cuDNN


def cudnn_runs_with_cuda(tables: Tables, version: str, cuda: str,
                         build_major: int | None = None) -> Ruling:
    """Whether cuDNN `version` has a build that runs with CUDA `cuda`: "yes", "no", "unknown".
    `build_major`: the CUDA major of the build at hand where the machine tells it (the
    `nvidia-cudnn-cuNN` wheel, the tarball's name), which decides for a release the tables
    lack."""
    want = minor_key(cuda)
    if want is None:
        return Ruling("unknown", f"CUDA {cuda!r} does not parse", CUDNN_MATRIX)
    release = tables.cudnn_release(version)
    if release is not None:
        if want[0] >= 11:
            majors = {b.split("-")[0].split(".")[0] for b in release.cuda_builds}
            ok = str(want[0]) in majors
            return Ruling("yes" if ok else "no", f"cuDNN {version} has "
                          f"{'a' if ok else 'no'} build for CUDA {want[0]} (its builds: "
                          f"{', '.join(release.cuda_builds)})", CUDNN_PER_MAJOR)
        ok = release.supports_cuda(cuda)
        return Ruling("yes" if ok else "no", f"cuDNN {version} has {'a' if ok else 'no'} build "
                      f"for CUDA {cuda} (its builds: {', '.join(release.cuda_builds)})",
                      CUDNN_MATRIX, by_row=True)
    if build_major is not None and want[0] >= 11:
        ok = build_major == want[0]
        return Ruling("yes" if ok else "no", f"cuDNN {version} is not in the tables; its build "
                      f"for CUDA {build_major} {'runs' if ok else 'does not run'} with CUDA "
                      f"{cuda}", CUDNN_PER_MAJOR)
    return Ruling("unknown", f"cuDNN {version} is not in the tables", CUDNN_MATRIX)


def cudnn_supports_gpu(tables: Tables, version: str, cc: str,
                       cuda_build: str | None = None) -> Ruling:
    """Whether cuDNN `version` (its build for CUDA `cuda_build`, where known) supports compute
    capability `cc`: "yes", "no", "unknown"; see the module."""
    target = parse_cc(cc)
    if target is None:
        return Ruling("unknown", f"compute capability {cc!r} does not parse", CUDNN_MATRIX)
    gpu = sm_name(target)
    row = tables.cudnn_gpu_support(version, cuda_build)
    first, key = release3(row.first) if row else None, release3(version)
    if row is not None and (first is None or key is None or first[0] != key[0]):
        row = None  # an open-ended row of an older major does not speak for a new one
    if row is not None and row.status != UNVERIFIED:
        ok = row.supports(cc)
        high = parse_cc(row.max_cc)
        if not ok and high is not None and target[0] == high[0] and target > high:
            # its code for the highest compute capability runs on a later minor of that major
            # (an RTX 4090, sm_89, on a cuDNN whose newest code is sm_86)
            return Ruling("yes", f"cuDNN {version} supports {row.range_text()}, and its code "
                          f"for {sm_name(high)} runs on {gpu} (same major, higher minor)",
                          BINARY_COMPAT)
        return Ruling("yes" if ok else "no", f"cuDNN {version} supports {row.range_text()}",
                      CUDNN_MATRIX, by_row=True)
    if cuda_build and minor_key(cuda_build) is None and cuda_build.strip().isdigit():
        cuda_build = f"{cuda_build.strip()}.0"  # a bare major ("13"): its first release
    if cuda_build:
        arch = arch_in_build(tables, cuda_build, cc)
        if arch.verdict == "cannot":
            return Ruling("no", f"cuDNN {version}'s support is not in the tables, but "
                          f"{arch.why}", NVCC_ARCHS)
    key = key or ()
    same = [(first, r) for r in tables.cudnn_support
            if r.cuda is None and r.status != UNVERIFIED and (first := release3(r.first))
            and key and first[0] == key[0] and first <= key]
    if same:
        newest = max(same, key=lambda fr: fr[0])[1]
        low = parse_cc(newest.min_cc)
        if low is not None and target < low:
            return Ruling("no", f"cuDNN {version}'s support is not in the tables; cuDNN "
                          f"{newest.first} and newer support {sm_name(low)} and up only, so "
                          f"not {gpu}", CUDNN_GPU_FLOOR)
    return Ruling("unknown", f"the tables do not record which GPUs cuDNN {version} supports",
                  CUDNN_MATRIX)
