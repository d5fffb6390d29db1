"""Which PyTorch wheel to install: the candidates and their order (`gpudoctor.compat.advice`
documents the preference; this module implements it). Pure.

Every (release, variant) of the tables is a candidate unless it cannot install or run here:
no wheels for the interpreter's Python, a driver that does not run its CUDA, an arch list
without some GPU, or (arch list unknown) a CUDA that cannot hold code for some GPU by the
arch rule. The rest are ranked by (wheels for this Python known, arch list confirmed, runs in
full, pairs the installed companions, release, the driver's order of variants), best first.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from gpudoctor import views as V
from gpudoctor.compat import UNVERIFIED, Tables, TorchRelease, TorchVariant, machine
from gpudoctor.compat.query import torch_series
from gpudoctor.compat.rules import arch_in_build, cudnn_supports_gpu, driver_for_cuda
from gpudoctor.compat.wheels import Target, pip_line, python_fits, pythons_text
from gpudoctor.model import Environment
from gpudoctor.versions import coverage, parse_cc, sm_of


@dataclass(frozen=True, slots=True)
class GpuSeen:
    """A GPU the advice is for."""

    name: str
    compute_capability: str  # "8.6"


@dataclass(frozen=True, slots=True)
class TorchPick:
    """One PyTorch wheel variant to install, and the line that installs it."""

    version: str  # "2.14.1"
    variant: str  # "cu126"
    cuda: str
    index_url: str
    command: str  # the exact pip line
    arch_list: tuple[str, ...] | None  # None: not in the tables
    arch_confirmed: bool  # the arch list is known and includes every GPU (and one was seen)
    runs: str  # "full", "mvc" (only by minor-version compatibility), "no-driver"
    min_driver: str | None  # the full-feature driver of the variant's CUDA
    status: str
    source: str
    pythons: tuple[str, ...] | None = None  # the CPython minors it has wheels for


@dataclass(frozen=True, slots=True)
class Line:
    """What the install line depends on besides the pick."""

    python: str | None  # the interpreter's path
    installed: str | None  # pip's view: the distribution's metadata version
    broken: str | None  # how the installed torch is broken, when reinstalling it mends that
    companions: tuple[tuple[str, str], ...]
    python_version: str | None = None  # "3.10.12": the wheels must exist for it

    def target(self) -> Target:
        """The builder's view of it."""
        return Target(self.python or "python", self.installed, self.broken is not None,
                      self.companions)


@dataclass(frozen=True, slots=True)
class _Candidate:
    rel: TorchRelease
    variant: TorchVariant
    how: str  # "full", "mvc", "no-driver", "no-toolkit" (no driver, not the toolkit's major)
    order: int  # the driver's order of the release's variants (0 best)
    confirmed: bool  # the arch list is known and covers every GPU
    native: bool  # cubins for every GPU: in its arch list, or (list unknown) its CUDA compiles them
    python: bool | None  # wheels for this Python: True, or None (not known)
    paired: bool  # pairs the installed torchvision / torchaudio

    def key(self) -> tuple[bool, bool, bool, bool, bool, bool, Version, int]:
        return (self.python is True, self.native, self.how != "mvc", self.how != "no-toolkit",
                self.confirmed, self.paired, Version(self.rel.version), -self.order)


def runs(env: Environment, tables: Tables, cuda: str) -> str | None:
    """How this machine's driver runs CUDA `cuda`: "full", "mvc", "no-driver" (no driver to
    tell), or None. What the driver itself reports decides first (backward compatibility);
    with no driver version (WSL), only that."""
    reported = V.reported_driver_cuda(env)
    drv = V.driver_version(env)
    if drv and V.version(drv):
        verdict = driver_for_cuda(tables, drv, cuda, reported[0] if reported else None).verdict
        return verdict if verdict in ("full", "mvc") else None
    told = machine.driver_cuda(env, tables)
    if told:
        return "full" if Version(cuda) <= Version(told[0]) else None
    return "no-driver"


