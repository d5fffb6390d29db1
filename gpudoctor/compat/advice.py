"""The one source of PyTorch install advice: which wheel fits this machine, and the exact line.

`torch_advice(env, tables)` is pure. Every torch install line gpudoctor prints (GD103, GD401,
GD402, GD404, GD405, `recommend`) is its `command`, so they cannot disagree; the smoke checks,
which must read the same in `smoke-test` (where nothing else is probed), point at `recommend`.
No CUDA line is made for a ROCm torch on a machine where nothing NVIDIA is seen, nor from an
Environment whose driver and torch were not probed (`unjudged`).

**The pick** is the newest release of the tables (not unverified) with a non-experimental CUDA
variant that
- the driver runs (`compat.query.driver_runs`): variants it runs with their full feature set
  before those it runs only by minor-version compatibility (CUDA >= 11, same major), then the
  highest CUDA; with no driver version (WSL) what the driver reports bounds it. With no driver
  at all nothing tells, and the pick follows the toolkit's CUDA: its major, not newer where a
  wheel is (torch.utils.cpp_extension refuses a toolkit of another major than torch's CUDA and
  warns of a minor mismatch), or else the release's PyPI default;
- whose arch list covers every visible GPU, by `compat.arch_list_supports` (the one arch rule):
  the driver's GPUs (NVML's compute capability, or for a report the product name's, through
  `checks.facts`), else torch's devices;
- pairs with the torchvision / torchaudio installed beside torch (compat_tables/torch.toml),
  when some release does.
A variant whose arch list the tables lack is taken only when no confirmed one fits, and says so.
The installed torch is judged with its own arch list (`torch.cuda.get_arch_list()`) where the
probe read it: the machine's own artifact wins over the table.

**The line** runs pip through the interpreter diagnosed, `/path/to/python -m pip ...`
(`TorchFacts.python`, which the probe records also when torch is not installed there); for a
pasted report, or a snapshot of an older gpudoctor without torch, the interpreter is unknown:
`python -m pip ...`, with a sentence saying to run it with that environment's own python. It
is never a no-op. pip keeps an installed distribution that satisfies the requirement
("Requirement already satisfied"), and a public pin `torch==2.5.1` is satisfied by every local
build `2.5.1+cu121`: a specifier without a local label ignores the
candidates' local labels (https://packaging.python.org/en/latest/specifications/
version-specifiers/#version-matching). Hence:
- torch not installed: the release's documented line (PyTorch's previous-versions page,
  https://pytorch.org/get-started/previous-versions/): `torch==2.5.1 --index-url .../cu124`;
- torch installed: exact local pins, `torch==2.5.1+cu124 torchvision==0.20.1+cu124 --index-url
  .../cu124`, which another installed build does not satisfy, so pip replaces it. The index's
  files carry the local label (`torch-2.5.1+cu124-cp311-...whl`), and the page prints this form
  (2.0.1: `pip install torch==2.0.1+cu118 torchvision==0.15.2+cu118 ... --index-url
  https://download.pytorch.org/whl/cu118`). The PyPI default of a find-links or extra-index-url
  release has no label (the page: `pip install torch==1.7.1 torchvision==0.8.2`);
- `--force-reinstall` when the installed torch satisfies the torch pin anyway (the same build,
  or that unlabelled default) or is broken (its import failed or crashed; cuDNN is missing or
  fails a convolution). A forced reinstall also replaces torch's dependencies, the nvidia-*
  wheels that hold cuDNN, which `pip uninstall torch && pip install ...` would keep as they are.
torchvision / torchaudio installed beside torch are pinned to the release's pairing; one the
release has no pairing for is named in `why`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from gpudoctor.checks import facts as F
from gpudoctor.compat import (
    UNVERIFIED,
    Tables,
    TorchRelease,
    TorchVariant,
)
from gpudoctor.compat.query import driver_runs, torch_series
from gpudoctor.model import Environment, Reason, TorchFacts, TorchStatic, Unavailable
from gpudoctor.versions import arch_list_supports, minor_of, normalize_cc, sm_of


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


@dataclass(frozen=True, slots=True)
class TorchAdvice:
    """What to install, the line, and why."""

    pick: TorchPick | None  # None: nothing in the tables fits (`why` says what)
    why: tuple[str, ...]
    gpus: tuple[GpuSeen, ...]
    python: str | None  # the interpreter the line runs; None: unknown (`python` stands in)
    installed: str | None  # the installed torch's version
    installed_fits: bool | None  # None: cannot be told
    installed_why: str | None  # why it does not fit, or why that cannot be told
    same_release: TorchPick | None  # the installed release in a variant that fits, if not it
    unjudged: bool = False  # no pick is made, and `why` says why (nothing probed, ROCm)

    @property
    def command(self) -> str | None:
        """The exact install line, None when nothing fits."""
        return self.pick.command if self.pick else None

    @property
    def fix(self) -> str:
        """The line as a check's fix: with the interpreter sentence, or why none fits."""
        if self.pick is None:
            return self.why[-1] if self.unjudged else (
                f"no PyTorch wheel in the tables fits this machine: "
                f"{self.why[-1] if self.why else 'see `gpudoctor recommend`'}")
        return self.pick.command + ("" if self.python else f" ({UNKNOWN_PYTHON})")


