"""Driver and GPU checks (GD1xx)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import Version

from gpudoctor import views as V
from gpudoctor.checks.base import check, failed, noted, passed, skipped, warned
from gpudoctor.checks.driver_parts import driver_parts, mismatch, tools_apart
from gpudoctor.checks.driver_wanted import DRIVER_URL, install_driver
from gpudoctor.checks.requirements import requirements_of
from gpudoctor.compat import machine
from gpudoctor.compat.advice import torch_advice
from gpudoctor.compat.rows import UNVERIFIED
from gpudoctor.compat.rules import driver_for_cuda
from gpudoctor.model import (
    Environment,
    Finding,
    HostFacts,
    Layer,
    NvmlFacts,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.interface import (
    DRIVER_TOO_OLD,
    INSUFFICIENT,
    NO_DRIVER_INSIDE,
    NOT_EVERY_GPU,
)
from gpudoctor.requirements import needs_gpu
from gpudoctor.versions import decode_cuda_version

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


@check("GD101", "driver-present", "NVIDIA driver is installed and loaded", Layer.DRIVER,
       Severity.ERROR, "NVML, libcuda, PCI bus, kernel module, torch build, CUDA toolkit",
       reads={"nvml", "libcuda", "host", "torch", "toolkits", "requirements"})
def check_driver_present(env: Environment, tables: Tables) -> Finding:
    """An NVIDIA driver must be installed and its kernel module loaded before any CUDA program
    (a CUDA build of PyTorch, anything built with the toolkit) can use a GPU.

    NVML tells the cases apart: the library is missing (no driver), the kernel module is not
    loaded, or the user-space library and the kernel module are different versions (the driver
    was upgraded without a reboot: both versions are shown, and the fix is reloading the module,
    not reinstalling). On WSL, where NVML may be absent, libcuda stands in. NVML that does not
    answer within the probe's deadline is a driver that is not responding (a wedged driver or
    GPU: check `nvidia-smi`, the Xid errors in the kernel log, reboot), not a missing one.
    A pasted nvidia-smi whose own version differs from the driver's ("NVIDIA-SMI 450.66  Driver
    Version: 418.67": tools from another release than the kernel module, e.g. a container
    image's own nvidia-smi) is a warning; WSL's Linux tools beside the Windows driver's number
    are not (known by their numbers, or by a report that names WSL 2: its kernel,
    /usr/lib/wsl/lib, the words). A report from a container whose NVML says "Driver/library
    version mismatch" beside the host's working nvidia-smi is a failure too: the image brings
    driver libraries of another release than the host's kernel module. So is that mismatch shown
    from any other environment of the machine beside the working driver (a Nix flake's, a
    container the report does not name as one): it loads an NVML library of another release.

    A machine with no GPU at all (no NVIDIA device on the PCI bus, no /dev/nvidia*, no driver:
    a CI runner, a build host) gets a note, not a failure: PyPI's default torch is a CUDA build,
    and it runs on the CPU there until a GPU with a new enough driver is present. Unless a
    job requires a GPU (`check --require gpus>=1`, or any driver, cuda, arch or gpu-memory
    requirement): then no driver is a failure, so the job stops instead of training on the CPU.
    A pasted report that shows no driver (nvidia-smi not found, collect_env's "Could not
    collect", torch's "Found no NVIDIA driver") and nothing of a GPU is a warning for the same
    reason: a machine without an NVIDIA GPU reads the same; a failed nvidia-smi is a failure,
    and so is a report that shows a GPU (lspci, lshw, /dev/nvidia*) and no driver.
    Two failures of nvidia-smi are other checks' causes, each counted once: NVML's "Insufficient
    Permissions" is the device nodes' (GD502; this check is skipped, naming it), and "No devices
    were found" (the driver is loaded but brought up no GPU) is GD102's. A report from a
    container that has no driver in it (nvidia-smi missing there, an NVIDIA image's "The NVIDIA
    Driver was not detected", torch's "Found no NVIDIA driver on your system") is the
    container's wiring, GD505's: the host's driver is not in the report (skipped, naming
    GD505). A report whose own words say its GPU is another vendor's (Ollama's issue template:
    "GPU: AMD") and that shows no NVIDIA GPU needs no NVIDIA driver (skipped); NVIDIA's tools
    failing there are packages left behind (a warning).

    Fix: where no driver is installed, install the one named: the driver that runs the
    installed torch's CUDA in full (else the toolkit's), by the driver rule
    (`gpudoctor.compat.rules.driver_for_cuda`); with neither, one that runs the newest CUDA
    that compiles for the GPUs' architecture, else the newest driver branch the tables know.
    In a container, the driver goes on the host, and the container is started with
    `--gpus all`.
    """
    drv = V.driver_version(env)
    named = V.named_in_words(env)
    if named is not None:
        said = (f"{', '.join(named)} in words, but not whether a driver runs it" if named else
                f"driver {drv} in words, but not whether it is loaded and sees the GPUs" if drv
                else "the NVIDIA driver's tools as installed, but not whether the driver is "
                "loaded and sees the GPUs")
        return skipped(f"the report names {said}: ask for the output of `nvidia-smi`",
                       (("report", V.PROSE),))
    inside = V.container_nvml_error(env) if isinstance(env.nvml, NvmlFacts) else None
    if isinstance(env.nvml, NvmlFacts) and isinstance(env.host, HostFacts) and inside \
            and "version mismatch" in inside.lower():
        # the host's driver answers; the container's NVML is another release's
        return failed(
            f"the host's driver {drv or '(version not in the report)'} answers, but in this "
            f"{env.host.container} container NVML says 'Driver/library "
            "version mismatch': the container's user-space driver libraries (brought by its "
            "image) are another release than the host's kernel module",
            "remove the driver's packages (libnvidia-*, nvidia-utils) from the image and let the "
            "NVIDIA Container Toolkit mount the host's: run with --gpus all (or CDI / the "
            "nvidia.com/gpu resource)",
            (("driver", drv or V.reason_of(env.nvml.driver_version)), ("in the container",
                                                                        inside)))
    elsewhere = V.elsewhere_nvml_mismatch(env)
    if isinstance(env.nvml, NvmlFacts) and elsewhere is not None:
        return failed(
            f"driver {drv or '(version not in the report)'} answers, but elsewhere in the "
            "report NVML says 'Driver/library version mismatch': an environment on this "
            "machine (a container, a Nix flake, a conda environment with its own driver "
            "libraries) loads an NVML library of another release than the kernel module",
            f"in that environment use the driver's own libraries (release "
            f"{drv or 'of the loaded kernel module'}): in a container let the NVIDIA Container "
            "Toolkit mount them (no libnvidia-* packages in the image, --gpus all); elsewhere "
            "remove the environment's libnvidia-ml or pin it to the kernel module's release",
            (("driver", drv or V.reason_of(env.nvml.driver_version)), ("elsewhere",
                                                                         elsewhere)))
    if isinstance(env.nvml, NvmlFacts):
        cuda = machine.driver_cuda(env, tables)
        said = (f"driver {drv or '(version not in the report)'}"
                + (f", supports CUDA ≤ {cuda[0]}" if cuda else ""))
        ev = (("driver", drv or V.reason_of(env.nvml.driver_version)),
              ("nvml binding", env.nvml.binding))
        wsl = isinstance(env.host, HostFacts) and env.host.wsl is True
        apart = None if wsl else tools_apart(env.nvml)  # WSL pairs them so (driver_parts)
        if apart:
            return warned(f"{said}; {apart}", "use the nvidia-smi of the loaded driver: "
                          "reinstall the driver's user-space package of the same version (or, "
                          "if the kernel module is the old one, reboot); in a container, ship "
                          "no driver tools in the image (the NVIDIA Container Toolkit mounts the "
                          "host's)", (*ev, ("nvidia-smi", str(env.nvml.smi_version))))
        return passed(said, ev)
    nvml = env.nvml
    assert isinstance(nvml, Unavailable)
    if nvml.reason is Reason.TIMEOUT:  # a wedged driver, not a missing one (libcuda's
        # version query does not reach the kernel module, so it is no sign of a working driver)
        return failed(f"the NVIDIA driver is not responding ({nvml.message.split(':')[0]}): "
                      "a wedged driver or GPU",
                      "run `nvidia-smi` (if it hangs too, the driver or a GPU is wedged); look "
                      "for Xid errors: `sudo dmesg | grep -i xid` or `journalctl -k | grep -i "
                      "xid`; then reboot the node",
                      (("NVML", nvml.message), *((("detail", nvml.detail),) if nvml.detail
                                                 else ())))
    if V.driver_present(env):
        return passed(f"driver {drv or '(version unknown)'} found through libcuda "
                      f"(NVML unavailable: {nvml.message})")
    if V.driver_unknown(env):  # a pasted report without nvidia-smi's or the driver's view
        return skipped(nvml.message, (("NVML", nvml.message), *(
            (("report", nvml.detail),) if nvml.detail else ())))
    need = V.needs_driver(env)
    signs = V.gpu_signs(env)
    evidence = (("NVML", nvml.message), ("libcuda", V.reason_of(env.libcuda)),
                *(("GPU sign", s) for s in signs))
    host = env.host if isinstance(env.host, HostFacts) else None
    vendor = host.other_gpu_vendor if host is not None else None
    shown = bool(V.gpus(env)) or (host is not None and any(
        isinstance(found, tuple) and bool(found) for found in (host.pci_gpus, host.dev_nodes)))
    if V.pasted(env) and vendor is not None and not shown:
        # the report's own words: the machine's GPU is another vendor's (Ollama's "GPU: AMD")
        if nvml.reason is Reason.NOT_INSTALLED:
            return skipped(f"the report's GPU is {vendor}'s, not NVIDIA's: no NVIDIA driver is "
                           "needed", evidence)
        return warned(f"the report's GPU is {vendor}'s, yet NVIDIA's driver tools are installed "
                      f"and fail ({nvml.message}): packages left from an NVIDIA driver, which "
                      "programs that look for nvidia-smi may take for an NVIDIA GPU",
                      "where no NVIDIA GPU will be used, remove the NVIDIA driver packages "
                      "(Ubuntu: sudo apt purge '^nvidia-.*' '^libnvidia-.*'; or the .run "
                      "installer's nvidia-uninstall)",
                      evidence + ((("report", nvml.detail),) if nvml.detail else ()))
    module, libraries = driver_parts(env)
    if nvml.reason is Reason.VERSION_MISMATCH or (module and libraries and any(
            v != module for v in libraries)):
        return mismatch(env, module, libraries, evidence)
    if nvml.reason is Reason.DRIVER_NOT_LOADED:
        return failed(
            "the NVIDIA driver is installed but its kernel module is not loaded",
            "sudo modprobe nvidia (if it fails, see `sudo dmesg | grep -i nvidia`; with Secure "
            "Boot, enrol the module's key or disable Secure Boot)",
            evidence,
        )
    if nvml.reason is Reason.PERMISSION_DENIED:  # the device nodes' failure: GD502 fails
        return skipped("no permission to talk to the NVIDIA driver, so whether it is loaded "
                       "is not known here (see GD502)", evidence)
    if V.container_lost_devices(env):  # the container's fault, counted once: GD505 fails
        return skipped("NVML fails with 'Unknown Error' inside a container: the container "
                       "lost its device access, the host's driver is not in question (see "
                       "GD505)", evidence)
    if V.pasted(env) and V.container_nvml_error(env) is not None \
            and host is not None and host.wsl is not True \
            and nvml.reason is Reason.NOT_INSTALLED and nvml.message in NO_DRIVER_INSIDE:
        # a report from a container that has no driver in it (nvidia-smi missing there, an NGC
        # image's "The NVIDIA Driver was not detected", torch's "Found no NVIDIA driver"): the
        # driver goes on the host, which the report does not show; the container's wiring
        # fails, counted once: GD505
        return skipped("the report is from a container that was not given the host's driver "
                       "(see GD505); the host's driver is not in the report", evidence)
    install = install_driver(env, tables)
    if not signs and V.pasted(env) and nvml.reason is Reason.NOT_INSTALLED:
        # a report that shows no driver ("nvidia-smi: command not found", collect_env's "Could
        # not collect", torch's "Found no NVIDIA driver") and no GPU either: a GPU-less machine
        # (a login node, a laptop) says the same, so it cannot fail; it leads the report
        return warned(f"the report shows no working NVIDIA driver, and no NVIDIA GPU either "
                      f"(a machine without one reads the same): {nvml.message}",
                      f"if the machine has an NVIDIA GPU: {install}",
                      evidence + ((("report", nvml.detail),) if nvml.detail else ()))
    if not signs and V.pasted(env):
        # a pasted nvidia-smi that failed: whether the machine has a GPU is not in the report
        return failed(f"the report shows no working NVIDIA driver: {nvml.message}",
                      install if nvml.reason is Reason.NOT_INSTALLED else
                      "run `nvidia-smi -q` and `sudo dmesg | grep -i -e nvidia -e xid`; in a "
                      "container, restart it (or the NVIDIA Container Toolkit's daemon)",
                      evidence + ((("report", nvml.detail),) if nvml.detail else ()))
    required = needs_gpu(requirements_of(env))
    if required is not None:  # a job requires a GPU: none here fails it (never a note)
        return failed(f"no NVIDIA driver{', though ' + signs[0] if signs else ' and no GPU'} "
                      f"on this machine, but the job requires {required}", install,
                      (*evidence, ("required", str(required))))
    if not signs:
        if not need:
            return skipped("no NVIDIA GPU or driver, and nothing here needs one (no CUDA build "
                           "of PyTorch, no CUDA toolkit)", evidence)
        return _gpu_less(env, tables, need, evidence)
    if not need and V.pasted(env):
        # a report shows a GPU and no driver: what needs one is not in it (a report states
        # what its tools printed, not that no CUDA program is there), and it was pasted to
        # use that GPU
        return failed(f"the report shows {signs[0]}, but no NVIDIA driver: nothing can compute "
                      "on it", install, evidence)
    if not need:
        return warned(f"{signs[0]}, but no NVIDIA driver is installed: nothing can compute on "
                      "it", install, evidence)
    if V.torch_cuda(env) is None:  # only a toolkit: it compiles, nothing it builds can run
        return warned(
            f"no NVIDIA driver, though {signs[0]}: CUDA programs built here cannot run ("
            + need[0] + ")", install, evidence)
    return failed(f"no NVIDIA driver, but {signs[0]}; " + " and ".join(need), install,
                  evidence)


def _gpu_less(env: Environment, tables: Tables, need: list[str],
              evidence: tuple[tuple[str, str], ...]) -> Finding:
    """No GPU, no driver: a CI runner or build host. Nothing here can be fixed on it."""
    cuda = V.torch_cuda(env) or V.toolkit_version(env)
    minimum = machine.min_driver(tables, cuda) if cuda else None
    driver = f"a driver ≥ {minimum}" if minimum else f"a driver that runs CUDA {cuda}"
    if V.torch_cuda(env):
        what = (f"PyTorch {V.torch_version(env)} is a CUDA {cuda} build: it runs on the CPU "
                f"here and will use a GPU once one with {driver} is present")
    else:
        what = (f"{need[0]}: it compiles here; what it builds runs once a GPU with {driver} is "
                "present")
    return noted(
        f"no NVIDIA GPU and no driver on this machine (a CI runner or build host?); {what}",
        f"nothing to do on a machine without a GPU; where a GPU is, install the NVIDIA driver "
        f"{'≥ ' + minimum if minimum else ''} ({DRIVER_URL})".replace("driver  (", "driver ("),
        evidence)


@check("GD102", "gpus-healthy", "every GPU answers NVML", Layer.DRIVER, Severity.ERROR, "NVML",
       reads={"nvml"})
def check_gpus(env: Environment, tables: Tables) -> Finding:
    """Each GPU the driver knows must answer NVML. A GPU that fails (`GpuIsLost`, a reset
    required, a corrupted InfoROM) is named, and the others are still checked.

    Fix: run `nvidia-smi -q` and `sudo dmesg | grep -i xid` to see the error; a lost GPU needs a
    reset (`sudo nvidia-smi -r -i <index>`) or a reboot, and one that keeps falling off the bus is a
    hardware, cooling or power fault.

    Sources: https://docs.nvidia.com/deploy/xid-errors/index.html
    """
    if not isinstance(env.nvml, NvmlFacts):
        return skipped(V.reason_of(env.nvml))
    if env.nvml.binding in NOT_EVERY_GPU:
        return skipped(f"the report shows GPUs only as {env.nvml.binding} does, not NVML's "
                       "view of every GPU")
    bad = [g for g in env.nvml.gpus if isinstance(g, Unavailable)]
    good = V.gpus(env)
    evidence = tuple(
        (f"GPU {g.index}", ", ".join([g.name, *V.gpu_details(g)])) for g in good
    ) + tuple((f"failed GPU #{i}", u.message) for i, u in enumerate(bad))
    if not env.nvml.gpus and V.pasted(env):  # nvidia-smi says 'No devices were found' instead
        return skipped("the GPU rows are not in the report (the nvidia-smi output is cut off or "
                       "trimmed before them)", evidence)
    if not env.nvml.gpus:
        return failed("the driver is loaded but sees no GPU",
                      "check `lspci | grep -i nvidia`; in a VM, check the GPU pass-through",
                      evidence)
    if bad:
        return failed(
            f"{len(bad)} of {len(env.nvml.gpus)} GPUs failed: " + "; ".join(u.message for u in bad),
            "run `nvidia-smi -q` and `sudo dmesg | grep -i xid`; a lost GPU needs "
            "`sudo nvidia-smi -r -i <index>` or a reboot",
            evidence,
        )
    names = ", ".join(sorted({g.name for g in good}))
    return passed(f"{len(good)} GPU{'s' if len(good) != 1 else ''}: {names}", evidence)


def _install_alt(env: Environment, tables: Tables) -> tuple[str, str]:
    """", or install a build for this driver: <line>" from the one source of advice
    (`gpudoctor.compat.advice`): for any wheel the driver runs, and for one it runs in full."""
    advice = torch_advice(env, tables)
    runs = advice.pick.runs if advice.pick else None
    alt = f", or install a build for this driver: {advice.fix}"
    return (alt if runs in ("full", "mvc") else "", alt if runs == "full" else "")


@check("GD103", "driver-supports-torch-cuda", "driver is new enough for PyTorch's CUDA",
       Layer.DRIVER, Severity.ERROR, "NVML/libcuda, torch.version.cuda, compat tables",
       reads={"torch", "nvml", "libcuda", "toolkits", "host"})
def check_driver_vs_torch(env: Environment, tables: Tables) -> Finding:
    """PyTorch's CUDA runtime needs a driver at least as new as NVIDIA's table says. For CUDA
    ≥ 11 an older driver of the same major family still runs it by minor-version compatibility,
    with limits (no PTX JIT of newer PTX; some calls return cudaErrorCallRequiresNewerDriver):
    a pass where torch's arch list has a cubin for every GPU seen (nothing torch runs needs
    the JIT), a warning where a GPU would need PTX or the GPUs or the arch list are unknown.

    A driver too old for torch's CUDA on a machine where torch's CUDA nevertheless initialised
    (`torch.cuda.is_available()` True, probed or stated by a report) runs it through NVIDIA's
    CUDA forward-compatibility package (`cuda-compat-*`, data-center GPUs on supported driver
    branches): a note naming it, not a failure, since the stack demonstrably works.

    A report naming only torch's release (no tag, no CUDA) passes where the driver runs every
    CUDA build of that release in full, and fails where it is too old for each of them.

    Fix: upgrade the driver to at least the version NVIDIA's table gives for torch's CUDA, or
    install a torch wheel of a CUDA the driver runs (`gpudoctor recommend` names it).

    Sources: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html,
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    """
    finding = _driver_vs_torch(env, tables)
    if finding.status is Status.FAIL and V.cuda_initialised(env):
        return noted(
            f"{finding.message}; yet torch's CUDA initialised (torch.cuda.is_available() is "
            "True), so NVIDIA's CUDA forward-compatibility package must be in use (supported "
            "on data-center GPUs only, and only while that package matches torch's CUDA)",
            f"nothing is needed while it works; to run without the forward-compatibility "
            f"package: {finding.fix}",
            (*finding.evidence, ("torch.cuda.is_available()", "True"),
             ("rule", "CUDA forward compatibility: "
              "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html")))
    return finding


def _driver_vs_torch(env: Environment, tables: Tables) -> Finding:
    """GD103's verdict from the versions alone (see `check_driver_vs_torch`)."""
    tc = V.torch_cuda(env)
    if not tc:
        said = _torch_says_too_old(env, tables)
        if said is not None:
            return said
        rt = V.torch_runtime(env)
        available = V.cuda_initialised(env)
        if V.pasted(env) and rt is not None and isinstance(rt.cuda, Unavailable) \
                and not rt.hip and (available or V.warned_after_init(env)):
            # a CUDA build whose version the report leaves out, yet whose CUDA initialised
            how = ("torch.cuda.is_available() is True" if available else
                   "its warning about a GPU's capability, printed only after its CUDA "
                   "initialised")
            return passed(f"torch's CUDA initialised ({how}): the driver runs it (torch's CUDA "
                          "version is not in the report)",
                          (("torch CUDA", V.why_no_torch_cuda(env)), ("CUDA initialised", how)))
        release, drv = V.stated_release(env), V.driver_version(env)
        if release is not None and drv is not None:
            return _release_driver(tables, release, drv, V.why_no_torch_cuda(env))
        return skipped(V.why_no_torch_cuda(env))
    drv = V.driver_version(env)
    dcuda = machine.driver_cuda(env, tables)
    have, want = V.version(dcuda[0] if dcuda else None), V.version(tc)
    if dcuda and have and want and have >= want:
        return passed(f"driver {drv or ''} runs CUDA ≤ {dcuda[0]} ({dcuda[1]}) ≥ PyTorch's "
                      f"CUDA {tc}".replace("driver  ", "driver "),
                      (("driver", drv or "?"), ("driver CUDA", dcuda[0]), ("torch CUDA", tc)))
    if not drv and dcuda and have and want:  # only the driver's CUDA (torch's "found version")
        return _by_driver_cuda(tables, tc, dcuda, have >= Version("11") and have.major ==
                               want.major)
    if not drv and V.pasted(env) and (V.cuda_initialised(env) or V.warned_after_init(env)):
        # the report leaves the driver's version out, but torch's CUDA initialised on it
        how = ("torch.cuda.is_available() is True" if V.cuda_initialised(env) else
               "its warning about a GPU's capability, printed only after its CUDA initialised")
        return passed(f"torch's CUDA {tc} initialised ({how}): the driver runs it (its version "
                      "is not in the report)", (("torch CUDA", tc), ("CUDA initialised", how)))
    if not drv:
        return skipped("no NVIDIA driver version to compare (see GD101)")
    minimum = tables.cuda_min_driver(tc)
    evidence: tuple[tuple[str, str], ...] = (("driver", drv), ("torch CUDA", tc))
    if minimum is None or minimum.full is None or minimum.status == UNVERIFIED:
        return _by_family(tables, tc, drv, evidence)  # no exact row: the family rule decides
    dv = V.version(drv)
    full, family = V.version(minimum.full), V.version(minimum.family)
    evidence += (("minimum (full)", minimum.full or "?"),
                 ("minimum (family)", minimum.family or "-"))
    alt, alt_full = _install_alt(env, tables)
    if dv is None:
        return skipped(f"driver version {drv!r} does not parse", evidence)
    if full and dv >= full:
        return passed(f"driver {drv} ≥ {minimum.full} needed by CUDA {tc}", evidence)
    if family and dv >= family:
        mvc = f"runs it by minor-version compatibility (≥ {minimum.family})"
        cubins = machine.cubins_for_every_gpu(env, tables)
        if cubins is not None:  # what the limits of minor-version compatibility touch is unused
            return passed(f"driver {drv} {mvc}: torch's {cubins}, so no PTX is JIT-compiled",
                          (*evidence, ("rule", MVC_RULE)))
        return warned(
            f"driver {drv} is older than {minimum.full} (CUDA {tc}'s driver) but {mvc}; PTX JIT "
            "(a GPU torch has no cubin for) and newer APIs may fail",
            f"upgrade the driver to ≥ {minimum.full} ({DRIVER_URL}){alt_full}",
            (*evidence, ("rule", MVC_RULE)),
        )
    need = minimum.family or minimum.full
    # the full-feature driver: one at the family floor would still warn (minor-version compat)
    target = minimum.full if full else need
    return failed(
        f"driver {drv} is too old for PyTorch's CUDA {tc}, which needs ≥ {need}",
        f"upgrade the NVIDIA driver to ≥ {target} ({DRIVER_URL}){alt}",
        evidence,
    )


