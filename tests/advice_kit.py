"""Follow gpudoctor's advice on a recorded machine: what the Environment would say after the
wheel a fix names is installed, or the driver it asks for.

A fix's target is applied as the machine would show it afterwards, from the tables' own row
for that wheel: torch's version as the wheel names itself, its CUDA, its arch list
(`torch.cuda.get_arch_list()` spells TORCH_CUDA_ARCH_LIST's "8.6" as "sm_86", and "12.0+PTX"
as "sm_120" and "compute_120"), the cuDNN it pins (as its nvidia-cudnn wheel), and
`torch.cuda.is_available()` as the driver decides (`compat.rules`). A fact the tables do not
hold (an arch list they lack) becomes Unavailable, never a guess. A driver is applied to NVML,
libcuda and the kernel module alike, with the CUDA version that driver reports.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from gpudoctor import views as V
from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, machine
from gpudoctor.compat.advice import torch_advice
from gpudoctor.compat.pick import TorchPick, runs
from gpudoctor.compat.wheels import companion_version, labelled
from gpudoctor.model import (
    DeviceNode,
    Environment,
    GpuFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    Report,
    Severity,
    Status,
    TorchDevice,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.versions import encode_cuda_version, parse_arch

# GD103/GD104's "upgrade the driver to ≥ X", GD101's "install the NVIDIA driver ≥ X"
DRIVER_ASK = re.compile(r"(?:upgrade the (?:NVIDIA )?driver to|install the NVIDIA driver) "
                        r"≥ (\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True, slots=True)
class Target:
    """One thing a fix asks for: a wheel (`pick`) or a driver version."""

    kind: str  # "wheel" | "driver"
    what: str  # the pip line, or the driver version
    pick: TorchPick | None = None


def targets(env: Environment, tables: Tables, report: Report) -> list[tuple[Target, set[str]]]:
    """Every target the advice names for `env`, with the ids of the checks whose fix names
    it: `recommend`'s wheel (for every machine, healthy ones too) and each driver a fix asks
    for."""
    advice = torch_advice(env, tables)
    out: list[tuple[Target, set[str]]] = []
    if advice.pick is not None and advice.blocked is None:
        cmd = advice.pick.command
        ids = {r.check_id for r in report.results if r.finding.fix and cmd in r.finding.fix
               and bad(r.finding.status, r.severity)}
        out.append((Target("wheel", cmd, advice.pick), ids))
    asked: dict[str, set[str]] = {}
    for r in report.results:
        if r.finding.fix and bad(r.finding.status, r.severity):
            for m in DRIVER_ASK.finditer(r.finding.fix):
                asked.setdefault(m[1], set()).add(r.check_id)
    out += [(Target("driver", v), ids) for v, ids in asked.items()]
    return out


def bad(status: Status, severity: Severity) -> bool:
    """A failure, or a warning that `--strict` counts (a note of INFO severity is not one)."""
    return status is Status.FAIL or (status is Status.WARN and severity > Severity.INFO)


def rank(status: Status, severity: Severity) -> int:
    return 2 if status is Status.FAIL else 1 if bad(status, severity) else 0


def apply(env: Environment, tables: Tables, target: Target) -> Environment | None:
    """The Environment after following `target`; None where it cannot be applied (a driver to
    a machine whose driver facts are not there to change)."""
    if target.kind == "driver":
        return with_driver(env, tables, target.what)
    assert target.pick is not None
    return with_wheel(env, tables, target.pick)


def _sm_names(arch_list: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a.name for e in arch_list for a in parse_arch(e)))


def _cudnn_int(version: str | None) -> int | None:
    if not version:
        return None
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


def with_wheel(env: Environment, tables: Tables, pick: TorchPick) -> Environment:
    rel = tables.torch_release(pick.version)
    variant = rel.variant(pick.variant) if rel else None
    assert rel is not None and variant is not None, pick
    tagged = labelled(rel, variant)
    version = f"{pick.version}+{pick.variant}" if tagged else pick.version
    cudnn = _cudnn_int(variant.cudnn)
    how = runs(env, tables, variant.cuda)
    gpus = [g for g, _ in machine.resolved_gpus(env, tables)
            if isinstance(g.compute_capability, str)]
    t = env.torch
    old_rt = V.torch_runtime(env)
    seen = bool(V.gpus(env)) or bool(old_rt and isinstance(old_rt.devices, tuple)
                                     and old_rt.devices)
    available: bool | Unavailable
    if V.driver_unknown(env) or (how in ("full", "mvc", "no-driver") and V.driver_present(env)
                                 and not seen) or (how == "no-driver" and V.driver_present(env)):
        # a report without the driver's version, or without its GPUs: it cannot tell
        available = Unavailable(Reason.NOT_REPORTED, "the driver's state is not in the report")
    else:
        available = how in ("full", "mvc") and seen
    devices: tuple[TorchDevice, ...] | Unavailable
    if old_rt is not None and isinstance(old_rt.devices, tuple) and old_rt.devices:
        devices = old_rt.devices if available is True else ()
    elif isinstance(env.nvml, NvmlFacts) and V.is_reported(env.nvml):
        devices = tuple(TorchDevice(g.index, g.name, str(g.compute_capability), 0)
                        for g in gpus) if available is True else ()
    else:
        devices = Unavailable(Reason.NOT_REPORTED, "torch's devices are not in the report")
    arch: tuple[str, ...] | Unavailable = (
        _sm_names(variant.arch_list) if variant.arch_list is not None else
        Unavailable(Reason.NOT_REPORTED, f"the tables lack the arch list of torch {pick.version} "
                    f"{pick.variant}"))
    site = "/usr/lib/python3/site-packages"
    if isinstance(t, TorchFacts) and isinstance(t.static, TorchStatic):
        site = t.static.location.rsplit("/torch", 1)[0] or site
    lib = f"{site}/nvidia/cudnn/lib/libcudnn.so.{variant.cudnn.split('.')[0]}" \
        if variant.cudnn else None
    runtime = TorchRuntime(
        version=version, cuda=variant.cuda, hip=None,
        cudnn_version=cudnn if cudnn is not None else Unavailable(
            Reason.NOT_REPORTED, "the tables do not record this wheel's cuDNN"),
        cuda_available=available,
        cuda_init_error=None if available is not False else (
            "RuntimeError: Found no NVIDIA driver on your system." if not V.driver_present(env)
            else "RuntimeError: The NVIDIA driver on your system is too old."),
        device_count=len(devices) if isinstance(devices, tuple) else devices,
        arch_list=arch if available is not False else (),
        devices=devices,
        cudnn_conv=("ok" if available is True and cudnn is not None else
                    "not-run: CUDA is not available" if available is False else
                    Unavailable(Reason.NOT_REPORTED, "no convolution was run")),
        mapped_libraries=(lib,) if available is True and lib else (),
        file=(old_rt.file if old_rt is not None else
              Unavailable(Reason.NOT_REPORTED, "not in the report")),
    )
    static: TorchStatic | Unavailable
    companions = ()
    if isinstance(t, TorchFacts) and isinstance(t.static, TorchStatic):
        companions = tuple((n, f"{v}+{pick.variant}" if tagged and n != "torchaudio" else v)
                           for n, _ in t.static.companions
                           if (v := companion_version(rel, n)))
        major = variant.cuda.split(".")[0]
        static = dataclasses.replace(
            t.static, version=version, version_py=(("__version__", version),
                                                   ("cuda", variant.cuda)),
            nvidia_wheels=((f"nvidia-cudnn-cu{major}", variant.cudnn),) if variant.cudnn
            else (),
            distributions=((version, t.static.location),) if t.static.distributions else (),
            companions=companions)
    elif isinstance(t, TorchFacts) and isinstance(t.static, Unavailable) \
            and t.static.reason is Reason.NOT_INSTALLED and isinstance(t.python, str):
        static = TorchStatic(version, f"{site}/torch", (("__version__", version),
                                                        ("cuda", variant.cuda)), ())
    else:
        static = t.static if isinstance(t, TorchFacts) else Unavailable(
            Reason.NOT_REPORTED, "torch's package metadata is not in the report")
    if not isinstance(t, TorchFacts):
        t = TorchFacts(Unavailable(Reason.NOT_REPORTED, "not in the report"), static, runtime,
                       Unavailable(Reason.NOT_REPORTED, "no probe ran"))
    return dataclasses.replace(env, torch=dataclasses.replace(t, static=static,
                                                              runtime=runtime))


def with_driver(env: Environment, tables: Tables, driver: str) -> Environment | None:
    cuda = tables.cuda_for_driver(driver)
    code = encode_cuda_version(cuda) if cuda else None
    if not isinstance(env.nvml, NvmlFacts) and not isinstance(env.libcuda, LibcudaFacts):
        if V.driver_present(env) or (not V.gpu_signs(env) and not env.sources):
            return None  # a driver NVML cannot reach, or no GPU for a driver to drive
        env = installed_driver(env, driver, code)
    nvml, libcuda, host = env.nvml, env.libcuda, env.host
    if isinstance(nvml, NvmlFacts):
        nvml = dataclasses.replace(nvml, driver_version=driver, cuda_driver_version=(
            code if code is not None else nvml.cuda_driver_version))
        if isinstance(getattr(nvml, "smi_version", None), str):  # its nvidia-smi comes with it
            nvml = dataclasses.replace(nvml, smi_version=driver)  # type: ignore[call-arg]
    if isinstance(libcuda, LibcudaFacts):
        libcuda = dataclasses.replace(libcuda, driver_version=driver, cuda_driver_version=(
            code if code is not None else libcuda.cuda_driver_version))
    if isinstance(host, HostFacts):
        host = dataclasses.replace(
            host, nvidia_module=driver if isinstance(host.nvidia_module, str)
            else host.nvidia_module,
            nvml_libraries=tuple((p, driver) for p, _ in host.nvml_libraries))
    out = dataclasses.replace(env, nvml=nvml, libcuda=libcuda, host=host)
    rt = V.torch_runtime(out)
    t = out.torch
    if rt is not None and isinstance(t, TorchFacts) and rt.cuda_available is False \
            and isinstance(rt.cuda, str) and runs(out, tables, rt.cuda) in ("full", "mvc"):
        gpus = [g for g, _ in machine.resolved_gpus(out, tables)
                if isinstance(g.compute_capability, str)]
        devices = tuple(TorchDevice(g.index, g.name, str(g.compute_capability), 0) for g in gpus)
        if devices:
            rt = dataclasses.replace(
                rt, cuda_available=True, cuda_init_error=None, devices=devices,
                device_count=len(devices), cudnn_conv="ok" if isinstance(
                    rt.cudnn_version, int) else rt.cudnn_conv)
        else:  # no GPU known to the facts: what torch says now cannot be told
            rt = dataclasses.replace(rt, cuda_available=Unavailable(
                Reason.NOT_REPORTED, "not known after the driver change"))
        out = dataclasses.replace(out, torch=dataclasses.replace(t, runtime=rt))
    return out


def installed_driver(env: Environment, driver: str, code: int | None) -> Environment:
    """A machine with no driver, after installing `driver` and rebooting: NVML and libcuda
    answer with its version and the CUDA it reports, the kernel module is loaded and its
    device nodes exist. NVML lists the GPUs the PCI bus showed; their names and compute
    capabilities are not known here (the bus gives only device ids), so they stay unknown."""
    host = env.host
    pci = host.pci_gpus if isinstance(host, HostFacts) and isinstance(host.pci_gpus,
                                                                       tuple) else ()
    unknown = Unavailable(Reason.NOT_REPORTED, "not known before the driver was installed")
    gpus = tuple(GpuFacts(i, f"NVIDIA GPU {entry.split()[-1]}", unknown, unknown, unknown,
                          unknown, entry.split()[0], unknown, unknown)
                 for i, entry in enumerate(pci))
    nvml = NvmlFacts(driver, code if code is not None else unknown, unknown, "nvidia-ml-py",
                     gpus)
    lib = "/usr/lib/x86_64-linux-gnu"
    libcuda = LibcudaFacts(f"{lib}/libcuda.so.1", code or 0, driver)
    if isinstance(host, HostFacts):
        nodes = tuple(DeviceNode(p, True, True) for p in (
            *(f"/dev/nvidia{i}" for i in range(len(gpus))), "/dev/nvidiactl",
            "/dev/nvidia-uvm"))
        host = dataclasses.replace(host, nvidia_module=driver, dev_nodes=host.dev_nodes or nodes,
                                   nvml_libraries=((f"{lib}/libnvidia-ml.so.1", driver),))
    return dataclasses.replace(env, nvml=nvml, libcuda=libcuda, host=host)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A target followed: whether it left the machine closed, and what is not."""

    target: Target
    applied: bool
    problems: tuple[str, ...]  # empty: closed


def follow(env: Environment, tables: Tables) -> list[Outcome]:
    """Apply each target the advice names, re-judge, and list what is still wrong: a check
    whose fix named the target still failing or warning, any check newly failing or warning,
    or any check worse than before."""
    before = run_checks(env, tables)
    was = {r.check_id: r for r in before.results}
    out = []
    for target, ids in targets(env, tables, before):
        after_env = apply(env, tables, target)
        if after_env is None:
            out.append(Outcome(target, False, ()))
            continue
        problems = []
        for r in run_checks(after_env, tables).results:
            old = was[r.check_id]
            now, then = rank(r.finding.status, r.severity), rank(old.finding.status,
                                                                 old.severity)
            if r.check_id in ids and now:
                problems.append(f"{r.check_id} still {r.finding.status}: {r.finding.message}")
            elif now > then:
                problems.append(f"{r.check_id} {old.finding.status} -> {r.finding.status}: "
                                f"{r.finding.message}")
        out.append(Outcome(target, True, tuple(problems)))
    return out