UNJUDGED = ("`gpudoctor recommend` prints the install line for this machine (this run did not "
            "probe its driver or torch)")
UNKNOWN_PYTHON = ("`python` stands for the environment's own interpreter, which gpudoctor "
                  "could not name: run the line with it")


@dataclass(frozen=True, slots=True)
class _Line:
    """What the install line depends on besides the pick."""

    python: str | None
    installed: str | None  # pip's view: the distribution's metadata version
    broken: str | None  # how the installed torch is broken, when reinstalling it mends that
    companions: tuple[tuple[str, str], ...]


def torch_advice(env: Environment, tables: Tables) -> TorchAdvice:
    """The torch wheel that fits this machine and the line that installs it; see the module."""
    if all(isinstance(f, Unavailable) and f.reason is Reason.SKIPPED
           for f in (env.nvml, env.libcuda, env.torch)):  # `smoke-test` probed none of them
        return TorchAdvice(None, (UNJUDGED,), (), None, None, None, None, None, unjudged=True)
    rt = F.torch_runtime(env)
    if rt is not None and rt.hip and not (F.driver_present(env) or F.gpus(env)):
        return TorchAdvice(None, (f"torch {rt.version} is a ROCm (AMD) build and no NVIDIA "
                                  "driver or GPU is seen: gpudoctor advises CUDA wheels for "
                                  "NVIDIA GPUs only",), (), None, F.torch_version(env), None,
                           None, None,
                           unjudged=True)
    gpus, why = _gpus(env, tables)
    ccs = compute_capabilities(gpus)
    line = _line(env)
    installed, rel, fits, installed_why = _installed(env, tables, ccs)
    if not ccs:
        why.append("no GPU's compute capability is known: the arch lists were not checked")
    if F.driver_version(env) is None and F.driver_cuda(env, tables) is None:
        why.insert(0, _no_driver_note(env))
    pick, notes = _pick_torch(env, tables, ccs, line)
    same = None
    if rel is not None and pick is not None and rel.version != pick.version and fits is not True:
        same = _fit(env, tables, rel, ccs, line)[0]
        if same and installed and installed.endswith("+" + same.variant):
            same = None
    if pick is not None:
        notes += _companion_notes(line, tables.torch_release(pick.version) or rel)
        if line.broken:
            notes.append(f"the installed torch is broken ({line.broken}): the line reinstalls "
                         "with --force-reinstall, which replaces its nvidia-* wheels (cuDNN "
                         "among them) too")
        elif installed and _same_build(installed, rel, pick):
            notes.append(f"torch {installed} is already installed: the line only reinstalls it")
    return TorchAdvice(pick, (*why, *notes), gpus, line.python, installed, fits, installed_why,
                       same)


def install_fix(env: Environment, tables: Tables) -> str:
    """The fix text of a check that wants torch (re)installed: `torch_advice(...).fix`."""
    return torch_advice(env, tables).fix


def compute_capabilities(gpus: tuple[GpuSeen, ...]) -> list[str]:
    """The distinct compute capabilities "X.Y" of `gpus`, oldest first."""
    return sorted({cc for g in gpus if (cc := normalize_cc(g.compute_capability))},
                  key=minor_of)


# --------------------------------------------------------------------------- the machine


