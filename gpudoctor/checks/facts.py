"""Read-only views over an Environment that several checks share. Pure functions, no I/O."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from gpudoctor.compat_rows import decode_cuda_version
from gpudoctor.model import (
    CudaFacts,
    Environment,
    GpuFacts,
    LibcudaFacts,
    NvmlFacts,
    ToolkitFacts,
    TorchFacts,
    TorchRuntime,
    TorchStatic,
    Unavailable,
)

if TYPE_CHECKING:
    from gpudoctor.compat import Tables, TorchVariant


def version(text: str | None) -> Version | None:
    """Parse a version, None when it is not one."""
    if not text:
        return None
    try:
        return Version(text.split("+")[0])
    except InvalidVersion:
        return None


def major(text: str) -> int | None:
    """The major version number of "12.4" → 12."""
    v = version(text)
    return v.major if v else None


def driver_version(env: Environment) -> str | None:
    """The driver version, from NVML or else /proc/driver/nvidia/version."""
    if isinstance(env.nvml, NvmlFacts):
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


def gpus(env: Environment) -> tuple[GpuFacts, ...]:
    """The GPUs NVML could read."""
    if not isinstance(env.nvml, NvmlFacts):
        return ()
    return tuple(g for g in env.nvml.gpus if isinstance(g, GpuFacts))


def torch_facts(env: Environment) -> TorchFacts | None:
    """TorchFacts, None when torch was not found or not probed."""
    return env.torch if isinstance(env.torch, TorchFacts) else None


def torch_runtime(env: Environment) -> TorchRuntime | None:
    """What `import torch` reported, None when it failed or did not run."""
    t = torch_facts(env)
    return t.runtime if t and isinstance(t.runtime, TorchRuntime) else None


def torch_static(env: Environment) -> TorchStatic | None:
    """Package metadata of the installed torch."""
    t = torch_facts(env)
    return t.static if t and isinstance(t.static, TorchStatic) else None


def torch_cuda(env: Environment) -> str | None:
    """torch's CUDA version: from the import, else from torch/version.py; None for CPU builds."""
    rt = torch_runtime(env)
    if rt is not None:
        return rt.cuda
    st = torch_static(env)
    if st is not None:
        value = dict(st.version_py).get("cuda")
        return value if value and value != "None" else None
    return None


def torch_version(env: Environment) -> str | None:
    """torch's version string, from the import or the package metadata."""
    rt = torch_runtime(env)
    if rt is not None:
        return rt.version
    st = torch_static(env)
    return st.version if st else None


def toolkit(env: Environment) -> ToolkitFacts | None:
    """The CUDA toolkit in use."""
    return env.cuda.in_use if isinstance(env.cuda, CudaFacts) else None


def toolkit_version(env: Environment) -> str | None:
    """The in-use toolkit's version, None when there is none or it cannot be read."""
    tk = toolkit(env)
    return tk.version if tk and isinstance(tk.version, str) else None


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


def pip_install_line(variant: TorchVariant, torch_version: str | None = None) -> str:
    """The exact command that installs torch from a CUDA variant's index."""
    spec = f"torch=={torch_version}" if torch_version else "torch"
    return f"pip install --force-reinstall {spec} --index-url {variant.index_url}"


def best_variant(env: Environment, tables: Tables) -> TorchVariant | None:
    """Newest torch's CUDA variant that this driver (or, with no driver, the toolkit) runs.

    Non-experimental variants are preferred. With no driver, the toolkit's CUDA bounds it:
    the newest variant of the same major that is not newer than the toolkit.
    """
    drv = driver_version(env)
    if drv:
        candidates = list(tables.torch_variants_for_driver(drv))
    else:
        tv = version(toolkit_version(env))
        if tv is None:
            return None
        candidates = [
            v for v in tables.newest_torch().variants
            if (cv := version(v.cuda)) and cv.major == tv.major and cv <= tv
        ]
        candidates.sort(key=lambda v: version(v.cuda) or Version("0"), reverse=True)
    stable = [v for v in candidates if not getattr(v, "experimental", False)]
    return (stable or candidates)[0] if candidates else None


def reason_of(fact: object) -> str:
    """The message of an Unavailable, for SKIP findings."""
    return fact.message if isinstance(fact, Unavailable) else "not available"
