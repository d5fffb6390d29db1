"""Read-only views over an Environment that several checks share. Pure functions, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from gpudoctor.model import (
    CudaFacts,
    Environment,
    GpuFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    ToolkitFacts,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.versions import decode_cuda_version, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


def version(text: str | None) -> Version | None:
    """Parse a version, None when it is not one."""
    if not text:
        return None
    try:
        return Version(text.split("+")[0])
    except (InvalidVersion, ValueError):  # ValueError: a part past int()'s 4300 digits
        return None


def same_release(a: str, b: str) -> bool:
    """Whether two version strings name the same build: equal public versions, and local parts
    that are equal or missing on one side. PyPI's default torch wheel has metadata version
    `2.5.1` while its `torch.__version__` is `2.5.1+cu124`: one copy, not two; `+cpu` against
    `+cu124`, or `2.4.0` against `2.5.1`, are two."""
    try:
        va, vb = Version(a), Version(b)
    except (InvalidVersion, ValueError):
        return a == b
    if va.public != vb.public:
        return False
    return va.local is None or vb.local is None or va.local == vb.local


def major(text: str) -> int | None:
    """The major version number of "12.4" → 12."""
    v = version(text)
    return v.major if v else None


def driver_version(env: Environment) -> str | None:
    """The driver version, from NVML or else /proc/driver/nvidia/version."""
    if isinstance(env.nvml, NvmlFacts) and isinstance(env.nvml.driver_version, str):
        return env.nvml.driver_version
    if isinstance(env.libcuda, LibcudaFacts) and isinstance(env.libcuda.driver_version, str):
        return env.libcuda.driver_version
    return None


def driver_present(env: Environment) -> bool:
    """Whether a working driver was seen by NVML or libcuda."""
    return isinstance(env.nvml, NvmlFacts) or (
        isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version > 0
    )


def reported_driver_cuda(env: Environment) -> tuple[str, str] | None:
    """The highest CUDA the driver says it runs (NVML, else cuDriverGetVersion), and which."""
    if isinstance(env.nvml, NvmlFacts) and isinstance(env.nvml.cuda_driver_version, int):
        return decode_cuda_version(env.nvml.cuda_driver_version), "NVML"
    if isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version > 0:
        return decode_cuda_version(env.libcuda.cuda_driver_version), "cuDriverGetVersion"
    return None


def driver_cuda(env: Environment, tables: Tables) -> tuple[str, str] | None:
    """The highest CUDA the driver runs, and where that came from; with no reading from the
    driver itself, derived from its version through the compat table."""
    reported = reported_driver_cuda(env)
    if reported:
        return reported
    drv = driver_version(env)
    if drv:
        derived = tables.cuda_for_driver(drv)
        if derived:
            return derived, "compat table (derived from the driver version)"
    return None


def cuda_initialised(env: Environment) -> bool:
    """Whether torch's CUDA initialised on the machine (`torch.cuda.is_available()` True, as
    probed or as a report states it): proof that the driver stack runs torch's CUDA."""
    rt = torch_runtime(env)
    return rt is not None and rt.cuda_available is True


def gpus(env: Environment) -> tuple[GpuFacts, ...]:
    """The GPUs NVML could read."""
    if not isinstance(env.nvml, NvmlFacts):
        return ()
    return tuple(g for g in env.nvml.gpus if isinstance(g, GpuFacts))


def torch_missing(env: Environment) -> Unavailable | None:
    """Why there is no torch to read, None when there is one. Two shapes say it alike: a bare
    Unavailable (not probed, not in a report, an interpreter that cannot run, and a missing
    torch in snapshots of older gpudoctor versions), and the TorchFacts of an interpreter probed
    without torch, whose `static` and `runtime` are both Unavailable(NOT_INSTALLED) and whose
    `python` names that interpreter (for the install line)."""
    t = env.torch
    if isinstance(t, Unavailable):
        return t
    if (isinstance(t.static, Unavailable) and t.static.reason is Reason.NOT_INSTALLED
            and isinstance(t.runtime, Unavailable) and t.runtime.reason is Reason.NOT_INSTALLED):
        return t.static
    return None


