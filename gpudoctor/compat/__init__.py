"""The bundled compatibility tables (``compat_tables/*.toml``) and the queries checks ask of them.

Every row carries ``source`` (URL of the primary document) and ``status``: ``verified``,
``copy``, ``secondary``, ``derived``, ``exists`` (only the release's existence was checked) or
``unverified`` (see ``compat_tables/README.md``).
Unverified rows are kept so that messages can mention them; queries that return a row expose
its ``status`` so the caller decides, and queries that return a bare answer (a version string,
a tuple of variants) leave unverified rows out unless asked.

Version strings stay exactly as the source printed them (driver "580.65.06", not "580.65.6");
they are parsed with `packaging.version.Version` only to compare. Query arguments are strings,
and one that does not parse gives None (or ``()``), never an exception: probes hand over
whatever the machine printed.

This package is the compat layer: `Tables` and `load_tables` here; the row types in `rows`
(re-exported here), the TOML reader and validator in `load`, the `gpudoctor compat` subjects in
`query/`, the one source of torch install advice in `advice`, and `recommend`. Version decoding
(CUDA/cuDNN integers, `sm_XY`, "X.Y") lives in the leaf `gpudoctor.versions`.
"""

from __future__ import annotations

import datetime
import functools
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import Version

from gpudoctor.compat.load import known_until as _known_until
from gpudoctor.compat.load import load_rows
from gpudoctor.compat.rows import (
    _V,
    EXISTS,
    STATUSES,
    UNVERIFIED,
    CompatTableError,
    CudaFamily,
    CudaRelease,
    CudnnLayout,
    CudnnRelease,
    CudnnSupport,
    CudnnTarball,
    DriverBranch,
    DriverMinimum,
    FactStatus,
    GpuArch,
    GpuProduct,
    KnownBadCudnn,
    Sourced,
    TarballFormat,
    TorchRelease,
    TorchVariant,
    _newest,
    _within,
)
from gpudoctor.versions import minor_key as _minor_key
from gpudoctor.versions import normalize_cc
from gpudoctor.versions import parse_version as _ver
from gpudoctor.versions import release3 as _release3

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from gpudoctor.compat.gpu_names import GpuMatch

__all__ = [
    "EXISTS",
    "STATUSES",
    "UNVERIFIED",
    "CompatTableError",
    "CudaFamily",
    "CudaRelease",
    "CudnnLayout",
    "CudnnRelease",
    "CudnnSupport",
    "CudnnTarball",
    "DriverBranch",
    "DriverMinimum",
    "FactStatus",
    "GpuArch",
    "GpuProduct",
    "KnownBadCudnn",
    "Sourced",
    "Tables",
    "TarballFormat",
    "TorchRelease",
    "TorchVariant",
    "known_until",
    "load_tables",
    "tables_dir",
]


