"""The one source of PyTorch install advice: which wheel fits this machine, and the exact line.

`torch_advice(env, tables)` is pure. Every torch install line gpudoctor prints (GD103, GD401,
GD402, GD404, GD405, `recommend`, `explain`) is its `command`, written by the one pip-line
builder (`gpudoctor.compat.wheels.pip_line`), so they cannot disagree; the smoke checks, which
must read the same in `smoke-test` (where nothing else is probed), point at `recommend`. No
CUDA line is made for a ROCm torch on a machine where nothing NVIDIA is seen, nor from an
Environment whose driver and torch were not probed (`unjudged`).

**The pick** (`gpudoctor.compat.pick`) is the newest release of the tables (not unverified)
whose non-experimental CUDA variant installs and runs here, preferring, in this order:
1. a release with wheels for the diagnosed interpreter's Python (`TorchFacts.python_version`,
   a report's "Python version"); one without them is never taken;
2. a variant whose arch list covers every visible GPU, by `gpudoctor.versions` (same-major
   cubins, forward PTX): the driver's GPUs (NVML's compute capability, or for a report the
   product name's, through `compat.machine`), else torch's devices. A variant whose arch list
   the tables lack is judged by the arch rule (`compat.rules.arch_in_build`): never taken when
   its CUDA cannot hold code for a GPU, else only after every confirmed one, and it says so;
3. a variant the driver runs with its full feature set (`compat.rules.driver_for_cuda`), over
   one it runs only by minor-version compatibility, which GD103 warns about: an older release
   that runs in full beats a newer one that does not. With no driver version (WSL) what the
   driver reports bounds it; with no driver at all the pick follows the toolkit's CUDA (its
   major, not newer where a wheel is: torch.utils.cpp_extension refuses another major), or
   else the release's PyPI default;
4. a release that pairs the torchvision / torchaudio installed beside torch, when one does;
then the newest release, and its highest CUDA.
The installed torch is judged with its own arch list (`torch.cuda.get_arch_list()`) where the
probe read it: the machine's own artifact wins over the table.

**The line** runs pip through the interpreter diagnosed (`TorchFacts.python`); for a pasted
report the interpreter is unknown: `python -m pip ...`, with a sentence saying to run it with
that environment's own python. See `gpudoctor.compat.wheels` for the naming of each era's
wheels and why the line is never a no-op. A torch that imports from a folder shadowing the
installed one (a `./torch` source checkout, a copy on PYTHONPATH) is not mended by any
install: the fix then says what to do about the shadow first.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from gpudoctor import views as V
from gpudoctor.compat import UNVERIFIED, Tables, TorchRelease, TorchVariant, machine
from gpudoctor.compat.pick import GpuSeen, Line, TorchPick, best_fit, pick_torch, runs
from gpudoctor.compat.rules import arch_in_build, driver_for_cuda
from gpudoctor.compat.wheels import package_line
from gpudoctor.model import (
    Environment,
    NvmlFacts,
    Reason,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.versions import arch_list_supports, minor_of, normalize_cc, sm_of

__all__ = ["UNJUDGED", "UNKNOWN_PYTHON", "GpuSeen", "Shadow", "TorchAdvice", "TorchPick",
           "compute_capabilities", "install_fix", "shadowing_torch", "torch_advice"]


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
    blocked: str | None = None  # what must be done first: no install can help until then
    reinstall_only: bool = False  # the pick is the installed build: the line reinstalls it

    @property
    def command(self) -> str | None:
        """The exact install line, None when nothing fits."""
        return self.pick.command if self.pick else None

    @property
    def fix(self) -> str:
        """The line as a check's fix: with the interpreter sentence, or why none fits; what
        must be done first where an install cannot help."""
        if self.pick is None:
            line = self.why[-1] if self.unjudged else (
                f"no PyTorch wheel in the tables fits this machine: "
                f"{self.why[-1] if self.why else 'see `gpudoctor recommend`'}")
        else:
            line = self.pick.command + ("" if self.python else f" ({UNKNOWN_PYTHON})")
        if self.blocked:
            return (f"{self.blocked}; reinstalling torch cannot help while that copy shadows "
                    f"the installed one; if the installed torch still fails after that: {line}")
        return line


ONLY_REINSTALLS = "the line only reinstalls it"  # a note's end, which `recommend` leaves out
UNJUDGED = ("`gpudoctor recommend` prints the install line for this machine (this run did not "
            "probe its driver or torch)")
UNKNOWN_PYTHON = ("`python` stands for the environment's own interpreter, which gpudoctor "
                  "could not name: run the line with it")


def torch_advice(env: Environment, tables: Tables) -> TorchAdvice:
    """The torch wheel that fits this machine and the line that installs it; see the module."""
    if all(isinstance(f, Unavailable) and f.reason is Reason.SKIPPED
           for f in (env.nvml, env.libcuda, env.torch)):  # `smoke-test` probed none of them
        return TorchAdvice(None, (UNJUDGED,), (), None, None, None, None, None, unjudged=True)
    rt = V.torch_runtime(env)
    if rt is not None and rt.hip and not (V.driver_present(env) or V.gpus(env)):
        return TorchAdvice(None, (f"torch {rt.version} is a ROCm (AMD) build and no NVIDIA "
                                  "driver or GPU is seen: gpudoctor advises CUDA wheels for "
                                  "NVIDIA GPUs only",), (), None, V.torch_version(env), None,
                           None, None,
                           unjudged=True)
    gpus, why = _gpus(env, tables)
    # the tables' wheels and their arch lists are x86_64's
    if (platform := machine.non_x86(env)) is not None:
        return TorchAdvice(None, (f"this machine is {platform}: the tables record PyTorch's "
                                  "Linux x86_64 wheels, so gpudoctor names no wheel for it; "
                                  "PyTorch's aarch64 builds are listed at "
                                  "https://pytorch.org/get-started/locally/ (a Jetson takes "
                                  "NVIDIA's own, for its JetPack)",), gpus, None,
                           V.torch_version(env), None, None, None, unjudged=True)
    ccs = compute_capabilities(gpus)
    line = _line(env)
    installed, rel, fits, installed_why = _installed(env, tables, ccs)
    if not ccs:
        why.append("no GPU's compute capability is known: the arch lists were not checked")
    if V.driver_version(env) is None and machine.driver_cuda(env, tables) is None:
        why.insert(0, _no_driver_note(env))
    pick, notes = pick_torch(env, tables, ccs, line)
    same = None
    reinstall_only = False
    if rel is not None and pick is not None and rel.version != pick.version and fits is not True:
        same = best_fit(env, tables, rel, ccs, line)
        if same and installed and installed.endswith("+" + same.variant):
            same = None
    if pick is not None:
        notes += _companion_notes(line, tables.torch_release(pick.version) or rel)
        if line.broken:
            notes.append(f"the installed torch is broken ({line.broken}): the line reinstalls "
                         "with --force-reinstall, which replaces its nvidia-* wheels (cuDNN "
                         "among them) too")
        elif installed and _same_build(installed, rel, pick):
            notes.append(f"torch {installed} is already installed: {ONLY_REINSTALLS}")
            reinstall_only = True
    t = V.torch_facts(env)
    shadow = shadowing_torch(t) if t is not None else None
    if shadow is not None:
        notes.insert(0, f"{shadow.message}: an install changes the installed torch, not that "
                     "copy")
    return TorchAdvice(pick, (*why, *notes), gpus, line.python, installed, fits, installed_why,
                       same, blocked=shadow.fix if shadow else None,
                       reinstall_only=reinstall_only)


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
    rt = V.torch_runtime(env)
    warned = dict(rt.warned_gpus) if rt is not None else {}  # a report's torch warnings
    for g, source in machine.resolved_gpus(env, tables):
        if isinstance(g.compute_capability, str):
            seen.append(GpuSeen(g.name, g.compute_capability))
        elif g.name in warned:
            seen.append(GpuSeen(g.name, warned[g.name]))
        else:
            why.append(f"{source}: the arch lists were not checked for it")
    named = {g.name for g, _ in machine.resolved_gpus(env, tables)}
    seen += [GpuSeen(name, cc) for name, cc in warned.items() if name not in named]
    if seen or why:
        return tuple(seen), why
    # WSL and containers may have no NVML, but torch saw the GPUs
    devices = rt.devices if rt is not None and isinstance(rt.devices, tuple) else ()
    return tuple(GpuSeen(d.name, d.capability) for d in devices), why


def _line(env: Environment) -> Line:
    python = V.interpreter(env)  # a pasted report names none: `python -m pip`
    static = V.torch_static(env)
    companions = static.companions if isinstance(static, TorchStatic) else ()
    # pip compares the distribution's metadata version, not torch.__version__: PyPI's default
    # wheel is "2.5.1" to pip while torch calls itself 2.5.1+cu124
    installed = static.version if isinstance(static, TorchStatic) else V.torch_version(env)
    told = V.python_version(env)
    return Line(python, installed, _broken(env), companions, told[0] if told else None)


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
    tv = V.toolkit_version(env)
    by = (f"the pick follows the CUDA {tv} toolkit (its major, and not newer where a wheel "
          "is)" if tv else
          f"the pick is the PyPI default, what `{package_line('torch')}` gets")
    head = ("the report states no NVIDIA driver" if V.driver_unknown(env) else
            "the report does not state the driver's version" if V.driver_present(env) else
            "no working NVIDIA driver found (see `gpudoctor check GD101`)")
    return (f"{head}: nothing tells which CUDA it will run, so {by}; the driver each wheel "
            "needs: `gpudoctor compat torch VERSION`")


def _installed(env: Environment, tables: Tables, ccs: list[str]
               ) -> tuple[str | None, TorchRelease | None, bool | None, str | None]:
    """The installed torch, its release row, whether it fits (None: unknown), and why not."""
    version = V.torch_version(env)
    if version is None:
        return None, None, None, None
    rel = tables.torch_release(version.partition("+")[0])
    rt = V.torch_runtime(env)
    tc = V.torch_cuda(env)
    if tc is None:
        return version, rel, False, ("a ROCm (AMD) build" if rt is not None and rt.hip
                                     else "a CPU-only build")
    variant = tables.torch_variant(version)
    cuda = ".".join(tc.split(".")[:2])
    if variant is not None and variant.cuda != cuda:
        variant = None  # "1.0.1.post2" with CUDA 10.0: not the PyPI default of its release
    own = rt.arch_list if rt is not None and isinstance(rt.arch_list, tuple) else ()
    if V.driver_version(env) is None and machine.driver_cuda(env, tables) is None:
        # the driver decides nothing: the arch list alone may still rule the build out
        fits, why = _fits_archs(env, tables, version, tc, variant, own, ccs)
        if fits is False:
            return version, rel, False, why
        return version, rel, None, ("the driver's version is not known" if isinstance(
            env.nvml, NvmlFacts) else "no working NVIDIA driver found")
    if variant is not None and runs(env, tables, variant.cuda) is None:
        return version, rel, False, f"the driver does not run its CUDA {variant.cuda}"
    if variant is None and tables.cuda_min_driver(cuda) is not None \
            and runs(env, tables, cuda) is None:  # a build the tables lack, of a known CUDA
        return version, rel, False, f"the driver does not run its CUDA {cuda}"
    drv = V.driver_version(env)
    if variant is None and drv and V.version(drv) and V.version(tc) \
            and tables.cuda_min_driver(tc) is None:  # a torch newer than the tables
        held, fam = f"CUDA {tc} is {tables.cuda_not_held(tc)}", tables.cuda_family(tc)
        if fam is None or fam.status == UNVERIFIED:
            return version, rel, None, (f"{held}, and no CUDA {tc.split('.')[0]} family "
                                        "rule is known")
        if driver_for_cuda(tables, drv, tc).verdict == "no":
            return version, rel, False, (
                f"the driver does not run its CUDA {tc} ({held}: judged by the CUDA "
                f"{fam.major} family rule, ≥ {fam.min_driver_linux})")
    fits, why = _fits_archs(env, tables, version, tc, variant, own, ccs)
    return version, rel, fits, why


def _fits_archs(env: Environment, tables: Tables, version: str, tc: str,
                variant: TorchVariant | None, own: tuple[str, ...], ccs: list[str]
                ) -> tuple[bool | None, str | None]:
    """Whether the installed build has code for every GPU (None: unknown), and why not."""
    if not ccs:
        return None, "no GPU's compute capability is known"
    arch = own or (variant.arch_list if variant else None)
    if not arch:  # no list: the arch rule tells where the build's CUDA cannot hold the code
        cannot = [r for c in ccs if (r := arch_in_build(tables, tc, c)).verdict == "cannot"]
        if cannot:
            return False, cannot[0].cited
        return None, ("its variant is not in the tables" if variant is None
                      else "its arch list is not in the tables")
    missing = [sm_of(c) for c in ccs if not arch_list_supports(arch, c)]
    if missing and not own and (other := machine.pypi_build_only(env, tables)):
        return None, (f"the arch list of its PyPI build ({' '.join(arch)}) does not include "
                      f"{', '.join(missing)}, but the build of the same name from {other} may")
    if missing:
        return False, f"its arch list ({' '.join(arch)}) does not include {', '.join(missing)}"
    return True, None


def _same_build(installed: str, rel: TorchRelease | None, pick: TorchPick) -> bool:
    """Whether the installed torch is the pick's build ("2.5.1" is PyPI's default variant)."""
    base, _, tag = installed.partition("+")
    default = rel.pypi_default if rel is not None and rel.version == pick.version else None
    return base == pick.version and (tag or default) == pick.variant


def _companion_notes(line: Line, rel: TorchRelease | None) -> list[str]:
    notes = []
    for name, have in line.companions:
        if rel is not None and (rel.torchvision if name == "torchvision" else
                                rel.torchaudio if name == "torchaudio" else None) is None:
            python = shlex.quote(line.python) if line.python else "python"
            notes.append(f"{name} {have} is installed beside torch, and the tables pair no "
                         f"{name} with torch {rel.version}: after installing, `{python} -m pip "
                         f"check` tells whether it still fits (uninstall it if not)")
    return notes


# --------------------------------------------------------------------------- a shadowing torch


@dataclass(frozen=True, slots=True)
class Shadow:
    """A torch that imports from somewhere pip did not install it."""

    message: str
    fix: str


def shadowing_torch(t: TorchFacts) -> Shadow | None:
    """The torch that imports is none of the installed distributions: a source checkout in
    the working directory, a copy on PYTHONPATH. None when it is an installed one, or when the
    facts cannot tell (a snapshot from before `distributions` was recorded)."""
    st = t.static
    where = V.imported_dir(t)
    if not isinstance(st, TorchStatic) or where is None or not isinstance(st.cwd, str):
        return None  # no facts, or from a gpudoctor that did not record the installs
    if any(V.same_dir(where, loc) for _, loc in st.distributions):
        return None
    rt = t.runtime
    found = rt.version if isinstance(rt, TorchRuntime) else st.version
    if st.distributions:
        v, loc = st.distributions[0]
        instead = f"not the installed torch {v} ({loc})"
    else:
        instead = "and no torch is installed by pip in this interpreter"
    parent = posixpath.dirname(posixpath.normpath(where))
    if V.same_dir(parent, st.cwd):
        return Shadow(
            f"torch imports from ./torch, a source checkout or stray folder in the current "
            f"directory ({where}, version {found}), {instead}",
            f"cd to another directory before running Python, or rename {where}; to use a "
            f"source checkout, build and install it ({package_line('.', editable=True)} in "
            "the checkout)",
        )
    if not st.distributions:  # a torch installed without dist-info (some conda builds)
        return None
    return Shadow(
        f"torch imports from {where} (version {found}), {instead}",
        f"remove {parent} from PYTHONPATH (or delete that copy); check .pth files and "
        "`pip list --user`",
    )