def python_version(env: Environment) -> tuple[str, str] | None:
    """The version ("3.10.12") of the interpreter diagnosed, and where it was read: what its
    probe (or a report's "Python version" line) recorded, else gpudoctor's own interpreter's
    when that is the one probed; None when nothing tells (an older snapshot, a report
    without it)."""
    t = env.torch
    if isinstance(t, TorchFacts) and isinstance(t.python_version, str):
        return t.python_version, t.python if isinstance(t.python, str) else "the report"
    host = env.host
    if isinstance(t, TorchFacts) and isinstance(host, HostFacts) and t.python == \
            host.python_executable and version(host.python_version):
        return host.python_version, host.python_executable
    return None


def torch_facts(env: Environment) -> TorchFacts | None:
    """TorchFacts, None when torch was not found or not probed (`torch_missing`)."""
    return env.torch if isinstance(env.torch, TorchFacts) and torch_missing(env) is None \
        else None


def torch_runtime(env: Environment) -> TorchRuntime | None:
    """What `import torch` reported, None when it failed or did not run."""
    t = torch_facts(env)
    return t.runtime if t and isinstance(t.runtime, TorchRuntime) else None


def torch_static(env: Environment) -> TorchStatic | None:
    """Package metadata of the installed torch."""
    t = torch_facts(env)
    return t.static if t and isinstance(t.static, TorchStatic) else None


def torch_cuda(env: Environment) -> str | None:
    """torch's CUDA version: from the import, else from torch/version.py; None for CPU builds,
    and for a CUDA build whose version a report does not state (`cuda_build_unstated`)."""
    rt = torch_runtime(env)
    if rt is not None:
        return rt.cuda if isinstance(rt.cuda, str) else None
    st = torch_static(env)
    if st is not None:
        value = dict(st.version_py).get("cuda")
        return value if value and value != "None" else None
    return None


def cuda_build_unstated(env: Environment) -> Unavailable | None:
    """Why torch's CUDA version is unknown when a report shows a CUDA build without it (only
    torch's arch warning, which CUDA builds alone print); None otherwise."""
    rt = torch_runtime(env)
    return rt.cuda if rt is not None and isinstance(rt.cuda, Unavailable) else None


def torch_version(env: Environment) -> str | None:
    """torch's version string, from the import or the package metadata; None when torch is
    not there, or a report does not state its version (`torch_name`)."""
    rt = torch_runtime(env)
    if rt is not None and isinstance(rt.version, str):
        return rt.version
    st = torch_static(env)
    return st.version if st else None


def torch_built_cudnn(env: Environment, tables: Tables) -> tuple[str, str] | None:
    """The cuDNN the installed torch was built for, and where that was read. This machine's
    own artifact first: the `nvidia-cudnn-cuNN` wheel installed beside torch (N = torch's CUDA
    major; pip installs the version torch's metadata pins), else the PyTorch table's row for
    the wheel variant (release and local tag, or the release's PyPI default); None when
    neither tells."""
    cuda = torch_cuda(env)
    st = torch_static(env)
    if cuda and st is not None:
        name = f"nvidia-cudnn-cu{cuda.split('.')[0]}"
        wheel = next((v for n, v in st.nvidia_wheels if n == name), None)
        if wheel:
            return wheel, f"the installed {name} {wheel} wheel"
    tv = torch_version(env)
    if not tv or not cuda:
        return None
    base, _, tag = tv.partition("+")
    release = tables.torch_release(base)
    variant = release.variant(tag or release.pypi_default or "") if release else None
    if variant is None or not variant.cudnn:
        return None
    return variant.cudnn, f"compat_tables/torch.toml, torch {base} {variant.tag}"


def torch_name(env: Environment) -> str:
    """"torch 2.5.1+cu124" for messages; "torch (version not in the report)" when a report
    shows torch without its version."""
    v = torch_version(env)
    return f"torch {v}" if v else "torch (version not in the report)"


def toolkit(env: Environment) -> ToolkitFacts | None:
    """The CUDA toolkit in use."""
    return env.cuda.in_use if isinstance(env.cuda, CudaFacts) else None


def toolkit_version(env: Environment) -> str | None:
    """The in-use toolkit's version, None when there is none or it cannot be read."""
    tk = toolkit(env)
    return tk.version if tk and isinstance(tk.version, str) else None


# an NVML that failed for one of these found a driver: installed, if not working
_DRIVER_THERE = (Reason.DRIVER_NOT_LOADED, Reason.VERSION_MISMATCH, Reason.PERMISSION_DENIED,
                 Reason.TIMEOUT)