def _release_driver(tables: Tables, release: str, drv: str, why: str) -> Finding:
    """GD103 where a report names torch's release but not which build it is: a driver that
    runs every CUDA build of the release in full (≥ each one's full-feature driver) passes;
    one too old for each (below each one's floor, minor-version compatibility included)
    fails; anything between is unknown."""
    found = tables.torch_release(release)
    dv = V.version(drv)
    if found is None or dv is None:
        return skipped(why)
    needs = {v.cuda: tables.cuda_min_driver(v.cuda) for v in found.variants}
    known = {c: m for c, m in needs.items()
             if m is not None and m.full is not None and m.status != UNVERIFIED}
    if not needs or len(known) != len(needs):
        return skipped(f"{why} (and the drivers its release's CUDA builds need are not all in "
                       "the tables)")
    evidence = (("driver", drv), ("torch", why),
                *((f"CUDA {c}", f"≥ {m.full}" + (f" (≥ {m.family} by minor-version "
                                                  "compatibility)" if m.family else ""))
                  for c, m in known.items()))
    builds = ", ".join(known)
    full = [V.version(m.full) for m in known.values()]
    if all(f is not None and dv >= f for f in full):
        return passed(f"whichever CUDA build of torch {release} this is (CUDA {builds}), "
                      f"driver {drv} runs it in full", evidence)
    floor = [V.version(m.family or m.full) for m in known.values()]
    if all(f is not None and dv < f for f in floor):
        return failed(f"driver {drv} is too old for every CUDA build of torch {release} "
                      f"(CUDA {builds})",
                      f"upgrade the NVIDIA driver ({DRIVER_URL}), or install a torch build "
                      "for this driver: gpudoctor recommend names one", evidence)
    return skipped(f"{why}; driver {drv} runs some of torch {release}'s CUDA builds "
                   f"(CUDA {builds}) and not others", evidence)