def _variants(env: Environment, tables: Tables, rel: TorchRelease
              ) -> list[tuple[TorchVariant, str]]:
    """The release's variants this driver runs, best first, with how it runs each."""
    stable = [v for v in rel.variants if not v.experimental]
    runnable = [(v, how) for v in stable if (how := runs(env, tables, v.cuda))]
    if not runnable or runnable[0][1] != "no-driver":
        return sorted(runnable, key=lambda vh: (vh[1] == "full", Version(vh[0].cuda)),
                      reverse=True)
    tv = V.version(V.toolkit_version(env))
    if tv is None:
        stable = [v for v in stable if v.tag == rel.pypi_default] or stable
        return [(v, "no-driver") for v in sorted(stable, key=lambda v: Version(v.cuda),
                                                 reverse=True)]
    # torch.utils.cpp_extension refuses a toolkit of another CUDA major than torch's and only
    # warns of a minor mismatch: the same major, not newer than the toolkit first
    same = [v for v in stable if Version(v.cuda).major == tv.major]
    older = sorted((v for v in same if Version(v.cuda) <= tv), key=lambda v: Version(v.cuda),
                   reverse=True)
    newer = sorted((v for v in same if Version(v.cuda) > tv), key=lambda v: Version(v.cuda))
    # none of the toolkit's major: the PyPI default still installs and runs (only building
    # extensions against that toolkit would be refused); ranked after every match
    other = [v for v in stable if v not in same]
    other.sort(key=lambda v: (v.tag == rel.pypi_default, Version(v.cuda)), reverse=True)
    return [(v, "no-driver") for v in older + newer] + [(v, "no-toolkit") for v in other]


def _arch(tables: Tables, v: TorchVariant, ccs: list[str]) -> bool | str:
    """True: the arch list has cubins for every GPU; "ptx": it covers every GPU, some only by
    JIT-compiling PTX of an older architecture (slow first use, and the CUDA of the build
    predates the GPU: torch 1.5.1+cu102's compute_37 on an A100); False: it cannot (its list,
    or the arch rule for its CUDA, says so; or its cuDNN leaves a GPU out); "sass": the list
    is not known, and its CUDA compiles cubins for every GPU; "unknown": not known, and only
    PTX could run on some GPU."""
    if not ccs:  # no GPU's compute capability is known: no arch list can be checked
        return _cudnn_ok(tables, v, ccs)
    if v.arch_list is not None:
        found = [coverage(v.arch_list, cc) if (cc := parse_cc(c)) else None for c in ccs]
        if None in found or not _cudnn_ok(tables, v, ccs):
            return False
        return "ptx" if any(f is not None and f.arch.ptx for f in found) else True
    rulings = [arch_in_build(tables, v.cuda, c).verdict for c in ccs]
    if "cannot" in rulings or not _cudnn_ok(tables, v, ccs):
        return False
    return "sass" if all(r == "sass" for r in rulings) else "unknown"


def _cudnn_ok(tables: Tables, v: TorchVariant, ccs: list[str]) -> bool:
    """Whether the cuDNN the wheel bundles is not known to leave out a GPU (GD311 would fail
    it): the support matrix's row, else the cuDNN rules (`compat.rules.cudnn_supports_gpu`)."""
    return not v.cudnn or all(
        cudnn_supports_gpu(tables, v.cudnn, c, v.cuda).verdict != "no" for c in ccs)


def _candidates(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str],
                line: Line) -> list[_Candidate]:
    python = python_fits(rel, line.python_version)
    if python is False or rel.status == UNVERIFIED or not rel.variants:
        return []
    paired = all(_paired(rel, name) for name, _ in line.companions)
    out = []
    for i, (v, how) in enumerate(_variants(env, tables, rel)):
        arch = _arch(tables, v, ccs)
        if arch is not False:
            out.append(_Candidate(rel, v, how, i, arch in (True, "ptx"), arch in (True, "sass"),
                                  python, paired))
    return out


def _paired(rel: TorchRelease, name: str) -> str | None:
    return rel.torchvision if name == "torchvision" else \
        rel.torchaudio if name == "torchaudio" else None