def gpu_signs(env: Environment) -> tuple[str, ...]:
    """What says this machine has, or is meant to have, an NVIDIA GPU: a driver NVML or libcuda
    answers, an NVML that finds a driver it cannot use, the kernel module, the driver's
    libnvidia-ml, /dev/nvidia* (WSL: /dev/dxg), an NVIDIA GPU on the PCI bus. Empty on a
    machine with no GPU at all: a CI runner, a build host."""
    signs: list[str] = []
    if isinstance(env.nvml, NvmlFacts):
        n = len(env.nvml.gpus)
        drv = env.nvml.driver_version
        signs.append(f"NVIDIA driver {drv if isinstance(drv, str) else '(version unknown)'} "
                     "is loaded"
                     + (f" with {n} GPU{'s' if n != 1 else ''}" if n else ""))
    elif isinstance(env.nvml, Unavailable) and env.nvml.reason in _DRIVER_THERE:
        signs.append(f"an NVIDIA driver is installed ({env.nvml.message})")
    if not signs and isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version:
        signs.append("the CUDA driver library libcuda.so.1 answers")
    host = env.host
    if not isinstance(host, HostFacts):
        return tuple(signs)
    if isinstance(host.pci_gpus, tuple) and host.pci_gpus:
        n = len(host.pci_gpus)
        signs.append(f"{n} NVIDIA GPU{'s are' if n != 1 else ' is'} on the PCI bus "
                     f"({', '.join(host.pci_gpus[:2])})")
    if isinstance(host.nvidia_module, str):
        signs.append(f"the NVIDIA kernel module {host.nvidia_module} is loaded")
    if host.nvml_libraries:
        path, v = host.nvml_libraries[0]
        signs.append(f"the NVIDIA driver library {v} is installed ({path})")
    if host.dev_nodes:
        signs.append(f"{', '.join(n.path for n in host.dev_nodes[:3])} exist")
    return tuple(signs)


def min_driver(tables: Tables, cuda: str) -> str | None:
    """The driver a CUDA version needs in full (what GD103 passes), from the compat table."""
    minimum = tables.cuda_min_driver(cuda)
    return (minimum.full or minimum.family) if minimum else None


def needs_driver(env: Environment) -> list[str]:
    """What on this machine needs an NVIDIA driver (a CUDA torch, a toolkit)."""
    why = []
    tc = torch_cuda(env)
    if tc:
        why.append(f"PyTorch {torch_version(env)} is a CUDA {tc} build")
    tv = toolkit_version(env)
    if tv:
        why.append(f"CUDA toolkit {tv} is installed at {toolkit(env).root}")  # type: ignore[union-attr]
    return why


def reason_of(fact: object) -> str:
    """The message of an Unavailable, for SKIP findings."""
    return fact.message if isinstance(fact, Unavailable) else "not available"


# --------------------------------------------------------------------------- partial facts
# A pasted report (collect_env, nvidia-smi) lacks facts the probes always have; those are
# Unavailable(NOT_REPORTED). The views below resolve what a published table can tell (a
# compute capability from the product name, a wheel's arch list) and say where it came from;
# the rest stays Unavailable, and the checks reading it SKIP.


@dataclass(frozen=True, slots=True)
class SeenGpu:
    """A GPU a check judges, with its compute capability and where that came from."""

    index: int
    name: str
    cc: str | Unavailable  # "8.9"
    source: str  # "torch", "NVML", "from the product name (...)", or why it is unknown


def gpu_cc(g: GpuFacts, tables: Tables) -> tuple[str, str] | Unavailable:
    """A GPU's compute capability and its source: NVML's reading, else (a report gives only
    the name) the product name looked up in compat_tables/gpu.toml, a published fact."""
    if isinstance(g.compute_capability, str):
        return g.compute_capability, "NVML"
    arch = tables.gpu_of_product(g.name)
    if arch is None:
        return Unavailable(Reason.NOT_REPORTED, f"the compute capability of {g.name} is not in "
                           "the report, and the GPU table has no product by that name")
    return arch.cc, (f"from the product name: compat_tables/gpu.toml lists it as "
                     f"{arch.family} ({sm_of(arch.cc)}, {arch.status})")