# --- The tables and their queries --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tables:
    """All compat tables, validated; every tuple is sorted oldest first."""

    cuda_releases: tuple[CudaRelease, ...]
    cuda_families: tuple[CudaFamily, ...]
    driver_branches: tuple[DriverBranch, ...]
    cudnn_releases: tuple[CudnnRelease, ...]
    cudnn_layouts: tuple[CudnnLayout, ...]
    tarball_formats: tuple[TarballFormat, ...]
    known_bad: tuple[KnownBadCudnn, ...]
    torch_releases: tuple[TorchRelease, ...]
    gpu_archs: tuple[GpuArch, ...]
    cudnn_support: tuple[CudnnSupport, ...]
    gpu_products: tuple[GpuProduct, ...] = ()  # gpu.toml [[product]]: NVIDIA's CUDA GPUs pages
    known_until: datetime.date | None = None  # cuda.toml: checked against the sources until

    def cuda_min_driver(self, cuda: str) -> DriverMinimum | None:
        """The driver CUDA "X.Y" (or "X.Y.Z") needs; None if that minor is not in the tables.

        `full`: Linux driver of the minor's GA release, or of the exact release when "X.Y.Z"
        names one ("12.4.1"); any other third field (a date, a cudart build) means the GA.
        `family`: the minor-version-compatibility floor of the major (CUDA >= 11).
        """
        key = _minor_key(cuda)
        rows = [r for r in self.cuda_releases if key and _minor_key(r.version) == key]
        if key is None or not rows:
            return None
        exact = next((r for r in rows if cuda.count(".") > 1 and _ver(r.version) == _ver(cuda)),
                     None)
        row = exact or next((r for r in rows if r.kind == "ga"), rows[0])
        fam = next((f for f in self.cuda_families if f.major == key[0]), None)
        return DriverMinimum(
            exact.version if exact else f"{key[0]}.{key[1]}", row.min_driver_linux,
            fam.min_driver_linux if fam else None, row.min_driver_windows,
            fam.min_driver_windows if fam else None, row.source, row.status,
            fam.source if fam else None, fam.status if fam else None,
        )

    def cuda_for_driver(self, driver: str, *, include_unverified: bool = False) -> str | None:
        """Highest CUDA "X.Y" a Linux driver reports (None: older than every branch).

        The rule: every release of a driver branch reports the branch's CUDA (its `min_driver`,
        the toolkit GA's requirement, can be a later point release: 390.12 reports 9.1, whose
        GA asks for 390.46; the CUDA 9.1.85 installer itself shipped 387.26). Derived; prefer
        cudaDriverGetVersion / NVML's CUDA version when available.
        """
        version, best = _ver(driver), None
        for row in self.driver_branches:
            if version is None or (row.status == UNVERIFIED and not include_unverified):
                continue
            # a driver reports its branch's CUDA from its first release on (R390's 390.12
            # beta reports 9.1, below 9.1's GA requirement 390.46): the branch decides
            ok = version.release[0] >= row.branch
            if ok and (best is None or _V(row.cuda) > _V(best)):
                best = row.cuda
        return best

    def cuda_family(self, cuda: str) -> CudaFamily | None:
        """The `[[family]]` row of CUDA "X.Y"'s major: the driver floor under which no CUDA X.y
        runs, and above which every X.y runs by minor-version compatibility (CUDA >= 11)."""
        version = _ver(cuda)
        return next((f for f in self.cuda_families if version and f.major == version.release[0]),
                    None)

    def cuda_not_held(self, cuda: str) -> str:
        """Why the tables hold no row for CUDA `cuda`, for a message: "newer than the bundled
        tables (newest known: 13.4.2)", or "not in the bundled tables" for a gap."""
        newest = self.newest_cuda(include_unverified=True).version
        version = _ver(cuda)
        if version and version > _V(newest) and _minor_key(cuda) != _minor_key(newest):
            return f"newer than the bundled tables (newest known: {newest})"
        return "not in the bundled tables"

    def newest_cuda(self, *, include_unverified: bool = False) -> CudaRelease:
        """The newest CUDA release in the tables."""
        return _newest(self.cuda_releases, lambda r: r.version, include_unverified)

    def torch_release(self, version: str) -> TorchRelease | None:
        """A release by version: "2.1.0", "2.1", "2.13.0+cpu" (local tags are ignored), and a
        post-release by its release ("1.0.1.post2", a rebuild of 1.0.1's code)."""
        parsed = _ver(version)
        public = Version(re.sub(r"\.post\d+$", "", parsed.public)) if parsed else None
        return next((r for r in self.torch_releases if _V(r.version) == public), None)

    def torch_variant(self, version: str) -> TorchVariant | None:
        """The wheel variant a torch version names: its local tag ("2.5.1+cu124": cu124), or,
        without one, its release's PyPI default ("2.5.1": what plain `pip install torch`
        gives); None where the tables hold no such variant."""
        base, _, tag = version.partition("+")
        release = self.torch_release(base)
        return release.variant(tag or release.pypi_default or "") if release else None

    def newest_torch(self, *, include_unverified: bool = False) -> TorchRelease:
        """The newest PyTorch release in the tables."""
        return _newest(self.torch_releases, lambda r: r.version, include_unverified)

    def torch_variants_for_driver(
        self, driver: str, torch_version: str | None = None, *, minor_version_compat: bool = True
    ) -> tuple[TorchVariant, ...]:
        """Variants of a release (default: `newest_torch()`) a Linux driver runs, newest CUDA first.

        Rule: PyTorch's wheels bring their own CUDA runtime and rely on minor-version
        compatibility, so for CUDA >= 11 a variant runs when the driver meets its major's family
        floor: 535.104.05 runs cu124 (12.x needs >= 525.60.13), within MVC's limits (no JIT of
        newer PTX; an API may raise cudaErrorCallRequiresNewerDriver). With
        `minor_version_compat=False`, and always for CUDA < 11, the variant's GA driver is needed
        (535.104.05 then gets cu121 first). Unverified driver minima are never used. The rule is
        `gpudoctor.compat.rules.driver_for_cuda`'s.
        """
        from gpudoctor.compat.rules import driver_runs  # the rules read the Tables defined here

        release = self.torch_release(torch_version) if torch_version else self.newest_torch()
        if release is None or _ver(driver) is None:
            return ()
        allowed = ("full", "mvc") if minor_version_compat else ("full",)
        runnable = [v for v in release.variants if driver_runs(self, driver, v.cuda) in allowed]
        return tuple(sorted(runnable, key=lambda v: _V(v.cuda), reverse=True))

    def gpu_arch(self, cc: str) -> GpuArch | None:
        """The row of a compute capability: "8.6", "sm_86", "86", "sm_90a"."""
        norm = normalize_cc(cc)
        return next((a for a in self.gpu_archs if a.cc == norm), None)

    def match_gpu(self, name: str) -> GpuMatch | None:
        """The [[product]] row a GPU name (as NVML, nvidia-smi or torch print it) names, and the
        rule that placed it (`gpudoctor.compat.gpu_names`); None: no rule places it."""
        # lazy: only a GPU name is matched here, and a GPU-less `check` never names one; the
        # module's 13 patterns and 2 dataclasses cost ~6 ms of every start-up otherwise
        from gpudoctor.compat.gpu_names import match_gpu

        return match_gpu(name, self.gpu_products)

    def find_gpu(self, name: str) -> GpuArch | None:
        """The arch of a product name a user typed ("RTX 3090", "NVIDIA H100 80GB HBM3")."""
        found = self.match_gpu(name)
        return self.gpu_arch(found.cc) if found else None

    def gpu_of_product(self, name: str) -> GpuArch | None:
        """The arch of a GPU as a driver names it ("NVIDIA GeForce RTX 4090 Laptop GPU",
        "Tesla V100-SXM2-16GB"), for a report that gives only the name. The row returned is
        the arch row as this name earns it: `source` the product row's page, `status` the
        product row's (or "derived" when a variant or series rule placed it), and `note` how
        it matched. None: no rule places the name, or its arch row is unverified."""
        found = self.match_gpu(name)
        arch = self.gpu_arch(found.cc) if found else None
        if found is None or arch is None or arch.status == UNVERIFIED:
            return None
        status = found.product.status if found.rule == "name" else "derived"
        return replace(arch, source=found.product.source, status=status,
                       note=f"{name!r} matched {found.describe()}")

    def cudnn_release(self, version: str) -> CudnnRelease | None:
        """A release by version: "7.6.5", "7.6.5.32", "9.1" (the build part is ignored)."""
        key = _release3(version)
        return next((r for r in self.cudnn_releases if key and _release3(r.version) == key), None)

    def newest_cudnn(self, *, include_unverified: bool = False) -> CudnnRelease:
        """The newest cuDNN release in the tables."""
        return _newest(self.cudnn_releases, lambda r: r.version, include_unverified)

    def cudnn_for_cuda(self, cuda: str) -> tuple[CudnnRelease, ...]:
        """cuDNN releases with a build for CUDA "X.Y", newest first."""
        rows = [r for r in self.cudnn_releases if r.supports_cuda(cuda)]
        return tuple(sorted(rows, key=lambda r: _V(r.version), reverse=True))

    def cudnn_layout(self, major: int) -> CudnnLayout | None:
        """Headers, libraries and version encoding of cuDNN `major` (7, 8, 9); None if unknown."""
        return next((r for r in self.cudnn_layouts if r.major == major), None)

    def known_bad_cudnn(self, version: str) -> str | None:
        """Why a cuDNN release should not be used, if a published defect is recorded."""
        key = _release3(version)
        return next((r.reason for r in self.known_bad if key and _release3(r.version) == key), None)

    def cudnn_gpu_support(self, version: str, cuda_build: str | None = None
                          ) -> CudnnSupport | None:
        """The compute capabilities NVIDIA's support matrix gives cuDNN `version`: the row's
        `min_cc` and `max_cc` (inclusive). None: not recorded.

        Without `cuda_build`, the range over all the release's CUDA builds. With it ("12.8",
        "12.8.1", or a bare major "13"), the range of the build for that CUDA where the matrix
        differs by build (Blackwell only in the 12.8+ builds of 9.7-9.10, Turing only in the
        CUDA 10 builds of 7.6); where it does not, the release's range.
        """
        key = _release3(version)
        rows = [r for r in self.cudnn_support if key and _within(key, r.first, r.last)]
        build = next((r for r in rows if cuda_build and r.covers_cuda(cuda_build)), None)
        return build or next((r for r in rows if r.cuda is None), None)

    def cudnn_support_rows(self, version: str) -> tuple[CudnnSupport, ...]:
        """Every `[[cudnn_support]]` row of cuDNN `version`: the release's range (over all its
        builds) first, then the rows of the CUDA builds whose range differs from it."""
        key = _release3(version)
        rows = [r for r in self.cudnn_support if key and _within(key, r.first, r.last)]
        return tuple(sorted(rows, key=lambda r: (r.cuda is not None, _build_order(r.cuda))))

    def cudnn_tarball_format(self, version: str) -> TarballFormat | None:
        """The naming/unpack era of a cuDNN release ("8.9.7" -> `..._cuda12-archive.tar.xz`)."""
        key = _release3(version)
        return next((f for f in self.tarball_formats if key and _within(key, f.first, f.last)),
                    None)

    def cudnn_tarball(self, name: str) -> CudnnTarball | None:
        """Parse a Linux x86_64 cuDNN tarball name of either era; None if it is not one."""
        base = name.rsplit("/", 1)[-1]
        for fmt in self.tarball_formats:
            regex = re.escape(fmt.pattern).replace(r"\{cuda\}", r"(?P<cuda>\d+(?:\.\d+)?)")
            match = re.fullmatch(regex.replace(r"\{build\}", r"(?P<build>\d+(?:\.\d+){0,3})"), base)
            if match and self.cudnn_tarball_format(match["build"]) is fmt:
                stem = re.sub(r"\.(tgz|tar\.xz)$", "", base)
                dirs = fmt.include_dir.format(stem=stem), fmt.lib_dir.format(stem=stem)
                return CudnnTarball(base, match["build"], match["cuda"], fmt, *dirs)
        return None


