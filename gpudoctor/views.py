"""Read-only views of an Environment that every layer above the model shares: the driver's
version, torch's CUDA, the GPUs seen, which torch imports against which pip installed ...

Pure functions of the Environment alone, no I/O, no compat table (what needs the tables, an
environment read against published rows, is `gpudoctor.compat.machine`). A leaf below checks,
compat, probes and renderers: importing it loads the model and nothing else of gpudoctor.
Imported as `V` (`from gpudoctor import views as V`).
"""

from __future__ import annotations

import posixpath

from packaging.version import InvalidVersion, Version

from gpudoctor.model import (
    Environment,
    GpuFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    ToolkitFacts,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)
from gpudoctor.versions import decode_cuda_version, sm_of


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


# NvmlFacts.binding of the GPUs an issue body names in words (gpudoctor.reports.prose): a
# GPU named is no sign that a driver runs it
PROSE = "the reporter's words"


def named_in_words(env: Environment) -> tuple[str, ...] | None:
    """The GPUs a report names only in words (binding PROSE; none where the words name a
    driver and no GPU), else None."""
    if not isinstance(env.nvml, NvmlFacts) or env.nvml.binding != PROSE:
        return None
    return tuple(g.name for g in env.nvml.gpus if isinstance(g, GpuFacts))


def driver_present(env: Environment) -> bool:
    """Whether a working driver was seen by NVML or libcuda (not GPUs named in words)."""
    return (isinstance(env.nvml, NvmlFacts) and named_in_words(env) is None) or (
        isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version > 0
    )


def reported_driver_cuda(env: Environment) -> tuple[str, str] | None:
    """The highest CUDA the driver says it runs (NVML, else cuDriverGetVersion), and which."""
    if isinstance(env.nvml, NvmlFacts) and isinstance(env.nvml.cuda_driver_version, int):
        return decode_cuda_version(env.nvml.cuda_driver_version), "NVML"
    if isinstance(env.libcuda, LibcudaFacts) and env.libcuda.cuda_driver_version > 0:
        return decode_cuda_version(env.libcuda.cuda_driver_version), "cuDriverGetVersion"
    return None


def cuda_initialised(env: Environment) -> bool:
    """Whether torch's CUDA initialised on the machine (`torch.cuda.is_available()` True, as
    probed or as a report states it): proof that the driver stack runs torch's CUDA."""
    rt = torch_runtime(env)
    return rt is not None and rt.cuda_available is True


def warned_after_init(env: Environment) -> bool:
    """Whether a report quotes torch's warnings about a GPU's capability (too old, or not in
    its build), which torch prints only after its CUDA initialised (torch/cuda/__init__.py
    queues `_check_capability` and `_check_cubins` with `_lazy_call`; `_lazy_init` runs them
    after `torch._C._cuda_init()` succeeded, and they read each device's capability): proof,
    like `cuda_initialised`, that the driver runs torch's CUDA, unless torch also said CUDA is
    unavailable."""
    rt = torch_runtime(env)
    return rt is not None and rt.cuda_available is not False and bool(
        rt.warned_gpus or rt.incompatible_gpus or rt.too_old_gpus)


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
    if isinstance(t, TorchFacts) and isinstance(host, HostFacts) and isinstance(
            host.python_version, str) and isinstance(host.python_executable, str) and \
            t.python == host.python_executable and version(host.python_version):
        return host.python_version, host.python_executable
    return None


def interpreter(env: Environment) -> str | None:
    """The path of the interpreter diagnosed, which an install line runs pip with; None when
    it is not known (a pasted report names no interpreter, or not as a path)."""
    t = env.torch
    if isinstance(t, TorchFacts) and isinstance(t.python, str) and t.python.startswith("/"):
        return t.python
    return None


def torch_facts(env: Environment) -> TorchFacts | None:
    """TorchFacts, None when torch was not found or not probed (`torch_missing`)."""
    return env.torch if isinstance(env.torch, TorchFacts) and torch_missing(env) is None \
        else None


def torch_runtime(env: Environment) -> TorchRuntime | None:
    """What `import torch` reported, None when it failed or did not run."""
    t = torch_facts(env)
    return t.runtime if t and isinstance(t.runtime, TorchRuntime) else None


def stated_release(env: Environment) -> str | None:
    """The torch release a pasted report names without showing which build it is (no tag, no
    CUDA, no availability; neither the import nor the metadata known), so that a rule holding
    for every build of the release can judge it; None otherwise."""
    t = torch_facts(env)
    if t is None or torch_runtime(env) is not None or torch_static(env) is not None:
        return None
    return t.stated_version


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


def why_no_torch_cuda(env: Environment) -> str:
    """Why `torch_cuda` is None, in words: torch not probed, not in the report or not
    installed (`torch_missing`), a CUDA build whose version the report leaves out, a report
    that shows torch but neither its import nor its metadata (why, as its reader said), or a
    build without CUDA."""
    missing = torch_missing(env) or cuda_build_unstated(env)
    t = torch_facts(env)
    if missing is None and t is not None and torch_static(env) is None and isinstance(
            t.runtime, Unavailable):  # neither the import nor the metadata: a report cut short
        missing = t.runtime
    if missing is not None:
        return missing.message or "PyTorch is not there"
    return f"{torch_name(env)} is not a CUDA build"