def _gpus(env: Environment, tables: Tables) -> tuple[tuple[GpuSeen, ...], list[str]]:
    """Every visible GPU with a known compute capability: the driver's, else torch's."""
    seen, why = [], []
    rt = F.torch_runtime(env)
    warned = dict(rt.warned_gpus) if rt is not None else {}  # a report's torch warnings
    for g, source in F.resolved_gpus(env, tables):
        if isinstance(g.compute_capability, str):
            seen.append(GpuSeen(g.name, g.compute_capability))
        elif g.name in warned:
            seen.append(GpuSeen(g.name, warned[g.name]))
        else:
            why.append(f"{source}: the arch lists were not checked for it")
    named = {g.name for g, _ in F.resolved_gpus(env, tables)}
    seen += [GpuSeen(name, cc) for name, cc in warned.items() if name not in named]
    if seen or why:
        return tuple(seen), why
    # WSL and containers may have no NVML, but torch saw the GPUs
    devices = rt.devices if rt is not None and isinstance(rt.devices, tuple) else ()
    return tuple(GpuSeen(d.name, d.capability) for d in devices), why


def _line(env: Environment) -> _Line:
    t = env.torch  # a pasted report names no interpreter: python is Unavailable(NOT_REPORTED)
    python = None
    if isinstance(t, TorchFacts) and isinstance(t.python, str) and t.python.startswith("/"):
        python = t.python
    static = F.torch_static(env)
    companions = static.companions if isinstance(static, TorchStatic) else ()
    # pip compares the distribution's metadata version, not torch.__version__: PyPI's default
    # wheel is "2.5.1" to pip while torch calls itself 2.5.1+cu124
    installed = static.version if isinstance(static, TorchStatic) else F.torch_version(env)
    return _Line(python, installed, _broken(env), companions)


def _broken(env: Environment) -> str | None:
    """How the installed torch is broken, when reinstalling it mends that: its import failed or
    crashed, or (CUDA working) cuDNN is missing or fails a convolution."""
    t = env.torch
    if not isinstance(t, TorchFacts) or isinstance(t.static, Unavailable):
        return None
    rt = t.runtime
    if isinstance(rt, Unavailable):
        return "its import crashed" if rt.reason is Reason.CRASHED else \
            "its import failed" if rt.reason is Reason.ERROR else None
    conv = rt.cudnn_conv if isinstance(rt.cudnn_conv, str) else ""
    if rt.cuda_available is not True or not (rt.cudnn_version is None
                                             or conv.startswith("error")):
        return None
    return "it has no cuDNN" if rt.cudnn_version is None else "a cuDNN convolution fails"


def _no_driver_note(env: Environment) -> str:
    tv = F.toolkit_version(env)
    by = (f"the pick follows the CUDA {tv} toolkit (its major, and not newer where a wheel "
          "is)" if tv else
          "the pick is the PyPI default, what `pip install torch` gets")
    head = ("the report states no NVIDIA driver" if F.driver_unknown(env) else
            "the report does not state the driver's version" if F.driver_present(env) else
            "no working NVIDIA driver found (see `gpudoctor check GD101`)")
    return (f"{head}: nothing tells which CUDA it will run, so {by}; the driver each wheel "
            "needs: `gpudoctor compat torch VERSION`")


def _runs(env: Environment, tables: Tables, variant: TorchVariant) -> str | None:
    drv = F.driver_version(env)
    if drv and F.version(drv):
        return driver_runs(tables, drv, variant.cuda)
    told = F.driver_cuda(env, tables)  # no driver version (WSL): only what it reports
    if told:
        return "full" if Version(variant.cuda) <= Version(told[0]) else None
    return "no-driver"


def _installed(env: Environment, tables: Tables, ccs: list[str]
               ) -> tuple[str | None, TorchRelease | None, bool | None, str | None]:
    """The installed torch, its release row, whether it fits (None: unknown), and why not."""
    version = F.torch_version(env)
    if version is None:
        return None, None, None, None
    base, _, tag = version.partition("+")
    rel = tables.torch_release(base)
    rt = F.torch_runtime(env)
    if F.torch_cuda(env) is None:
        return version, rel, False, ("a ROCm (AMD) build" if rt is not None and rt.hip
                                     else "a CPU-only build")
    variant = rel.variant(tag or rel.pypi_default or "") if rel else None
    own = rt.arch_list if rt is not None and isinstance(rt.arch_list, tuple) else ()
    if variant is None and not own:
        return version, rel, None, "its variant is not in the tables"
    if F.driver_version(env) is None and F.driver_cuda(env, tables) is None:
        return version, rel, None, "no working NVIDIA driver found"
    if variant is not None and _runs(env, tables, variant) is None:
        return version, rel, False, f"the driver does not run its CUDA {variant.cuda}"
    tc, drv = F.torch_cuda(env), F.driver_version(env)
    if variant is None and tc and drv and F.version(drv) and F.version(tc) \
            and tables.cuda_min_driver(tc) is None:  # a torch newer than the tables
        held, fam = f"CUDA {tc} is {tables.cuda_not_held(tc)}", tables.cuda_family(tc)
        if fam is None or fam.status == UNVERIFIED:
            return version, rel, None, (f"{held}, and no CUDA {tc.split('.')[0]} family "
                                        "rule is known")
        if driver_runs(tables, drv, tc) is None:
            return version, rel, False, (
                f"the driver does not run its CUDA {tc} ({held}: judged by the CUDA "
                f"{fam.major} family rule, ≥ {fam.min_driver_linux})")
    if not ccs:
        return version, rel, None, "no GPU's compute capability is known"
    arch = own or (variant.arch_list if variant else None)
    if not arch:
        return version, rel, None, "its arch list is not in the tables"
    missing = [sm_of(c) for c in ccs if not arch_list_supports(arch, c)]
    if missing:
        return version, rel, False, (f"its arch list ({' '.join(arch)}) does not include "
                                     f"{', '.join(missing)}")
    return version, rel, True, None