def _releases(tables: Tables, companions: tuple[tuple[str, str], ...]) -> list[TorchRelease]:
    """One release per series, newest first: its newest patch, or the newest that pairs the
    installed companions."""
    out = []
    for series in torch_series(tables):
        newest = series[-1]
        if newest.status != UNVERIFIED and newest.variants:
            out.append(next((r for r in reversed(series)
                             if all(_paired(r, n) for n, _ in companions)), newest))
    return out


def _as_pick(tables: Tables, c: _Candidate, ccs: list[str], line: Line) -> TorchPick:
    need = tables.cuda_min_driver(c.variant.cuda)
    return TorchPick(c.rel.version, c.variant.tag, c.variant.cuda, c.variant.index_url,
                     pip_line(c.rel, c.variant, line.target()), c.variant.arch_list,
                     c.confirmed and bool(ccs), "no-driver" if c.how == "no-toolkit" else c.how,
                     need.full if need else None,
                     c.rel.status, c.rel.source, c.rel.python)


def best_fit(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str], line: Line
             ) -> TorchPick | None:
    """`rel`'s best variant whose arch list is confirmed for every GPU, None if none is."""
    found = [c for c in _candidates(env, tables, rel, ccs, line) if c.confirmed]
    return _as_pick(tables, max(found, key=_Candidate.key), ccs, line) if found else None


def pick_torch(env: Environment, tables: Tables, ccs: list[str], line: Line
               ) -> tuple[TorchPick | None, list[str]]:
    """The best candidate over every release, and notes on why it is not the newest."""
    releases = _releases(tables, line.companions)
    if not releases:
        return None, ["no PyTorch release in the tables"]
    found = [c for rel in releases for c in _candidates(env, tables, rel, ccs, line)]
    if not found:
        return None, [_why_not(env, tables, releases[0], ccs, line)]
    best = max(found, key=_Candidate.key)
    notes = []
    if best.rel.version != releases[0].version:
        notes.append(_why_not(env, tables, releases[0], ccs, line))
    if line.companions and not best.paired:
        names = " and ".join(n for n, _ in line.companions)
        notes.append(f"no release that fits here pairs the installed {names}")
    elif line.companions and not all(_paired(releases[0], n) for n, _ in line.companions):
        names = " and ".join(n for n, _ in line.companions)
        notes.append(f"the tables pair no {names} with the newest torch, "
                     f"{tables.newest_torch().version}: the pick keeps to releases that have "
                     f"one, as {names} {'are' if len(line.companions) > 1 else 'is'} "
                     "installed beside torch")
    said = " ".join(notes)  # what the newest release's note says is not said twice
    newer = [n for n in _newer(tables, best, found, ccs, line)
             if not ("minor-version" in n and "minor-version" in said
                     and f"torch {releases[0].version} " in n)]
    if any(n.startswith("newer releases may also include") for n in newer):
        notes = [n for n in notes if "have no arch list in the tables confirming" not in n]
    notes += newer
    if ccs and not best.confirmed:
        rulings = "; ".join(arch_in_build(tables, best.variant.cuda, c).why for c in ccs)
        notes.append(f"the arch list of torch {best.rel.version} {best.variant.tag} is not in "
                     f"the tables: it may not include {', '.join(map(sm_of, ccs))} (by the arch "
                     f"rule: {rulings})")
    if best.how == "mvc":
        need = tables.cuda_min_driver(best.variant.cuda)
        unsure = [c for c in found if c.how != "mvc" and c.python is None and c.native]
        also = (f" (torch {max(unsure, key=_Candidate.key).rel.version} would, but the tables "
                f"do not list its Pythons)" if unsure and best.python is True else "")
        notes.append(f"no wheel that fits here runs on driver {V.driver_version(env)} with its "
                     f"full feature set{also}: this one runs by minor-version compatibility "
                     f"(GD103 warns); a driver ≥ {need.full if need else '?'} runs it in full")
    if best.how == "no-toolkit":
        notes.append(f"no release that installs here has a wheel of the CUDA "
                     f"{V.toolkit_version(env)} toolkit's major: torch {best.rel.version} "
                     f"{best.variant.tag} runs, but building CUDA extensions against that "
                     "toolkit will be refused (torch.utils.cpp_extension wants torch's major)")
    if line.python_version is None:
        notes.append(f"the interpreter's Python version is not known: torch "
                     f"{best.rel.version} has wheels for {pythons_text(best.rel)}")
    elif best.python is None:
        notes.append(f"the tables do not list the Pythons torch {best.rel.version} has wheels "
                     f"for: check that it has one for Python {line.python_version}")
    return _as_pick(tables, best, ccs, line), notes