MVC_RULE = ("CUDA minor-version compatibility: a driver of the major's family runs a newer "
            "minor's code, but JIT-compiles no newer PTX: "
            "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html")


def driver_vs_torch(env: Environment, tables: Tables) -> Finding:
    """GD103's finding: FAIL where the driver (its version, or the CUDA it reports) is too old
    for torch's CUDA, PASS where it is known to run it. GD403 reads it once, so that one cause
    is counted once and its advice says which layer is left."""
    return check_driver_vs_torch.run(env, tables)


def _by_family(tables: Tables, tc: str, drv: str, evidence: tuple[tuple[str, str], ...]
               ) -> Finding:
    """GD103 for a torch CUDA whose driver the tables do not hold (a release newer than their
    newest, or one whose row states no Linux driver): the
    minor-version-compatibility floor of its major (`[[family]]`) judges it, and says so."""
    held = (f"CUDA {tc} is {tables.cuda_not_held(tc)}" if tables.cuda_min_driver(tc) is None
            else f"the tables hold no verified Linux driver for CUDA {tc}")
    fam, dv = tables.cuda_family(tc), V.version(drv)
    major = tc.split(".")[0]
    if fam is None or dv is None:
        why = f"no CUDA {major} family rule is recorded" if fam is None else \
            f"driver version {drv!r} does not parse"
        return skipped(f"{held}, and {why}: update gpudoctor to judge it", evidence)
    ruling = driver_for_cuda(tables, drv, tc)
    rule = (f"judged by the CUDA {major} family rule (≥ {fam.min_driver_linux}, {fam.status}; "
            f"{ruling.rule.name}, {ruling.rule.source})")
    evidence += (("minimum (family rule)", fam.min_driver_linux), ("tables", held),
                 ("rule", f"{ruling.rule.text} ({ruling.rule.source})"))
    if ruling.verdict == "mvc":
        return warned(
            f"driver {drv} runs PyTorch's CUDA {tc} at least by minor-version compatibility: "
            f"{held}: {rule}; whether it runs it in full is not known",
            f"upgrade the driver to one that reports CUDA ≥ {tc} ({DRIVER_URL})", evidence)
    return failed(f"driver {drv} is too old for PyTorch's CUDA {tc}: {held}: {rule}",
                  f"upgrade the NVIDIA driver to ≥ {fam.min_driver_linux} ({DRIVER_URL})",
                  evidence)