# --------------------------------------------------------------------------- the pick


def _candidates(env: Environment, tables: Tables, rel: TorchRelease
                ) -> list[tuple[TorchVariant, str]]:
    """The variants to try, best first, with how the driver runs each."""
    stable = [v for v in rel.variants if not v.experimental]
    runnable = [(v, how) for v in stable if (how := _runs(env, tables, v))]
    if not runnable or runnable[0][1] != "no-driver":
        return sorted(runnable, key=lambda vh: (vh[1] == "full", Version(vh[0].cuda)),
                      reverse=True)
    tv = F.version(F.toolkit_version(env))
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
    return [(v, "no-driver") for v in older + newer]


def _fit(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str], line: _Line
         ) -> tuple[TorchPick | None, TorchPick | None]:
    """(the pick whose arch list includes every GPU, the first with an unknown arch list)."""
    unknown = None
    for v, how in _candidates(env, tables, rel):
        ok = v.arch_list is not None and all(arch_list_supports(v.arch_list, c) for c in ccs)
        need = tables.cuda_min_driver(v.cuda)
        pick = TorchPick(rel.version, v.tag, v.cuda, v.index_url, _command(rel, v, line),
                         v.arch_list, ok and bool(ccs), how, need.full if need else None,
                         rel.status, rel.source)
        if ok or not ccs:
            return pick, None
        if v.arch_list is None:
            unknown = unknown or pick
    return None, unknown


def _releases(tables: Tables, companions: tuple[tuple[str, str], ...]) -> list[TorchRelease]:
    """One release per series, newest first: its newest patch, or the newest that pairs the
    installed companions."""
    out = []
    for series in torch_series(tables):
        newest = series[-1]
        if newest.status != UNVERIFIED and newest.variants:
            out.append(next((r for r in reversed(series) if _pairs(r, companions)), newest))
    return out


def _pairs(rel: TorchRelease, companions: tuple[tuple[str, str], ...]) -> bool:
    return all(_paired(rel, name) for name, _ in companions)


def _paired(rel: TorchRelease, name: str) -> str | None:
    return rel.torchvision if name == "torchvision" else \
        rel.torchaudio if name == "torchaudio" else None


def _pick_torch(env: Environment, tables: Tables, ccs: list[str], line: _Line
                ) -> tuple[TorchPick | None, list[str]]:
    releases = _releases(tables, line.companions)
    paired = [r for r in releases if _pairs(r, line.companions)]
    if line.companions and paired:
        pick, notes = _pick_from(env, tables, ccs, line, paired)
        newest = _releases(tables, ())[0]
        if pick is not None and not _pairs(newest, line.companions):
            names = " and ".join(n for n, _ in line.companions)
            notes.append(f"the tables pair no {names} with the newest torch, {newest.version}: "
                         f"the pick keeps to releases that have one, as {names} is installed "
                         "beside torch")
        if pick is not None:
            return pick, notes
    return _pick_from(env, tables, ccs, line, releases)


