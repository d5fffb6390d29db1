"""PyTorch checks (GD4xx)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import check, failed, noted, passed, skipped, warned
from gpudoctor.checks.driver import driver_vs_torch
from gpudoctor.compat import machine
from gpudoctor.compat.advice import install_fix, shadowing_torch
from gpudoctor.compat.rules import arch_in_build
from gpudoctor.linux import hides_every_gpu
from gpudoctor.model import (
    Environment,
    Finding,
    HostFacts,
    Layer,
    NvmlFacts,
    Reason,
    Severity,
    Status,
    TorchFacts,
    Unavailable,
)
from gpudoctor.versions import coverage, format_cudnn_version, parse_cc, sm_name, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

TORCH_URL = "https://pytorch.org/get-started/locally/"


def _install_fix(env: Environment, tables: Tables) -> str:
    """The torch install line, from the one source of advice (`gpudoctor.compat.advice`)."""
    return install_fix(env, tables)


@check("GD401", "torch-importable", "PyTorch imports", Layer.PYTORCH, Severity.ERROR,
       "torch child process", reads={"torch", "nvml", "libcuda", "host", "toolkits"})
def check_torch_importable(env: Environment, tables: Tables) -> Finding:
    """`import torch` runs in a child process with a timeout. It can fail with an exception (a
    missing shared library, an ABI mismatch), crash the interpreter (abort, segfault — often a
    broken cuDNN or CUDA library), or hang (a wedged driver). Each is reported with its text.
    A `torch/` folder that shadows the installed torch (a source checkout in the working
    directory, a copy on PYTHONPATH) is named as the cause.

    Where torch is not installed, this machine's run warns where a GPU is seen (torch may
    live in another environment: `--python` names it), notes it beside a toolkit alone and
    skips otherwise; a pasted report that shows torch not importing in the interpreter that
    made it (collect_env's "PyTorch version: N/A") fails: the environment it reports on has no
    torch."""
    missing = V.torch_missing(env)
    if missing is not None:
        return _torch_missing(env, tables, missing)
    t = env.torch
    assert isinstance(t, TorchFacts)
    seconds = t.seconds if isinstance(t.seconds, float | int) else None
    ev: tuple[tuple[str, str], ...] = (
        ("python", t.python if isinstance(t.python, str) else t.python.message),
        ("probe seconds", f"{seconds:.2f}" if seconds is not None else "?"))
    if isinstance(t.static, Unavailable):
        ev += (("package metadata", t.static.message),)
    else:
        ev += (("installed", f"{t.static.version} at {t.static.location}"),)
    shadow = shadowing_torch(t)
    rt = t.runtime
    if isinstance(rt, Unavailable) and rt.reason is Reason.NOT_REPORTED:  # a cut-off report
        return skipped(rt.message, ev)
    if isinstance(rt, Unavailable):
        ev += (("stderr", rt.detail or ""),)
        reinstall = _install_fix(env, tables)
        fixes = {
            Reason.TIMEOUT: "run `nvidia-smi`; if it hangs too, the driver is wedged: reboot. "
                            "Raise the limit with --timeout if torch lives on a slow file system",
            Reason.CRASHED: f"look at the stderr below; a crash on import usually means a broken "
                            f"CUDA/cuDNN library on LD_LIBRARY_PATH: unset LD_LIBRARY_PATH and "
                            f"retry, or {reinstall}",
        }
        if shadow is not None:
            return failed(f"{rt.message}; {shadow.message}", shadow.fix, ev)
        return failed(rt.message, fixes.get(rt.reason, _import_error_fix(rt, reinstall)), ev)
    took = f" ({seconds:.1f} s)" if seconds is not None else ""
    own = env.host.python_executable if isinstance(env.host, HostFacts) else None
    if isinstance(t.python, str) and own and t.python != own:  # another interpreter: name it
        took += f" in {t.python}"
    return passed(f"{V.torch_name(env)} imports{took}", ev)


# gpudoctor often lives in an environment of its own (pipx, a tools venv), torch in another
ELSEWHERE = ("for a torch in another environment, run gpudoctor with "
             "--python /path/to/that/env/bin/python")


def _torch_missing(env: Environment, tables: Tables, t: Unavailable) -> Finding:
    """GD401 when there is no torch: not probed, not in the report, or not installed."""
    if t.reason in (Reason.SKIPPED, Reason.NOT_REPORTED):
        return skipped(t.message)
    python = env.torch.python if isinstance(env.torch, TorchFacts) else None
    ev = ((("python", python),) if isinstance(python, str) else ()) + (
        ("detail", t.detail or ""),)
    if t.reason is not Reason.NOT_INSTALLED:
        return failed(t.message, None, ev)
    if V.pasted(env):  # a report made to show torch ran where torch does not import
        return failed(f"{t.message}: the environment the report shows has no torch that "
                      "imports", f"run the report with the environment's own python (the one "
                      f"that runs the program), or install torch there: "
                      f"{_install_fix(env, tables)}", ev)
    # the interpreter is named when this machine's probe ran it (not from a pasted report)
    also = [ELSEWHERE] if isinstance(python, str) else []
    gpu = V.gpu_signs(env)
    if not gpu and not V.toolkit(env):
        return skipped(f"{t.message}; nothing here needs it"
                       + "".join(f" ({a})" for a in also), ev)
    if not gpu:
        return noted(f"{t.message} ({'; '.join(['there is a CUDA toolkit, but no GPU', *also])})",
                     _install_fix(env, tables), ev)
    return warned(t.message + "".join(f" ({a})" for a in also), _install_fix(env, tables), ev)


def _import_error_fix(rt: Unavailable, reinstall: str) -> str:
    text = f"{rt.message}\n{rt.detail or ''}"
    lib = re.search(r"(lib[\w\-.]+\.so[\w.]*): cannot open shared object file", text)
    if lib:
        return (f"{lib.group(1)} is missing from the loader path: {reinstall}, and check that "
                "LD_LIBRARY_PATH does not point at an older CUDA/cuDNN")
    if "undefined symbol" in text:
        return (f"a library torch loads is the wrong version (undefined symbol): unset "
                f"LD_LIBRARY_PATH and retry, or {reinstall}")
    return reinstall


@check("GD402", "torch-cuda-build", "PyTorch is a CUDA build where a GPU is", Layer.PYTORCH,
       Severity.ERROR, "torch.version.cuda, NVML, PCI bus, CUDA toolkit, compat tables",
       reads={"torch", "nvml", "libcuda", "host", "toolkits"})
def check_torch_cuda_build(env: Environment, tables: Tables) -> Finding:
    """A CPU-only PyTorch (torch.version.cuda is None, e.g. `2.13.0+cpu`) never uses the GPU,
    whatever the driver. The fix is the pip line for the newest CUDA variant the driver runs
    (or, with no driver visible, the toolkit's CUDA major). On a machine with no GPU at all
    (a CI runner, a build host) a CPU build beside a CUDA toolkit is only a note. A ROCm (AMD)
    build is not judged as NVIDIA: it skips unless an NVIDIA GPU or driver is seen, where it
    fails like a CPU build."""
    tv = V.torch_version(env)
    rt = V.torch_runtime(env)
    if tv is None and rt is None:
        return skipped("PyTorch is not installed or could not be read")
    name = V.torch_name(env)  # "torch 2.5.1+cpu", or with its version not in the report
    unstated = V.cuda_build_unstated(env)
    if unstated is not None:
        return passed(f"{name} is a CUDA build ({unstated.message})")
    if rt is not None and rt.hip:
        signs = V.gpu_signs(env)
        if not signs:  # an AMD machine: ROCm is right there, and not gpudoctor's to judge
            return skipped(f"{name} is a ROCm build (HIP {rt.hip}): gpudoctor judges NVIDIA "
                           "stacks, and no NVIDIA GPU or driver is seen",
                           (("torch.version.hip", rt.hip),))
        return failed(f"{name} is a ROCm (AMD) build, not a CUDA build, but {signs[0]}",
                      _install_fix(env, tables),
                      (("torch.version.hip", rt.hip), *(("GPU sign", s) for s in signs)))
    tc = V.torch_cuda(env)
    if tc:
        return passed(f"{name} is built for CUDA {tc}")
    signs = V.gpu_signs(env)
    toolkit = V.toolkit_version(env)
    evidence = (("torch.version.cuda", "None"), *(("GPU sign", s) for s in signs))
    if signs:
        also = f", and a CUDA {toolkit} toolkit is installed" if toolkit else ""
        return failed(f"{name} is a CPU-only build, but {signs[0]}{also}",
                      _install_fix(env, tables), evidence)
    if V.driver_unknown(env):  # a pasted report that shows neither a driver nor a GPU
        return skipped(f"{name} is a CPU-only build; whether the machine has an NVIDIA GPU "
                       f"is not in the report", evidence)
    if toolkit:
        return noted(f"{name} is a CPU-only build beside a CUDA {toolkit} toolkit; this "
                     "machine has no NVIDIA GPU, so the CPU is all it can use — where a GPU "
                     "is, install a CUDA build", _install_fix(env, tables), evidence)
    return passed(f"{name} is a CPU-only build, and this machine has no NVIDIA GPU or driver")


@check("GD403", "torch-cuda-available", "torch.cuda.is_available()", Layer.PYTORCH,
       Severity.ERROR, "torch child process",
       reads={"torch", "nvml", "libcuda", "host", "toolkits"})
def check_torch_cuda_available(env: Environment, tables: Tables) -> Finding:
    """For a CUDA build, `torch.cuda.is_available()` must be True. When it is False, torch's own
    reason (the error of `torch.cuda.init()`) is shown with the likely cause. One cause is
    counted once: with no working driver it skips (GD101 reports that), and with a driver too
    old for torch's CUDA it skips too (GD103 reports that, by the same rule).

    Fix: follow torch's reason: a driver too old for torch's CUDA (GD103), CUDA_VISIBLE_DEVICES
    hiding the GPUs (GD501), device nodes missing in a container (GD502), or a driver upgraded
    without a reboot (GD101).

    Sources: https://pytorch.org/docs/stable/notes/cuda.html
    """
    rt = V.torch_runtime(env)
    if rt is None:
        return skipped("torch did not import (see GD401)")
    if not rt.cuda:
        return skipped("PyTorch is a CPU-only build (see GD402)")
    if isinstance(rt.cuda_available, Unavailable) and V.pasted(env) and V.warned_after_init(env):
        named = ", ".join(dict.fromkeys(
            name for name, _ in (*rt.incompatible_gpus, *rt.too_old_gpus, *rt.warned_gpus)))
        return passed(f"CUDA available: torch warned about {named}, which it does only after "
                      "its CUDA initialised on the GPUs (torch.cuda.is_available() itself is "
                      "not in the report)",
                      (("torch.cuda.is_available()", rt.cuda_available.message),))
    if isinstance(rt.cuda_available, Unavailable):
        return skipped(rt.cuda_available.message)
    if rt.cuda_available:
        if not isinstance(rt.devices, tuple):
            return passed(f"CUDA available ({V.reason_of(rt.devices)})")
        return passed(f"CUDA available, {len(rt.devices)} device(s): "
                      + ", ".join(d.name for d in rt.devices))
    reason = (V.reason_of(rt.cuda_init_error) if isinstance(rt.cuda_init_error, Unavailable)
              else rt.cuda_init_error or "torch gave no reason")
    ev = (("torch.cuda.init()", reason),)
    if V.driver_unknown(env):  # a report with neither nvidia-smi's nor the driver's view
        return failed(f"torch.cuda.is_available() is False: {reason}",
                      "the driver's state is not in the report: ask for the output of "
                      "`nvidia-smi` (see GD101–GD103 and GD501–GD502 for the causes)", ev)
    said = env.host.getenv("CUDA_VISIBLE_DEVICES") if not isinstance(
        env.host, Unavailable) else None
    visible = said if isinstance(said, str) else None  # not set, or not in the report
    if not V.driver_present(env):  # one cause, counted once: GD101 says it and how to fix it
        return skipped(f"no working NVIDIA driver, so no CUDA device (see GD101); torch says: "
                       f"{reason}", ev)
    hides_all = visible is not None and hides_every_gpu(visible)
    gd103 = None if hides_all else driver_vs_torch(env, tables)
    if gd103 is not None and gd103.status is Status.FAIL:  # one cause, counted once: GD103
        return skipped(f"torch.cuda.is_available() is False: {gd103.message}; see GD103", ev)
    if hides_all:
        fix = "unset CUDA_VISIBLE_DEVICES (it hides every GPU)"
    elif "too old" in reason or "insufficient" in reason:
        fix = "upgrade the NVIDIA driver (see GD103)"
    elif isinstance(rt.cuda_init_error, Unavailable) and V.pasted(env) and bool(V.gpus(env)) \
            and gd103 is not None and gd103.status is Status.PASS:
        # the report lists the GPUs and a driver that runs torch's CUDA: what is left is this
        # process's view (nvidia-smi ignores CUDA_VISIBLE_DEVICES; torch obeys it)
        fix = ("the driver lists the GPUs and runs this build (GD101, GD103), so look at what "
               "CUDA needs beyond nvidia-smi: CUDA_VISIBLE_DEVICES empty, -1 or naming an "
               "index not there (GD501), /dev/nvidia-uvm missing (GD502: sudo modprobe "
               "nvidia_uvm); torch's own reason: python -c 'import torch; torch.cuda.init()'")
    else:
        fix = "see GD101–GD103 and GD501–GD502 for the cause"
    return failed(f"torch.cuda.is_available() is False: {reason}", fix, ev)


@check("GD404", "gpu-arch-in-torch-build", "GPU architecture is in torch's build",
       Layer.PYTORCH, Severity.ERROR, "NVML / torch devices, torch.cuda.get_arch_list()",
       reads={"torch", "nvml", "libcuda", "host", "toolkits"})
def check_gpu_arch(env: Environment, tables: Tables) -> Finding:
    """torch runs only kernels its build carries for the GPU (torch.cuda.get_arch_list()):
    a cubin for sm_XY runs on any GPU of the same major with an equal or higher minor (sm_86
    cubins run on an sm_89 RTX 4090); PTX (compute_XY) is JIT-compiled for any newer GPU;
    an arch-specific `sm_90a` runs only on exactly sm_90, a family-specific `sm_100f` on the
    same major (sm_100, sm_103). Without any of these every kernel fails with 'no kernel image
    is available for execution on the device'. The rules live in `gpudoctor.versions`.

    From a pasted report, a GPU's compute capability may come from its product name (the GPU
    table) and torch's arch list from the table's row for that wheel; the evidence says so. On
    an aarch64 machine (stated, or told by an Arm-only GPU) that is the aarch64 wheel's list,
    which PyTorch sets apart; where its sources leave several open, one decides only where all
    give each GPU the same code.
    Where the report does not tell which build of a release it is (no tag, no CUDA), it passes
    when every CUDA build of that release the tables know has code for each GPU, and fails
    where torch's own warning calls a GPU older than its build supports, or where no CUDA
    build of that release the tables know has code for a GPU. What none of
    these gives makes the check skip, unless the arch rule shows the build's CUDA cannot hold
    code for the GPU (a failure), or torch's own CUDA error on a kernel launch ("no kernel
    image is available for execution on the device") quoted beside the one GPU model the report
    names and no compiled extension (a failure: the fix also names the extension that may have
    launched it), or the neighbouring-builds rule passes a PyTorch wheel (release or nightly)
    whose own list is not known: the nearest releases' builds for the
    same CUDA all have code for the GPU, inside their lists (on a side with no such release,
    the same release's build for the nearest other CUDA stands in, for the newest archs only)
    (`compat.machine.neighbouring_builds_cover`). A report naming only the release ("PyTorch
    Version: 1.7.1": no tag, no CUDA, not even whether it is a CUDA build) passes where every
    CUDA build of it has code for each GPU, a GPU at the oldest arch of a list excepted
    (conda's 1.3 builds dropped the sm_35 the pip wheels kept), and fails where none has."""
    rt = V.torch_runtime(env)
    release = V.stated_release(env)
    if rt is None and release is not None:  # a report names the release, not which build
        return _release_only(env, tables, release)
    if rt is None or not rt.cuda:
        return skipped("needs a CUDA build of torch that imports")
    arch = machine.torch_arch_list(env, tables)
    if isinstance(arch, Unavailable) and rt.too_old_gpus:  # torch's own verdict
        return _torch_warns(env, tables, arch, rt.too_old_gpus,
                            "the GPU is older than its build supports (no PTX runs on an older "
                            "GPU)", "compute capability {cc}")
    if isinstance(arch, Unavailable) and rt.incompatible_gpus:  # torch's own check, again
        return _torch_warns(env, tables, arch, rt.incompatible_gpus,
                            "the GPU is not compatible with its build: its arch list (not in "
                            "the report) holds no cubin of the GPU's major. torch does not "
                            "count PTX here, but of PyTorch's wheels only 1.2-1.5's carried an "
                            "older architecture's PTX", "not compatible, {sm}")
    if isinstance(arch, Unavailable):
        return _by_arch_rule(env, tables, rt.cuda, arch)
    arch_list, arch_source = arch
    if not arch_list:
        return skipped(_no_arch_list(rt.cuda_available))
    gpus = machine.seen_gpus(env, tables)
    if not gpus:
        listed = isinstance(env.nvml, NvmlFacts) and (env.nvml.gpus or not V.pasted(env))
        return skipped(("no GPU visible" if listed else "the GPUs are not in the report")
                       if V.is_reported(env.nvml) else V.reason_of(env.nvml))
    ev: list[tuple[str, str]] = [("arch list", f"{' '.join(arch_list)} ({arch_source})")]
    missing, unknown, cannot = [], [], []
    for g in gpus:
        cc = parse_cc(g.cc) if isinstance(g.cc, str) else None
        if cc is None:
            unknown.append(g)
            ev.append((f"GPU {g.index}", f"{g.name}: {V.reason_of(g.cc)}"))
            continue
        cov = coverage(arch_list, cc)
        ev.append((f"GPU {g.index}", f"{g.name}, {sm_name(cc)} ({g.source}): "
                   + (cov.explain() if cov else "no cubin or PTX in the build runs on it")))
        if cov is None:
            missing.append(f"{g.name} ({sm_name(cc)})")
            ruling = arch_in_build(tables, rt.cuda, str(g.cc)) if isinstance(rt.cuda, str) \
                else None
            if ruling is not None and ruling.verdict == "cannot":
                cannot.append(ruling.why)
                ev.append(("rule", ruling.cited))
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        # where no build of torch's CUDA can hold the code, which build it is does not matter
        impossible = len(cannot) == len(missing)
        other = None if impossible else machine.pypi_build_only(env, tables)
        if other is not None:  # a 1.x wheel of two builds: which one is not in the report
            return warned(
                f"{V.torch_name(env)} as built for PyPI has no kernels for {names}; the build "
                f"of the same name from {other} carries more architectures, and the report "
                "does not show which one is installed",
                "see its arch list on that machine: python -c 'import torch; "
                "print(torch.cuda.get_arch_list())'; if no entry runs on the GPU, install a "
                f"torch build that includes it: {_install_fix(env, tables)}",
                (*ev, ("rule", "until torch 2.0, PyPI's wheel and download.pytorch.org's of "
                       "the same name were separate builds; PyPI's was cut to fit its size "
                       "limit")))
        return failed(
            f"{V.torch_name(env)} has no kernels for {names}"
            + (f", nor can any build of its CUDA have them (the arch rule: {cannot[0]})"
               if impossible else ""),
            f"install a torch build that includes it: {_install_fix(env, tables)}",
            tuple(ev))
    if unknown:
        return skipped(V.reason_of(unknown[0].cc), tuple(ev))
    names = ", ".join(dict.fromkeys(f"{g.name} ({sm_name(parse_cc(str(g.cc)) or (0, 0))})"
                                    for g in gpus))
    return passed(f"{V.torch_name(env)}'s build runs on {names}", tuple(ev))


def _torch_warns(env: Environment, tables: Tables, arch: Unavailable,
                 gpus: tuple[tuple[str, str], ...], why: str, said: str) -> Finding:
    """GD404's failure on torch's own warning about `gpus` ((name, compute capability)), its
    arch list not in the report: `why` is what the warning means, `said` how the evidence
    words each GPU ({cc}, {sm})."""
    names = ", ".join(f"{n} ({sm_of(cc)})" for n, cc in gpus)
    return failed(f"{V.torch_name(env)} has no kernels for {names}: torch itself warns {why}",
                  f"install a torch build that includes it: {_install_fix(env, tables)}",
                  (("arch list", arch.message),
                   *(("torch's warning", f"{n}: " + said.format(cc=cc, sm=sm_of(cc)))
                     for n, cc in gpus)))


def _release_only(env: Environment, tables: Tables, release: str) -> Finding:
    """GD404 where a report names torch's release but not which build it is (no tag, no
    CUDA, no availability): every CUDA build of the release the tables know having code for
    each GPU seen passes it, none having code for one fails it (a CPU build runs no kernel at
    all), a GPU at the oldest architecture of a list excepted (builds made elsewhere, such as
    conda's, part there); anything else is unknown."""
    why = f"the report does not say which build of torch {release} it is (no tag, no CUDA)"
    every = machine.every_build_covers(env, tables)
    edge = every is not None and machine.at_oldest_arch(env, tables)
    if every is not None and not edge:
        return passed(f"whichever CUDA build of torch {release} this is, it runs on every GPU "
                      f"seen: {every}", (("torch", why), ("rule", every)))
    none = machine.no_build_covers(env, tables)
    if none is not None:
        return failed(f"no CUDA build of torch {release} has kernels for "
                      f"{', '.join(none[1])}: {none[0]}",
                      f"install a torch build that includes it: {_install_fix(env, tables)}",
                      (("torch", why), ("rule", none[0])))
    if tables.torch_release(release) is None:
        left = f"and the tables know no release {release}"
    elif not any(isinstance(g.cc, str) for g in machine.seen_gpus(env, tables)):
        left = "and no GPU's compute capability is in the report"
    elif edge:
        left = (f"and though {every}, a GPU is at the oldest arch of a list, where builds made "
                "elsewhere (conda's 1.3 dropped sm_35) part from the tables'")
    else:
        left = ("and its release's builds differ on the GPUs seen (or the tables lack their "
                "arch lists)")
    return skipped(f"{why}, {left}", (("torch", why),))


def _by_arch_rule(env: Environment, tables: Tables, cuda: str | Unavailable,
                  missing: Unavailable) -> Finding:
    """GD404 without torch's arch list (a report, a wheel the tables lack): the arch rule
    (`compat.rules.arch_in_build`) decides where the build's CUDA cannot hold code for a GPU;
    anything else stays unknown, and the skip says what the rule could tell."""
    every = machine.every_build_covers(env, tables)
    if every is not None:  # which build it is does not matter: each has the code
        return passed(f"{V.torch_name(env)}'s build runs on every GPU seen: {every}",
                      (("arch list", missing.message), ("rule", every)))
    none = machine.no_build_covers(env, tables)
    if none is not None:  # which build it is does not matter: none has the code
        return failed(f"{V.torch_name(env)} has no kernels for {', '.join(none[1])}: {none[0]} "
                      "(its own arch list is not in the report)",
                      f"install a torch build that includes it: {_install_fix(env, tables)}",
                      (("arch list", missing.message), ("rule", none[0])))
    gpus = [g for g in machine.seen_gpus(env, tables) if isinstance(g.cc, str)]
    rt = V.torch_runtime(env)
    if rt is not None and rt.launch_error is not None \
            and len({(g.name, g.cc) for g in gpus}) == 1:
        # torch's own error on a kernel launch: no code for the GPU ran, whatever the list
        names = ", ".join(dict.fromkeys(f"{g.name} ({sm_of(str(g.cc))})" for g in gpus))
        return failed(
            f"{V.torch_name(env)} has no kernels for {names}: torch's CUDA error on a kernel "
            f"launch says so ('{rt.launch_error}'; the kernel is torch's or an extension's it "
            "ran: its own arch list is not in the report)",
            f"install a torch build that includes it: {_install_fix(env, tables)}; where "
            "`python -c 'import torch; print(torch.cuda.get_arch_list())'` already lists the "
            "GPU's sm_XY, rebuild the extension that raised the error for it instead",
            (("arch list", missing.message), ("torch's error", rt.launch_error),
             *((f"GPU {g.index}", f"{g.name}, {sm_of(str(g.cc))} ({g.source})") for g in gpus)))
    if not isinstance(cuda, str) or not gpus:
        return skipped(missing.message)
    rulings = [(g, arch_in_build(tables, cuda, g.cc)) for g in gpus if isinstance(g.cc, str)]
    ev = (("arch list", missing.message), ("torch CUDA", cuda),
          *((f"GPU {g.index}", f"{g.name}, {sm_of(str(g.cc))} ({g.source}): {r.cited}")
            for g, r in rulings))
    cannot = [(g, r) for g, r in rulings if r.verdict == "cannot"]
    if cannot:
        names = ", ".join(dict.fromkeys(f"{g.name} ({sm_of(str(g.cc))})" for g, _ in cannot))
        return failed(f"{V.torch_name(env)} has no kernels for {names}, judged by the arch rule "
                      f"(its arch list is not known): {cannot[0][1].cited}",
                      f"install a torch build that includes it: {_install_fix(env, tables)}",
                      ev)
    neighbours = machine.neighbouring_builds_cover(env, tables)
    if neighbours is not None:
        return passed(f"{V.torch_name(env)}'s build runs on every GPU seen, {neighbours}",
                      (*ev, ("rule", neighbours)))
    said = "; ".join(dict.fromkeys(r.why for _, r in rulings))
    return skipped(f"{missing.message} (by the arch rule: {said}; whether this build has that "
                   "code only its arch list tells)", ev)


def _no_arch_list(cuda_available: bool | Unavailable) -> str:
    """Why GD404 skips on an empty torch.cuda.get_arch_list(), by what torch said of CUDA."""
    if cuda_available is True:
        return ("CUDA is available but torch reported no arch list "
                "(torch.cuda.get_arch_list() is empty): cannot judge which GPUs its build runs on")
    if cuda_available is False:
        return ("torch reports no arch list (torch.cuda.get_arch_list() is empty when CUDA is "
                "not available: see GD403)")
    return (f"torch reports no arch list, and whether CUDA is available is unknown "
            f"({cuda_available.message})")


@check("GD405", "torch-cudnn-works", "cuDNN runs a convolution in torch", Layer.PYTORCH,
       Severity.ERROR, "torch child process",
       reads={"torch", "nvml", "libcuda", "toolkits", "host"})
def check_torch_cudnn(env: Environment, tables: Tables) -> Finding:
    """With CUDA available, the probe runs one small convolution so cuDNN's lazily loaded
    sub-libraries load too; a failure here is what a training script would hit first.

    Fix: the error names the library; GD306, GD307 and GD309 say which cuDNN torch loaded and why it
    fails.

    Sources: https://pytorch.org/docs/stable/backends.html
    """
    rt = V.torch_runtime(env)
    if rt is None or rt.cuda_available is not True:
        return skipped("CUDA is not available in torch (see GD403)")
    if isinstance(rt.cudnn_version, Unavailable) or isinstance(rt.cudnn_conv, Unavailable):
        return skipped(V.reason_of(rt.cudnn_version if isinstance(rt.cudnn_version, Unavailable)
                                   else rt.cudnn_conv))
    mapped = rt.mapped_libraries if isinstance(rt.mapped_libraries, tuple) else ()
    libs = tuple(("mapped", p) for p in mapped if "cudnn" in p)
    if rt.cudnn_version is None:
        return failed("torch reports no cuDNN (torch.backends.cudnn.version() is None)",
                      _install_fix(env, tables), libs)
    if rt.cudnn_conv != "ok":
        return failed(f"a cuDNN convolution failed: {rt.cudnn_conv}", _install_fix(env, tables),
                      libs)
    return passed(f"cuDNN {format_cudnn_version(rt.cudnn_version)} ran a convolution", libs)


@check("GD406", "torch-single-install", "one torch on the path", Layer.PYTORCH,
       Severity.WARNING, "torch package metadata, torch child process", reads={"torch"})
def check_torch_shadowed(env: Environment, tables: Tables) -> Finding:
    """The torch that imports should be the one pip installed. A `torch/` folder in the working
    directory (a source checkout), a copy on PYTHONPATH or a second install in the user
    site-packages shadows it: a classic cause of 'I installed the CUDA build but still get CPU'.
    PyPI's default wheel's metadata says `2.5.1` where `torch.__version__` says `2.5.1+cu124`:
    that is one copy (the local part is compared only when both sides have one)."""
    t, rt, st = V.torch_facts(env), V.torch_runtime(env), V.torch_static(env)
    if t is None or st is None:
        return skipped("needs the package metadata of torch")
    shadow = shadowing_torch(t)
    if rt is None:
        return skipped("torch did not import (see GD401)")
    if isinstance(rt.version, Unavailable):
        return skipped(rt.version.message)
    ev: tuple[tuple[str, str], ...] = (
        ("imported", f"{rt.version} from {V.imported_dir(t)}"),
        *(("installed", f"{v} at {loc}") for v, loc in st.distributions))
    if shadow is not None:
        return warned(shadow.message, shadow.fix, ev)
    if len(st.distributions) > 1:
        (v1, l1), (v2, l2) = st.distributions[:2]
        return warned(
            f"{len(st.distributions)} torch installs on sys.path: {v1} at {l1} is imported, "
            f"{v2} at {l2} is shadowed by it",
            f"keep one: pip uninstall torch (for the copy to remove, with the interpreter or "
            f"--user flag it was installed with); torch imports from {l1}",
            ev)
    installed = V.installed_version(st) or st.version
    if V.same_release(rt.version, installed):
        return passed(f"torch {rt.version} from {st.location}", ev)
    return warned(
        f"`import torch` gives {rt.version} but the installed package says {installed}",
        f"remove the other copy: check PYTHONPATH, the current directory and "
        f"`pip list --user`; torch imports from {st.location}",
        (*ev, ("installed metadata", installed)),
    )


CHECKS = (
    check_torch_importable,
    check_torch_cuda_build,
    check_torch_cuda_available,
    check_gpu_arch,
    check_torch_cudnn,
    check_torch_shadowed,
)