def _newer(tables: Tables, best: _Candidate, found: list[_Candidate], ccs: list[str],
           line: Line) -> list[str]:
    """Newer releases the pick passed over, where one would do with less certainty: an arch
    list not in the tables, or a driver that runs it only by minor-version compatibility."""
    newer = [c for c in found if Version(c.rel.version) > Version(best.rel.version)
             and c.python == best.python]
    notes = []
    unknown = [c for c in newer if not c.confirmed and c.native
               and (c.how != "mvc") == (best.how != "mvc")]
    if unknown and ccs:
        top = max(unknown, key=_Candidate.key)
        names = ", ".join(dict.fromkeys(c.rel.version for c in unknown))
        notes.append(f"newer releases may also include {', '.join(map(sm_of, ccs))}, but their "
                     f"arch lists are not in the tables (torch {names}); the newest of them: "
                     f"{pip_line(top.rel, top.variant, line.target())}")
    mvc = [c for c in newer if c.how == "mvc" and c.confirmed and best.how != "mvc"]
    if mvc:
        top = max(mvc, key=_Candidate.key)
        need = tables.cuda_min_driver(top.variant.cuda)
        notes.append(f"torch {top.rel.version} {top.variant.tag} runs here only by minor-version "
                     f"compatibility (GD103 would warn); with a driver ≥ "
                     f"{need.full if need else '?'} it runs in full: "
                     f"{pip_line(top.rel, top.variant, line.target())}")
    return notes


def _why_not(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str], line: Line
             ) -> str:
    """Why the newest release `rel` is not the pick (or nothing is)."""
    if python_fits(rel, line.python_version) is False:
        return (f"torch {rel.version} has wheels for {pythons_text(rel)}, not for this "
                f"interpreter's Python {line.python_version}")
    stable = [v for v in rel.variants if not v.experimental]
    driven = _variants(env, tables, rel)
    tv = V.toolkit_version(env)
    if (driven and all(how == "no-toolkit" for _, how in driven)) or (
            not driven and stable and runs(env, tables, stable[0].cuda) == "no-driver"):
        return (f"torch {rel.version} has no wheel for CUDA {tv or '?'} (its variants: "
                f"{', '.join(v.tag for v in rel.variants)})")
    if not driven:
        needs = [tables.cuda_min_driver(v.cuda) for v in rel.variants]
        floors = [f for n in needs if n and (f := n.family or n.full)]
        low = min(floors, key=Version) if floors else "?"
        return (f"driver {V.driver_version(env) or '(version unknown)'} is too old for torch "
                f"{rel.version}: its wheels need driver ≥ {low}")
    gpus = ", ".join(map(sm_of, ccs))
    if ccs and all(_arch(tables, v, ccs) is False for v, _ in driven):
        lists = "; ".join(f"{v.tag}: {' '.join(v.arch_list or ('not in the tables',))}"
                          for v, _ in driven)
        return f"torch {rel.version}'s wheels for this driver do not include {gpus} ({lists})"
    if all(how == "mvc" for _, how in driven):
        v = driven[0][0]
        need = tables.cuda_min_driver(v.cuda)
        return (f"driver {V.driver_version(env)} runs torch {rel.version}'s wheels only by "
                f"minor-version compatibility ({v.tag} needs ≥ {need.full if need else '?'} "
                "in full; GD103 would warn): the pick is the newest release it runs in full")
    return (f"torch {rel.version}'s wheels that run here have no arch list in the tables "
            f"confirming {gpus}")