def _pick_from(env: Environment, tables: Tables, ccs: list[str], line: _Line,
               releases: list[TorchRelease]) -> tuple[TorchPick | None, list[str]]:
    notes: list[str] = []
    fallback: TorchPick | None = None
    skipped: list[str] = []
    for rel in releases:
        pick, unknown = _fit(env, tables, rel, ccs, line)
        if pick:
            if fallback:
                notes.append(f"newer releases may also include {', '.join(map(sm_of, ccs))}, but "
                             f"their arch lists are not in the tables (torch "
                             f"{', '.join(skipped)}); the newest of them: {fallback.command}")
            if rel is not releases[0]:
                notes.insert(0, _why_not_newest(env, tables, releases[0], ccs))
            return pick, notes
        if unknown:
            fallback = fallback or unknown
            skipped.append(rel.version)
    if fallback:
        notes.append(f"the arch list of torch {fallback.version} {fallback.variant} is not in the "
                     f"tables: it may not include {', '.join(map(sm_of, ccs))}")
        return fallback, notes
    notes.append(_why_not_newest(env, tables, releases[0], ccs) if releases else
                 "no PyTorch release in the tables")
    return None, notes


def _why_not_newest(env: Environment, tables: Tables, rel: TorchRelease, ccs: list[str]) -> str:
    runs = [v for v, _ in _candidates(env, tables, rel)]
    tv = F.toolkit_version(env)
    if not runs and _runs(env, tables, rel.variants[0]) == "no-driver":
        return (f"torch {rel.version} has no wheel for CUDA {tv or '?'} (its variants: "
                f"{', '.join(v.tag for v in rel.variants)})")
    if not runs:
        needs = [tables.cuda_min_driver(v.cuda) for v in rel.variants]
        floors = [f for n in needs if n and (f := n.family or n.full)]
        low = min(floors, key=Version) if floors else "?"
        return (f"driver {F.driver_version(env) or '(version unknown)'} is too old for torch "
                f"{rel.version}: its wheels need driver ≥ {low}")
    gpus = ", ".join(map(sm_of, ccs))
    lists = "; ".join(f"{v.tag}: {' '.join(v.arch_list or ('not in the tables',))}"
                      for v in runs)
    return f"torch {rel.version}'s wheels for this driver do not include {gpus} ({lists})"


# --------------------------------------------------------------------------- the line


def _command(rel: TorchRelease, v: TorchVariant, line: _Line) -> str:
    """The exact pip line for one variant; see the module for why it is never a no-op."""
    python = shlex.quote(line.python) if line.python else "python"
    labelled = rel.install == "index-url" or v.tag != rel.pypi_default  # files carry +cuXYZ
    exact = line.installed is not None and labelled
    pins = [("torch", rel.version)] + [(name, paired) for name, _ in line.companions
                                       if (paired := _paired(rel, name))]

    def pin(name: str, version: str) -> str:
        # older releases' lines pin torch and torchvision by label, torchaudio without one
        tag = exact if rel.install == "index-url" else labelled and name != "torchaudio"
        return f"{name}=={version}+{v.tag}" if tag else f"{name}=={version}"

    option = ("" if not labelled else f" --index-url {v.index_url}" if rel.install == "index-url"
              else f" -f {v.index_url}" if rel.install == "find-links"
              else f" --extra-index-url {v.index_url}")
    force = line.installed is not None and (line.broken is not None or _satisfies(
        line.installed, rel.version, v.tag if exact else None))
    return (f"{python} -m pip install{' --force-reinstall' if force else ''} "
            f"{' '.join(pin(n, ver) for n, ver in pins)}{option}")


def _satisfies(installed: str, version: str, tag: str | None) -> bool:
    """Whether pip would keep `installed` for the pin `version` (+`tag`): PEP 440 matching.
    An installed version that does not parse never satisfies a pin (pip replaces it)."""
    try:
        return SpecifierSet(f"=={version}" + (f"+{tag}" if tag else "")).contains(
            installed, prereleases=True)
    except InvalidSpecifier:
        return False


def _same_build(installed: str, rel: TorchRelease | None, pick: TorchPick) -> bool:
    """Whether the installed torch is the pick's build ("2.5.1" is PyPI's default variant)."""
    base, _, tag = installed.partition("+")
    default = rel.pypi_default if rel is not None and rel.version == pick.version else None
    return base == pick.version and (tag or default) == pick.variant


def _companion_notes(line: _Line, rel: TorchRelease | None) -> list[str]:
    notes = []
    for name, have in line.companions:
        if rel is not None and _paired(rel, name) is None:
            python = shlex.quote(line.python) if line.python else "python"
            notes.append(f"{name} {have} is installed beside torch, and the tables pair no "
                         f"{name} with torch {rel.version}: after installing, `{python} -m pip "
                         f"check` tells whether it still fits (uninstall it if not)")
    return notes