def _build_order(cuda: str | None) -> tuple[int, ...]:
    """A CUDA build key ("9.0-9.2", "12", "12.8-12.9") in numeric order."""
    first = (cuda or "0").split("-")[0]
    return tuple(int(part) for part in first.split(".") if part.isdigit())


# --- Loading (the parser and validator live in gpudoctor.compat.load) -------------------------


def tables_dir() -> Traversable:
    """Where the shipped tables are: inside the wheel (gpudoctor/compat_tables), else at the
    top of the source checkout. The package is always a directory on disk (the wheel is
    unpacked; never imported from a zip), so a path does what importlib.resources would, without
    its ~15 ms of imports on every `check`."""
    packaged = Path(__file__).resolve().parents[1] / "compat_tables"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "compat_tables"


@functools.lru_cache(maxsize=1)
def known_until() -> datetime.date:
    """The date up to which the shipped tables were checked against their sources (cuda.toml
    `known_until`); a release after it may be missing from them. Reads one file, cached."""
    return _known_until(tables_dir())


@functools.lru_cache(maxsize=1)
def _default_tables() -> Tables:
    return Tables(**load_rows(tables_dir()))


def load_tables(path: Path | None = None) -> Tables:
    """Load and validate the tables in directory `path` (default: the shipped ones, cached).

    Raises CompatTableError, naming the file and the row, for a missing or malformed table.
    """
    if path is None:
        return _default_tables()
    return Tables(**load_rows(path))
