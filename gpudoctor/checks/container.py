"""Container wiring and environment-variable checks (GD505-GD507)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import check, failed, noted, passed, skipped, warned
from gpudoctor.linux import container_hides_every_gpu
from gpudoctor.model import (
    Environment,
    Finding,
    HostFacts,
    Layer,
    NvmlFacts,
    Reason,
    Severity,
    Unavailable,
)
from gpudoctor.reports.interface import (
    CUDA_NA,
    NGC_NO_DRIVER,
    NO_DRIVER_INSIDE,
    NOT_EVERY_GPU,
    SMI_MISSING,
    TORCH_NO_DRIVER,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

# a container's missing driver in the words of what found it missing (`NO_DRIVER_INSIDE`):
# beside its device nodes; alone; beside the host's working driver
_MISSING: dict[str, tuple[str, str, str]] = {
    SMI_MISSING: (
        "no nvidia-smi or libnvidia-ml.so",
        "nvidia-smi or the driver's libnvidia-ml.so is missing in this {named}: the NVIDIA "
        "Container Toolkit did not mount the driver into it (started without GPU access, or "
        "NVIDIA_DRIVER_CAPABILITIES without utility)",
        "nvidia-smi is missing in this {named}"),
    NGC_NO_DRIVER: (
        "its image's start-up check found no libcuda.so.1 ('The NVIDIA Driver was not "
        "detected')",
        "the image's start-up check found no NVIDIA driver in this {named} ('The NVIDIA Driver "
        "was not detected': no libcuda.so.1 or no /dev/nvidiactl): the NVIDIA Container "
        "Toolkit did not give it the driver and the GPUs (started without GPU access; expected "
        "only where the machine has no NVIDIA GPU, as in an image build)",
        "this {named}'s image found no driver in it at start-up ('The NVIDIA Driver was not "
        "detected')"),
    TORCH_NO_DRIVER: (
        "torch finds no libcuda.so.1 ('Found no NVIDIA driver on your system')",
        "torch finds no NVIDIA driver in this {named} ('Found no NVIDIA driver on your "
        "system': no libcuda.so.1 there): the NVIDIA Container Toolkit did not give it the "
        "driver and the GPUs (started without GPU access, or without the compute capability)",
        "torch finds no driver in this {named} ('Found no NVIDIA driver on your system')"),
}
TOOLKIT_URL = ("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/"
               "troubleshooting.html")


@check("GD505", "container-gpu-access", "a container is wired to the GPUs", Layer.HOST,
       Severity.ERROR, "container, /dev/nvidia*, libnvidia-ml.so.1, NVML, CDI specs",
       reads={"host", "nvml"})
def check_container(env: Environment, tables: Tables) -> Finding:
    """Inside Docker, Podman or Kubernetes, a GPU is usable only when the NVIDIA Container
    Toolkit (or a CDI spec) put the device nodes (`/dev/nvidia*`) and the host driver's
    libraries (`libnvidia-ml.so.1`, `libcuda.so.1`) into the container.

    - NVIDIA GPUs on the PCI bus but no `/dev/nvidia*`: the container was started without GPU
      access (FAIL): `docker run --gpus all`, `--device nvidia.com/gpu=all` (CDI), or the
      pod's `nvidia.com/gpu` resource limit.
    - Device nodes but no `libnvidia-ml.so.1`: the driver libraries were not mounted (FAIL):
      `NVIDIA_DRIVER_CAPABILITIES` must include `compute,utility`.
    - NVML fails with "Unknown Error" in a container that had GPUs: after a `systemctl
      daemon-reload` on the host, systemd rewrites the container's cgroup device rules and the
      container loses access (FAIL): restart the container; for good, use CDI or the
      workaround in the toolkit's troubleshooting page.
    - A pasted report from a container that shows nvidia-smi missing there ("nvidia-smi:
      command not found", "NVIDIA-SMI couldn't find libnvidia-ml.so", the runtime's 'exec:
      "nvidia-smi": executable file not found in $PATH'): the toolkit mounts both with the
      `utility` capability, so the container was not given the GPUs (FAIL), also where the
      host's nvidia-smi answers beside it; where it lists the device nodes too, the libraries
      alone were not mounted (FAIL).
    - A pasted report from one of NVIDIA's NGC images (CUDA, PyTorch, Triton …) whose start-up
      check says "The NVIDIA Driver was not detected.  GPU functionality will not be
      available." (it found no `libcuda.so.1` or no `/dev/nvidiactl` there): the container was
      not given the driver and the GPUs (FAIL), unless the machine has no NVIDIA GPU (an image
      build), which the report then says. So is torch's "Found no NVIDIA driver on your
      system" there (it found no `libcuda.so.1`).
    - A pasted report from a container whose nvidia-smi answers but shows "CUDA Version: N/A":
      it found no `libcuda.so.1` there, so the toolkit mounted the driver's management library
      (the `utility` capability) without its CUDA library (`compute`) (FAIL).
    - `NVIDIA_VISIBLE_DEVICES=void`/`none`: GPUs hidden on purpose (a note).

    Outside a container this check does not apply (skipped); CDI specs found are shown.

    Sources: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html,
    https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html,
    https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
    """
    if not isinstance(env.host, HostFacts):
        return skipped(V.reason_of(env.host))
    host = env.host
    cdi = (("CDI specs", ", ".join(host.cdi_specs)),) if host.cdi_specs else ()
    if isinstance(host.container, Unavailable):
        return skipped(host.container.message, cdi)
    if not host.container:
        return skipped("not in a container", cdi)
    # "docker container"; a report that says only "container" names no engine
    named = "container" if host.container == "container" else f"{host.container} container"
    nodes = [n.path for n in host.dev_nodes if n.path != "/dev/dxg"] if isinstance(
        host.dev_nodes, tuple) else None
    if V.container_lost_devices(env) and nodes != [] and host.wsl is not True:
        # device nodes it had (or a report that does not list them: NVML's "Unknown Error",
        # not "not found", says its libraries and nodes were there)
        return failed(
            f"NVML fails with 'Unknown Error' in this container ({host.container}): it lost "
            "access to its GPU devices (after `systemctl daemon-reload` on the host, systemd "
            "rewrites the container's cgroup device rules)",
            f"restart the container; to stop it recurring, run it through CDI (nvidia-ctk cdi "
            f"generate) or follow {TOOLKIT_URL}",
            (("container", host.container), ("NVML", V.container_nvml_error(env) or ""),
             *cdi))
    visible = host.getenv("NVIDIA_VISIBLE_DEVICES")
    gone = env.nvml.message if isinstance(env.nvml, Unavailable) and host.wsl is not True \
        and env.nvml.reason is Reason.NOT_INSTALLED \
        and env.nvml.message in NO_DRIVER_INSIDE else None
    if gone is not None and nodes:
        # a report: the device nodes are there (`ls -l /dev/nvidia*`), the driver's libraries
        # are not
        return failed(
            f"this {named} has the GPU device nodes "
            f"({', '.join(nodes[:3])}{', …' if len(nodes) > 3 else ''}) but "
            f"{_MISSING[gone][0]}: the driver's user-space libraries were not mounted into it",
            "let the NVIDIA Container Toolkit mount them: NVIDIA_DRIVER_CAPABILITIES="
            "compute,utility (or all) with --gpus all or --device nvidia.com/gpu=all (CDI); "
            "device nodes passed by hand (--device /dev/nvidia0) bring no libraries "
            f"({TOOLKIT_URL})",
            (("container", host.container), ("/dev/nvidia*", ", ".join(nodes)),
             ("NVML", V.reason_of(env.nvml)), *cdi))
    if gone is not None and nodes is None:
        # a report: no driver inside the container it names, in its finder's words (not
        # collect_env's "Could not collect") (the toolkit mounts the driver with the utility
        # and compute capabilities: the container was not given the GPUs, or not those
        # capabilities). A machine probed here lists its device nodes, and the rules below
        # judge it (a GPU-less CI container has none and needs none)
        return failed(
            _MISSING[gone][1].format(named=named),
            "restart it with GPU access: docker run --gpus all (with the NVIDIA Container "
            "Toolkit installed and configured: sudo nvidia-ctk runtime configure --runtime=docker)"
            ", or --device nvidia.com/gpu=all with CDI; in Kubernetes a nvidia.com/gpu limit; "
            f"keep NVIDIA_DRIVER_CAPABILITIES at compute,utility or all ({TOOLKIT_URL})",
            (("container", host.container), ("NVML", V.reason_of(env.nvml)), *cdi))
    inside = V.container_nvml_error(env) if isinstance(env.nvml, NvmlFacts) else None
    found = next((m for m in NO_DRIVER_INSIDE if inside is not None and inside.startswith(m)),
                 None)
    if found is not None:
        # a report: the host's nvidia-smi answers, the container has no driver (the runtime's
        # 'exec: "nvidia-smi": executable file not found in $PATH', an NGC image's start-up
        # check, torch's words)
        return failed(
            f"the host's driver answers, but {_MISSING[found][2].format(named=named)}: the "
            "NVIDIA Container Toolkit did not mount the driver into it (started without GPU "
            "access, NVIDIA_DRIVER_CAPABILITIES without utility, or a runtime the toolkit does "
            "not hook)",
            "restart it with GPU access: docker run --gpus all (with the NVIDIA Container "
            "Toolkit configured for this docker: sudo nvidia-ctk runtime configure "
            "--runtime=docker; a snap docker needs the snap's own toolkit), or --device "
            f"nvidia.com/gpu=all with CDI; in Kubernetes a nvidia.com/gpu limit ({TOOLKIT_URL})",
            (("container", host.container), ("in the container", inside or ""), *cdi))
    no_cuda = env.nvml.cuda_driver_version if isinstance(env.nvml, NvmlFacts) else None
    if isinstance(no_cuda, Unavailable) and no_cuda.message == CUDA_NA and host.wsl is not True:
        return failed(
            f"nvidia-smi answers in this {named} but shows 'CUDA Version: N/A': it finds no "
            "libcuda.so.1 there. The NVIDIA Container Toolkit mounted the driver's management "
            "library (the utility capability) but not its CUDA library (compute)",
            "restart it with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all): -e "
            "NVIDIA_DRIVER_CAPABILITIES=compute,utility with --gpus all (an image may set it to "
            "graphics or utility alone), or --device nvidia.com/gpu=all with CDI "
            f"({TOOLKIT_URL})",
            (("container", host.container), ("nvidia-smi", CUDA_NA), *cdi))
    if isinstance(visible, Unavailable) or nodes is None:
        answered = _answers_inside(env)
        if answered is not None:  # a report: nvidia-smi's table from inside the container
            return passed(f"nvidia-smi answers in this {named} with {answered}: the NVIDIA "
                          "Container Toolkit mounted the driver's libraries (its CUDA "
                          "version shown: libcuda.so.1 too) and the GPUs",
                          (("container", host.container), *cdi))
        return skipped(f"this {named}'s environment or device nodes are "
                       "not known", cdi)
    pci = host.pci_gpus if isinstance(host.pci_gpus, tuple) else ()
    ev = (("container", host.container), ("NVIDIA_VISIBLE_DEVICES", repr(visible)),
          ("/dev/nvidia*", ", ".join(nodes) or "none"),
          ("libnvidia-ml.so.1", ", ".join(p for p, _ in host.nvml_libraries) or "none"),
          ("NVIDIA GPUs on the PCI bus", ", ".join(pci) or "none"), *cdi)
    if host.wsl is True:
        return skipped("WSL: GPUs are reached through /dev/dxg, not the container toolkit", ev)
    if visible is not None and container_hides_every_gpu(visible):
        return noted(f"NVIDIA_VISIBLE_DEVICES={visible!r}: this container hides every GPU on "
                     "purpose", "unset it, or set it to all, to use the GPUs", ev)
    start = ("restart it with GPU access: docker run --gpus all … (or --device "
             "nvidia.com/gpu=all with CDI; in Kubernetes, a nvidia.com/gpu resource limit)")
    if not nodes:
        if pci and not isinstance(env.nvml, NvmlFacts):
            # one cause, counted once: GD101 fails on it ("no NVIDIA driver, but <GPU>")
            return skipped(f"this {named} has no /dev/nvidia*, though the "
                           f"host has NVIDIA GPUs ({pci[0]}): it was started without GPU "
                           f"access (see GD101); {start}", ev)
        if isinstance(env.nvml, NvmlFacts):
            return warned(f"NVML answers but this {named} has no "
                          "/dev/nvidia*: CUDA cannot open the GPUs", start, ev)
        if visible is not None:
            return noted(f"this {named} has no /dev/nvidia* though its "
                         f"image asks for GPUs (NVIDIA_VISIBLE_DEVICES={visible}): fine on a "
                         "machine without a GPU", "where the host has GPUs, " + start, ev)
        return skipped("a container with no GPU and no sign that it wants one", ev)
    if not host.nvml_libraries and not isinstance(env.nvml, NvmlFacts):
        return failed(
            "the container has /dev/nvidia* but not the driver's libnvidia-ml.so.1: the NVIDIA "
            "Container Toolkit did not mount the driver libraries",
            "set NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all) and restart the container "
            "with --gpus all; the image must not bring driver libraries of its own", ev)
    return passed(f"{len(nodes)} device node(s) and the driver libraries are in the "
                  f"{named}", ev)


def _answers_inside(env: Environment) -> str | None:
    """"2 GPUs (NVIDIA GeForce GTX 1080)" where a pasted report from a container shows
    nvidia-smi's table run there (`HostFacts.smi_in_container`), its GPUs (or its header alone,
    cut off before them: with no GPU it prints "No devices were found" instead) and the CUDA
    version the driver runs (so libcuda.so.1 was found), and nothing from inside says otherwise: no
    NVML error or missing nvidia-smi in the container beside it, no torch there finding no
    CUDA; None otherwise."""
    nvml = env.nvml
    if not isinstance(env.host, HostFacts) or not env.host.smi_in_container:
        return None  # the table may be the host's, pasted beside the container's trouble
    # (words or a partial listing name GPUs, not nvidia-smi's view of them: NOT_EVERY_GPU)
    if not V.pasted(env) or not isinstance(nvml, NvmlFacts) or not (V.gpus(env) or not nvml.gpus) \
            or nvml.binding in NOT_EVERY_GPU or not isinstance(nvml.cuda_driver_version, int) \
            or V.container_nvml_error(env) is not None:
        return None
    rt = V.torch_runtime(env)
    if rt is not None and rt.cuda_available is False:
        return None
    gpus = V.gpus(env)
    if not gpus:  # its header with the CUDA version, the paste cut before the GPU rows
        return (f"its header (CUDA {nvml.cuda_driver_version // 1000}."
                f"{nvml.cuda_driver_version % 1000 // 10}; the paste ends before the GPU rows, "
                "which nvidia-smi prints only for a GPU it sees)")
    return (f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''} "
            f"({', '.join(dict.fromkeys(g.name for g in gpus))})")


# (variable, the values that are a problem (None: any), level: 2 warn / 1 note, what it does)
_VARS = (
    ("CUDA_LAUNCH_BLOCKING", ("1",), 2, "every kernel launch waits for the GPU to finish: "
     "training runs several times slower (a debugging switch)"),
    ("PYTORCH_NO_CUDA_MEMORY_CACHING", ("1",), 2, "PyTorch's caching allocator is off: every "
     "tensor allocation calls cudaMalloc/cudaFree (a debugging switch), much slower"),
    ("CUDA_INJECTION64_PATH", None, 2, "a tool library (a profiler or tracer through CUPTI) is "
     "injected into every CUDA process"),
    ("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", ("1",), 2, "a GPU exception writes a core dump of "
     "the GPU state: minutes, and gigabytes of disk, before the process ends"),
    ("CUDA_CACHE_DISABLE", ("1",), 2, "the JIT cache is off: PTX is recompiled at every start"),
    ("CUDA_PROFILE", ("1",), 1, "the legacy command-line profiler switch (old toolkits): "
     "profiling output on every run"),
    ("CUDA_DEVICE_MAX_CONNECTIONS", None, 1, "limits the hardware work queues per device "
     "(Megatron-style training sets 1 on purpose; elsewhere it serialises streams)"),
)


@check("GD506", "cuda-env-vars", "no debugging or profiling CUDA variable left set", Layer.HOST,
       Severity.WARNING, "environment", reads={"host"})
def check_cuda_env(env: Environment, tables: Tables) -> Finding:
    """Variables that are right while debugging or profiling and wrong when left in a shell
    profile or a job script: `CUDA_LAUNCH_BLOCKING=1` (synchronous launches),
    `PYTORCH_NO_CUDA_MEMORY_CACHING=1` (no caching allocator), `CUDA_INJECTION64_PATH` (a
    CUPTI tool injected into every process), `CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1` (a GPU core
    dump on every exception), `CUDA_CACHE_DISABLE=1` (no JIT cache): each a WARN.
    `CUDA_PROFILE=1` (the legacy profiler) and `CUDA_DEVICE_MAX_CONNECTIONS` (set on purpose by
    Megatron-style training) are notes.

    Fix: unset the variable (`unset NAME`) and remove it where it is set (~/.bashrc, the job
    script, the container image's ENV).

    Sources: https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html,
    https://docs.pytorch.org/docs/stable/cuda_environment_variables.html,
    https://docs.nvidia.com/cupti/main/main.html
    """
    if not isinstance(env.host, HostFacts):
        return skipped(V.reason_of(env.host))
    if isinstance(env.host.env, Unavailable):
        return skipped(env.host.env.message)
    found = []
    for name, bad, level, what in _VARS:
        value = env.host.getenv(name)
        if not isinstance(value, str) or (bad is not None and value.strip() not in bad):
            continue
        found.append((level, name, value, what))
    if not found:
        return passed("no debugging or profiling CUDA variable is set")
    ev = tuple((name, value) for _, name, value, _ in found)
    message = "; ".join(f"{name}={value}: {what}" for _, name, value, what in found)
    fix = "unset " + " ".join(name for _, name, _, _ in found) + (
        " (and remove it where it is set: ~/.bashrc, the job script, the image's ENV)")
    if max(level for level, *_ in found) >= 2:
        return warned(message, fix, ev)
    return noted(message, fix, ev)


@check("GD507", "mig-visible-devices", "CUDA_VISIBLE_DEVICES selects MIG devices on MIG GPUs",
       Layer.HOST, Severity.INFO, "NVML MIG mode, environment", reads={"host", "nvml"})
def check_mig_visible(env: Environment, tables: Tables) -> Finding:
    """With MIG mode on, a GPU is split into MIG devices and CUDA programs run on those, not on
    the whole GPU; each has a UUID of its own (`MIG-…`, listed by `nvidia-smi -L`). To choose
    which one a job gets, `CUDA_VISIBLE_DEVICES` must name it by that UUID; a plain index
    names the parent GPU, not a MIG device. A note when MIG is on and
    `CUDA_VISIBLE_DEVICES` is unset or names no `MIG-` device, and when a pasted report shows
    MIG (collect_env's "MIG 3g.20gb Device 0" lines, nvidia-smi's) but not the variables.

    Fix: `export CUDA_VISIBLE_DEVICES=MIG-<uuid>` (from `nvidia-smi -L`), or turn MIG off
    (`sudo nvidia-smi -i <index> -mig 0`) to use the whole GPU.

    Sources: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/index.html,
    https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html
    """
    if not isinstance(env.nvml, NvmlFacts):
        return skipped(V.reason_of(env.nvml))
    mig = [g.index for g in V.gpus(env) if g.mig_mode is True]
    known = env.host.env if isinstance(env.host, HostFacts) else env.host
    if isinstance(known, Unavailable):
        if mig and not V.is_reported(known):  # a pasted report shows MIG, not the variables
            return noted(f"MIG mode is on for GPU {', '.join(map(str, mig))}: CUDA runs on its "
                         "MIG devices, not on the whole GPU; which one a job gets is set by "
                         "CUDA_VISIBLE_DEVICES, which the report does not show",
                         "export CUDA_VISIBLE_DEVICES=MIG-<uuid> (nvidia-smi -L lists them), "
                         f"or turn MIG off: sudo nvidia-smi -i {mig[0]} -mig 0",
                         (("MIG on", ", ".join(f"GPU {i}" for i in mig)),
                          ("CUDA_VISIBLE_DEVICES", known.message)))
        return skipped(known.message)
    assert isinstance(env.host, HostFacts)
    if not mig:
        return passed("no GPU has MIG mode on")
    value = env.host.getenv("CUDA_VISIBLE_DEVICES")
    assert not isinstance(value, Unavailable)  # the environment is known (above)
    ev = (("MIG on", ", ".join(f"GPU {i}" for i in mig)),
          ("CUDA_VISIBLE_DEVICES", repr(value)))
    if value is not None and any(v.strip().startswith("MIG-") for v in value.split(",")):
        return passed(f"MIG on for GPU {', '.join(map(str, mig))}; CUDA_VISIBLE_DEVICES "
                      "selects MIG devices", ev)
    return noted(f"MIG mode is on for GPU {', '.join(map(str, mig))}: CUDA runs on its MIG "
                 "devices, and " + ("CUDA_VISIBLE_DEVICES is not set to choose one" if value
                                    is None else f"CUDA_VISIBLE_DEVICES={value!r} names none"),
                 "export CUDA_VISIBLE_DEVICES=MIG-<uuid> (nvidia-smi -L lists them), or turn "
                 f"MIG off: sudo nvidia-smi -i {mig[0]} -mig 0", ev)


CHECKS = (check_container, check_cuda_env, check_mig_visible)
