"""What to install on this machine, by the compat tables: a PyTorch wheel and a cuDNN tarball.

`recommend(env, tables)` is pure. The PyTorch pick is the newest release that has a
non-experimental CUDA variant the driver runs and whose arch list includes every GPU's compute
capability. Within a release, the variants the driver runs with its full feature set come
before those it runs only by minor-version compatibility, and then the highest CUDA wins, so
the pick never draws a GD103 warning. A variant whose arch list the tables do not have is used
only when no confirmed one exists, and the pick then says so. The cuDNN pick is the newest
verified cuDNN release with a build for the toolkit in use that supports every GPU, with that
build's tarball name. When nothing fits, `notes` say why.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from gpudoctor.checks import facts as F
from gpudoctor.compat import (
    UNVERIFIED,
    Tables,
    TorchRelease,
    TorchVariant,
    arch_list_supports,
    normalize_cc,
)
from gpudoctor.compat_query import (
    VERIFIED,
    build_for,
    cudnn_tarball,
    driver_runs,
    minor_of,
    pip_line,
    torch_series,
)
from gpudoctor.model import Environment


@dataclass(frozen=True, slots=True)
class GpuSeen:
    """A GPU the recommendation is for."""

    name: str
    compute_capability: str  # "8.6"


@dataclass(frozen=True, slots=True)
class TorchPick:
    """One PyTorch wheel variant to install."""

    version: str  # "2.14.1"
    variant: str  # "cu126"
    cuda: str
    command: str  # the exact pip line
    arch_list: tuple[str, ...] | None  # None: not in the tables
    arch_confirmed: bool  # the arch list is known and includes every GPU
    runs: str  # "full", or "mvc" (only by minor-version compatibility)
    min_driver: str | None  # the full-feature driver of the variant's CUDA
    status: str
    source: str


@dataclass(frozen=True, slots=True)
class CudnnPick:
    """The cuDNN tarball for the toolkit in use."""

    toolkit: str
    prefix: str
    version: str
    build: str | None
    cuda_build: str  # the cuDNN build key that covers the toolkit ("10.1", "12", "11.0-11.8")
    tarball: str | None  # None: the name is not in the tables
    tarball_seen: bool  # the name was seen on NVIDIA's server (else: by the naming scheme)
    command: str | None  # `gpudoctor install-cudnn ...`
    status: str
    source: str


@dataclass(frozen=True, slots=True)
class Recommendation:
    """Everything `gpudoctor recommend` prints."""

    driver: str | None
    driver_cuda: str | None  # highest CUDA the driver runs, and how that was told
    gpus: tuple[GpuSeen, ...]
    installed_torch: str | None
    installed_fits: bool | None  # None: cannot be told from the tables
    installed_why: str | None  # why it does not fit, or why that cannot be told
    torch: TorchPick | None
    torch_installed_release: TorchPick | None  # a variant of the installed release that fits
    notes: tuple[str, ...]
    cudnn: CudnnPick | None
    cudnn_notes: tuple[str, ...]


def _gpus(env: Environment) -> tuple[GpuSeen, ...]:
    gpus = F.gpus(env)
    if gpus:
        return tuple(GpuSeen(g.name, g.compute_capability) for g in gpus)
    rt = F.torch_runtime(env)  # WSL and containers may have no NVML, but torch saw the GPUs
    return tuple(GpuSeen(d.name, d.capability) for d in rt.devices) if rt else ()


def _sm(cc: str) -> str:
    return "sm_" + cc.replace(".", "")


def _runs(env: Environment, tables: Tables, variant: TorchVariant) -> str | None:
    drv = F.driver_version(env)
    if drv and F.version(drv):
        return driver_runs(tables, drv, variant.cuda)
    told = F.driver_cuda(env, tables)  # no driver version (WSL): only what it reports
    return "full" if told and Version(variant.cuda) <= Version(told[0]) else None


def _fit(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str],
         force: bool) -> tuple[TorchPick | None, TorchPick | None]:
    """(the pick whose arch list includes every GPU, the first with an unknown arch list)."""
    runnable = [(v, how) for v in rel.variants
                if not v.experimental and (how := _runs(env, tables, v))]
    runnable.sort(key=lambda vh: (vh[1] == "full", Version(vh[0].cuda)), reverse=True)
    unknown = None
    for v, how in runnable:
        ok = v.arch_list is not None and all(arch_list_supports(v.arch_list, c) for c in ccs)
        need = tables.cuda_min_driver(v.cuda)
        pick = TorchPick(rel.version, v.tag, v.cuda, pip_line(rel, v, force=force), v.arch_list,
                         ok, how, need.full if need else None, rel.status, rel.source)
        if ok or not ccs:
            return pick, None
        if v.arch_list is None:
            unknown = unknown or pick
    return None, unknown


def _pick_torch(env: Environment, tables: Tables, ccs: list[str], force: bool
                ) -> tuple[TorchPick | None, list[str]]:
    notes: list[str] = []
    releases = [s[-1] for s in torch_series(tables)
                if s[-1].status != UNVERIFIED and s[-1].variants]
    fallback: TorchPick | None = None
    skipped: list[str] = []
    for rel in releases:
        pick, unknown = _fit(env, tables, rel, ccs, force)
        if pick:
            if fallback:
                notes.append(f"newer releases this driver runs may also include "
                             f"{', '.join(map(_sm, ccs))}, but their arch lists are not in the "
                             f"tables (torch {', '.join(skipped)}); the newest of them: "
                             f"{fallback.command}")
            if rel is not releases[0]:
                notes.insert(0, _why_not_newest(env, tables, releases[0], ccs))
            return pick, notes
        if unknown:
            fallback = fallback or unknown
            skipped.append(rel.version)
    if fallback:
        notes.append(f"the arch list of torch {fallback.version} {fallback.variant} is not in the "
                     f"tables: it may not include {', '.join(map(_sm, ccs))}")
        return fallback, notes
    notes.append(_why_not_newest(env, tables, releases[0], ccs) if releases else
                 "no PyTorch release in the tables")
    return None, notes


def _why_not_newest(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str]) -> str:
    runs = [v for v in rel.variants if not v.experimental and _runs(env, tables, v)]
    if not runs:
        needs = [tables.cuda_min_driver(v.cuda) for v in rel.variants]
        floors = [f for n in needs if n and (f := n.family or n.full)]
        low = min(floors, key=Version) if floors else "?"
        return (f"driver {F.driver_version(env) or '(version unknown)'} is too old for torch "
                f"{rel.version}: its wheels need driver ≥ {low}")
    gpus = ", ".join(map(_sm, ccs))
    lists = "; ".join(f"{v.tag}: {' '.join(v.arch_list or ('not in the tables',))}"
                      for v in runs)
    return f"torch {rel.version}'s wheels for this driver do not include {gpus} ({lists})"


def _installed(env: Environment, tables: Tables, ccs: list[str]
               ) -> tuple[str | None, TorchRelease | None, bool | None, str | None]:
    """The installed torch, its release row, whether it fits (None: unknown), and why not."""
    version = F.torch_version(env)
    if version is None:
        return None, None, None, None
    base, _, tag = version.partition("+")
    rel = tables.torch_release(base)
    if F.torch_cuda(env) is None:
        return version, rel, False, "a CPU-only build"
    variant = rel.variant(tag or rel.pypi_default or "") if rel else None
    if variant is None:
        return version, rel, None, "its variant is not in the tables"
    if F.driver_version(env) is None and F.driver_cuda(env, tables) is None:
        return version, rel, None, "no working NVIDIA driver found"
    if _runs(env, tables, variant) is None:
        return version, rel, False, f"the driver does not run its CUDA {variant.cuda}"
    if not ccs:
        return version, rel, None, "no GPU's compute capability is known"
    if variant.arch_list is None:
        return version, rel, None, "its arch list is not in the tables"
    missing = [_sm(c) for c in ccs if not arch_list_supports(variant.arch_list, c)]
    if missing:
        return version, rel, False, (f"its arch list ({' '.join(variant.arch_list)}) does not "
                                     f"include {', '.join(missing)}")
    return version, rel, True, None


def _pick_cudnn(env: Environment, tables: Tables, ccs: list[str]
                ) -> tuple[CudnnPick | None, list[str]]:
    tk, tv = F.toolkit(env), F.toolkit_version(env)
    if tk is None or tv is None:
        why = "no CUDA toolkit found" if tk is None else f"the version of {tk.root} is unreadable"
        return None, [f"{why}: a cuDNN tarball is only needed to build against a toolkit "
                      "(PyTorch wheels bring their own cuDNN)"]
    floor = min(ccs, key=minor_of) if ccs else None
    candidates = [r for r in tables.cudnn_for_cuda(tv)
                  if r.status in VERIFIED and not tables.known_bad_cudnn(r.version)]
    for rel in candidates:
        support = tables.cudnn_gpu_support(rel.version)
        if floor and (support is None or minor_of(floor) < minor_of(support.min_cc)):
            continue
        build = build_for(rel, tv) or tv
        tarball = cudnn_tarball(tables, rel, build)
        command = (f"gpudoctor install-cudnn --tarball {tarball[0]} --prefix {tk.root}"
                   if tarball else None)
        notes = [] if tarball else [f"the tarball name of cuDNN {rel.version} for CUDA {build} "
                                    "is not in the tables"]
        return CudnnPick(tv, tk.root, rel.version, rel.build, build,
                         tarball[0] if tarball else None, bool(tarball and tarball[1]), command,
                         rel.status, rel.source), notes
    if not candidates:
        return None, [f"no verified cuDNN release in the tables has a build for CUDA {tv}"]
    assert floor is not None
    older = next((r for r in reversed(tables.cudnn_releases) if r.status in VERIFIED
                  and (s := tables.cudnn_gpu_support(r.version))
                  and minor_of(floor) >= minor_of(s.min_cc)), None)
    last = (f"; the newest cuDNN for {_sm(floor)} is {older.version} (CUDA builds "
            f"{', '.join(older.cuda_builds)}): use a toolkit it has a build for" if older else "")
    return None, [f"no cuDNN release in the tables with a build for CUDA {tv} supports "
                  f"{_sm(floor)}{last}"]


def recommend(env: Environment, tables: Tables) -> Recommendation:
    """The torch wheel and the cuDNN tarball the tables say fit this machine; see the module."""
    gpus = _gpus(env)
    ccs = sorted({cc for g in gpus if (cc := normalize_cc(g.compute_capability))}, key=minor_of)
    drv, told = F.driver_version(env), F.driver_cuda(env, tables)
    installed, rel, fits, why = _installed(env, tables, ccs)
    force = installed is not None
    if drv is None and told is None:
        pick, notes = None, ["no working NVIDIA driver found (see `gpudoctor check GD101`): "
                             "fix that first; `gpudoctor compat torch VERSION` lists the driver "
                             "each wheel needs"]
    else:
        pick, notes = _pick_torch(env, tables, ccs, force)
        if not ccs:
            notes.append("no GPU's compute capability is known: the arch lists were not checked")
    same = None  # the installed release in a variant that fits, when the installed one does not
    if rel is not None and pick is not None and rel.version != pick.version and fits is not True:
        same = _fit(env, tables, rel, ccs, force)[0]
        if same and installed and installed.endswith("+" + same.variant):
            same = None
    cudnn, cudnn_notes = _pick_cudnn(env, tables, ccs)
    return Recommendation(drv, told[0] if told else None, gpus, installed, fits, why, pick, same,
                          tuple(notes), cudnn, tuple(cudnn_notes))