def _torch_says_too_old(env: Environment, tables: Tables) -> Finding | None:
    """GD103 where torch's CUDA version is unknown (a report holding only torch's error) but
    torch itself refused the driver: "The NVIDIA driver on your system is too old (found version
    11060)" is raised when cudaDriverGetVersion() is below the CUDA torch was built with, so
    torch's own words decide the comparison GD103 makes; the driver's CUDA is in them."""
    rt = V.torch_runtime(env)
    error = rt.cuda_init_error if rt is not None else None
    if rt is None or rt.cuda_available is not False or not isinstance(error, str):
        return None
    m = DRIVER_TOO_OLD.search(error)
    if m is None and INSUFFICIENT in error:  # cudaErrorInsufficientDriver: no version in it
        return failed(
            "torch's CUDA runtime says the driver is older than the CUDA torch was built with "
            "(cudaErrorInsufficientDriver, 35); neither version is in the report",
            f"upgrade the NVIDIA driver to one that runs torch's CUDA (`python -c 'import torch; "
            f"print(torch.version.cuda)'` names it, `gpudoctor compat cuda VERSION` its driver; "
            f"{DRIVER_URL}), or install a torch built for the CUDA the driver runs (nvidia-smi's "
            "'CUDA Version')",
            (("torch.cuda.init()", error),
             ("rule", "the CUDA runtime returns this error when the driver is older than it")))
    if m is None:
        return None
    dcuda = machine.driver_cuda(env, tables)
    runs = dcuda[0] if dcuda else decode_cuda_version(int(m[1]))
    return failed(
        f"torch says the driver is too old for the CUDA it was built with: the driver runs CUDA "
        f"≤ {runs} (torch's 'found version {m[1]}'); torch's CUDA version is not in the report",
        f"upgrade the NVIDIA driver to one that runs torch's CUDA (`python -c 'import torch; "
        f"print(torch.version.cuda)'` names it, `gpudoctor compat cuda VERSION` its driver; "
        f"{DRIVER_URL}), or install a torch wheel for CUDA ≤ {runs} (`gpudoctor recommend` on "
        "that machine names it)",
        (("torch.cuda.init()", error), ("driver CUDA", runs),
         ("rule", "torch raises this error when cudaDriverGetVersion() is below its CUDA")))