def torch_version(env: Environment) -> str | None:
    """torch's version string, from the import or the package metadata; None when torch is
    not there, or a report does not state its version (`torch_name`)."""
    rt = torch_runtime(env)
    if rt is not None and isinstance(rt.version, str):
        return rt.version
    st = torch_static(env)
    return st.version if st else None


def torch_name(env: Environment) -> str:
    """"torch 2.5.1+cu124" for messages; "torch (version not in the report)" when a report
    shows torch without its version."""
    v = torch_version(env)
    return f"torch {v}" if v else "torch (version not in the report)"


def toolkit(env: Environment) -> ToolkitFacts | None:
    """The CUDA toolkit in use."""
    return env.toolkits.in_use if isinstance(env.toolkits, ToolkitsFacts) else None


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
    named = named_in_words(env)
    if named:
        signs.append(f"the report names {', '.join(named[:2])}")
    elif named is not None and isinstance(env.nvml, NvmlFacts):  # a driver named, no GPU
        drv = env.nvml.driver_version
        signs.append(f"the report names NVIDIA driver {drv}" if isinstance(drv, str)
                     else "the report says the NVIDIA driver's tools are installed")
    elif isinstance(env.nvml, NvmlFacts):
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
    if isinstance(host.dev_nodes, tuple) and host.dev_nodes:
        signs.append(f"{', '.join(n.path for n in host.dev_nodes[:3])} exist")
    return tuple(signs)


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
# Unavailable(NOT_REPORTED). What a published table can tell (a compute capability from the
# product name, a wheel's arch list) `gpudoctor.compat.machine` resolves; the rest stays
# Unavailable, and the checks reading it SKIP.


def is_reported(fact: object) -> bool:
    """Whether a fact is known, i.e. not Unavailable because a pasted report lacks it."""
    return not (isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED)


def pasted(env: Environment) -> bool:
    """Whether `env` was read from a pasted report (`Environment.sources` names its blocks),
    not probed on a machine: what the report does not show may still be there."""
    return bool(env.sources)


def driver_unknown(env: Environment) -> bool:
    """Whether the driver's state is not in the report (neither NVML's nor libcuda's view):
    checks must not read "no driver" into it."""
    return (named_in_words(env) is not None or not is_reported(env.nvml)) \
        and not driver_present(env)


def container_lost_devices(env: Environment) -> bool:
    """Whether NVML fails with its "Unknown Error" in a container: the container lost access
    to the device nodes it had (its cgroup device rules rewritten by a `systemctl
    daemon-reload` on the host), a fault of the container's wiring, not of the driver."""
    said = (container_nvml_error(env) or "").lower()
    return "unknown error" in said or "error_unknown" in said  # nvmlErrorString, or the enum


def container_nvml_error(env: Environment) -> str | None:
    """NVML's error in the container the environment is in: the probed (or only) view of the
    driver when that failed, else the container's error a report shows beside the host's
    working driver (`HostFacts.container_nvml_error`); None outside a container or when NVML
    answered there."""
    host, nvml = env.host, env.nvml
    if not isinstance(host, HostFacts) or not isinstance(host.container, str):
        return None
    if isinstance(nvml, Unavailable) and nvml.reason is not Reason.NOT_REPORTED:
        return f"{nvml.message} {nvml.detail or ''}".strip()
    return host.container_nvml_error


def elsewhere_nvml_mismatch(env: Environment) -> str | None:
    """NVML's "Driver/library version mismatch" a report shows from another environment of the
    machine than the one whose driver answers, outside a known container (a container the
    report does not name as one, a Nix flake's environment); None otherwise."""
    host = env.host
    if not isinstance(host, HostFacts) or isinstance(host.container, str) \
            or not isinstance(env.nvml, NvmlFacts):
        return None
    error = host.container_nvml_error
    return error if error and "version mismatch" in error.lower() else None


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


# --------------------------------------------------------------------------- which torch imports
# Shared by GD401 and GD406 and the advice (`compat.advice.shadowing_torch` says what to do):
# the child reports the directory of the torch that imports (`TorchStatic.location`,
# `TorchRuntime.file`), every installed torch distribution with the package directory it
# installed (`TorchStatic.distributions`; the child writes a directory that is the imported one
# under the same string) and its working directory (`TorchStatic.cwd`).


def same_dir(a: str, b: str) -> bool:
    """Whether two paths name the same directory (as strings, normalised)."""
    return posixpath.normpath(a) == posixpath.normpath(b)


def imported_dir(t: TorchFacts) -> str | None:
    """The directory of the torch that imports: torch.__file__'s, else the one found on
    sys.path before importing."""
    rt = t.runtime
    if isinstance(rt, TorchRuntime) and isinstance(rt.file, str) and rt.file:
        return posixpath.dirname(rt.file)
    if isinstance(t.static, TorchStatic) and t.static.location:
        return t.static.location
    return None


def installed_version(st: TorchStatic | None) -> str | None:
    """The version pip installed (the first distribution on sys.path), else the version the
    static facts give when it is one; never "unknown"."""
    if st is None:
        return None
    if st.distributions:
        return st.distributions[0][0]
    return st.version if version(st.version) else None