def seen_gpus(env: Environment, tables: Tables) -> tuple[SeenGpu, ...]:
    """The GPUs to judge an arch against: torch's devices when torch listed them, else the
    driver's (NVML, nvidia-smi, collect_env), with `gpu_cc`'s compute capability."""
    rt = torch_runtime(env)
    if rt is not None and isinstance(rt.devices, tuple) and rt.devices:
        return tuple(SeenGpu(d.index, d.name, d.capability, "torch") for d in rt.devices)
    warned = dict(rt.warned_gpus) if rt is not None else {}
    seen = [SeenGpu(g.index, g.name, warned[g.name], "torch's warning in the report")
            if g.name in warned and isinstance(g.compute_capability, Unavailable)
            else SeenGpu(g.index, g.name, g.compute_capability, source)
            for g, source in resolved_gpus(env, tables)]
    known = {g.name for g in seen}
    seen += [SeenGpu(len(seen) + i, name, cc, "torch's warning in the report")
             for i, (name, cc) in enumerate(n for n in warned.items() if n[0] not in known)]
    return tuple(seen)


def torch_arch_list(env: Environment, tables: Tables
                    ) -> tuple[tuple[str, ...], str] | Unavailable:
    """torch's arch list and its source: `torch.cuda.get_arch_list()` from the probe; for a
    report that does not show it, the arch list the compat table records for that wheel (the
    release and CUDA variant named by the version, e.g. 2.5.1+cu124; a version without a local
    tag only when the release's PyPI default variant has the reported CUDA)."""
    rt = torch_runtime(env)
    if rt is None:
        return Unavailable(Reason.NOT_INSTALLED, "torch did not import")
    if isinstance(rt.arch_list, tuple):
        return rt.arch_list, ("torch.cuda.get_arch_list()" if is_reported(rt.devices)
                              else "the report: torch's warning or its build flags")
    if isinstance(rt.version, Unavailable):
        return Unavailable(Reason.NOT_REPORTED, "torch's arch list is not in the report, nor "
                           "its version")
    base, _, tag = rt.version.partition("+")
    release = tables.torch_release(base)
    variant = release.variant(tag or release.pypi_default or "") if release else None
    cuda = rt.cuda if isinstance(rt.cuda, str) else ""
    if variant is None or variant.cuda != ".".join(cuda.split(".")[:2]):
        return Unavailable(Reason.NOT_REPORTED, f"torch's arch list is not in the report, and "
                           f"torch {rt.version} (CUDA {cuda or 'not stated'}) is not a wheel in "
                           "the tables")
    if variant.arch_list is None:
        return Unavailable(Reason.NOT_REPORTED, f"torch's arch list is not in the report, and "
                           f"the tables lack the arch list of torch {base} {variant.tag}")
    return variant.arch_list, (f"not in the report: the arch list of the torch {base} "
                               f"{variant.tag} wheel, from compat_tables/torch.toml")


def is_reported(fact: object) -> bool:
    """Whether a fact is known, i.e. not Unavailable because a pasted report lacks it."""
    return not (isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED)


def driver_unknown(env: Environment) -> bool:
    """Whether the driver's state is not in the report (neither NVML's nor libcuda's view):
    checks must not read "no driver" into it."""
    return not is_reported(env.nvml) and not driver_present(env)


def gpu_details(g: GpuFacts) -> list[str]:
    """What is known of a GPU beyond its name, for evidence: "sm_90", "80 GiB", the bus id."""
    parts = []
    if isinstance(g.compute_capability, str):
        parts.append(sm_of(g.compute_capability))
    if isinstance(g.memory_total, int):
        parts.append(f"{g.memory_total / 2**30:.0f} GiB")
    if isinstance(g.pci_bus_id, str):
        parts.append(g.pci_bus_id)
    return parts


def resolved_gpus(env: Environment, tables: Tables) -> tuple[tuple[GpuFacts, str], ...]:
    """The driver's GPUs with the compute capability filled in where `gpu_cc` can tell it,
    each with where it came from (or, when it stays Unavailable, why)."""
    out = []
    for g in gpus(env):
        cc = gpu_cc(g, tables)
        if isinstance(cc, Unavailable):
            out.append((replace(g, compute_capability=cc), cc.message))
        else:
            out.append((replace(g, compute_capability=cc[0]), cc[1]))
    return tuple(out)