def _by_driver_cuda(tables: Tables, tc: str, dcuda: tuple[str, str], same_family: bool
                    ) -> Finding:
    """GD103 when the driver's version is unknown but the highest CUDA it runs is known (a
    report with torch's "driver too old (found version 11040)"), and it is below torch's."""
    minimum = tables.cuda_min_driver(tc)
    evidence = (("driver CUDA", f"{dcuda[0]} ({dcuda[1]})"), ("torch CUDA", tc),
                ("minimum (full)", minimum.full or "?" if minimum else "?"))
    if same_family:
        return warned(
            f"the driver runs CUDA ≤ {dcuda[0]} ({dcuda[1]}), older than PyTorch's CUDA {tc}, "
            "which it runs by minor-version compatibility; PTX JIT and newer APIs may fail",
            f"upgrade the driver to ≥ {minimum.full if minimum else 'one for CUDA ' + tc} "
            f"({DRIVER_URL})", evidence)
    need = (minimum.family or minimum.full) if minimum else None
    target = (minimum.full or minimum.family) if minimum else None  # a floor would still warn
    return failed(
        f"the driver runs CUDA ≤ {dcuda[0]} ({dcuda[1]}): too old for PyTorch's CUDA {tc}"
        + (f", which needs a driver ≥ {need}" if need else ""),
        f"upgrade the NVIDIA driver{' to ≥ ' + target if target else ''} ({DRIVER_URL}), or "
        f"install a torch wheel for CUDA ≤ {dcuda[0]}", evidence)


@check("GD104", "driver-supports-toolkit", "driver runs what the local toolkit builds",
       Layer.DRIVER, Severity.WARNING, "NVML/libcuda, CUDA toolkit, compat tables",
       reads={"toolkits", "nvml", "libcuda"})
def check_driver_vs_toolkit(env: Environment, tables: Tables) -> Finding:
    """Programs compiled with the local toolkit (CUDA extensions, nvcc builds) need a driver
    that supports that toolkit's CUDA version; `nvcc` itself runs without one.

    Fix: upgrade the driver to one that runs the toolkit's CUDA, or build with a toolkit no newer
    than the driver's CUDA (`gpudoctor compat driver VERSION` says which).

    Sources: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html,
    https://docs.nvidia.com/deploy/cuda-compatibility/index.html
    """
    tv = V.toolkit_version(env)
    if not tv:
        return skipped("no CUDA toolkit found (or its version is unreadable)")
    cuda = machine.driver_cuda(env, tables)
    if cuda is None:
        return skipped("no NVIDIA driver (see GD101)")
    dcuda, source = cuda
    ev = (("toolkit", tv), ("driver supports CUDA", f"{dcuda} ({source})"))
    tvv, dvv = V.version(tv), V.version(dcuda)
    if tvv is None or dvv is None:
        return skipped("a version does not parse", ev)
    if (tvv.major, tvv.minor) <= (dvv.major, dvv.minor):
        return passed(f"toolkit CUDA {tv} ≤ driver's CUDA {dcuda}", ev)
    forward = _forward_compat(env, dvv)
    if forward:  # torch's newer CUDA initialised on this driver: the compat package is in use
        return noted(
            f"toolkit CUDA {tv} is newer than the driver's own CUDA {dcuda}, but torch's CUDA "
            f"{forward} initialised here, so NVIDIA's CUDA forward-compatibility package is in "
            f"use: what the toolkit builds runs if that package is for CUDA ≥ {tv}",
            f"if a program built with it fails with 'CUDA driver version is insufficient', "
            f"install the cuda-compat package for CUDA {tvv.major}.{tvv.minor} or upgrade the "
            f"driver ({DRIVER_URL})",
            (*ev, ("torch CUDA initialised", forward)))
    minimum = tables.cuda_min_driver(tv)
    need = f"≥ {minimum.full}" if minimum and minimum.full else f"one that supports CUDA {tv}"
    fam = tables.cuda_family(tv) if minimum is None else None
    held = (f" (CUDA {tv} is {tables.cuda_not_held(tv)}: judged by the CUDA {tvv.major} family "
            f"rule, ≥ {fam.min_driver_linux})") if fam else ""
    if tvv.major == dvv.major and tvv.major >= 11:
        return warned(
            f"toolkit CUDA {tv} is newer than the driver's CUDA {dcuda}: what it builds runs by "
            f"minor-version compatibility only (no PTX JIT){held}",
            f"upgrade the NVIDIA driver to {need} ({DRIVER_URL})", ev)
    return failed(
        f"toolkit CUDA {tv} is newer than the driver supports (CUDA {dcuda}): programs it "
        "builds fail with 'CUDA driver version is insufficient for CUDA runtime version'",
        f"upgrade the NVIDIA driver to {need} ({DRIVER_URL}), or use a CUDA {dcuda} toolkit", ev)


def _forward_compat(env: Environment, driver_cuda: Version) -> str | None:
    """torch's CUDA when it is newer than the driver's own CUDA and initialised anyway (the
    forward-compatibility package at work), else None."""
    tc = V.torch_cuda(env)
    tcv = V.version(tc)
    if not (tc and tcv and V.cuda_initialised(env)) or (tcv.major, tcv.minor) <= (
            driver_cuda.major, driver_cuda.minor):
        return None
    if tcv.major == driver_cuda.major and tcv.major >= 11:
        return None  # minor-version compatibility runs it, no forward-compatibility package
    return tc


CHECKS = (check_driver_present, check_gpus, check_driver_vs_torch, check_driver_vs_toolkit)
