"""CUDA toolkit checks (GD2xx)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.checks import facts as F
from gpudoctor.checks.base import check, passed, skipped, warned
from gpudoctor.model import CudaFacts, Environment, Finding, Layer, Severity, Unavailable

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


@check("GD201", "toolkit-found", "CUDA toolkit found", Layer.CUDA, Severity.INFO,
       "CUDA toolkit discovery")
def check_toolkit_found(env: Environment, tables: Tables) -> Finding:
    """Lists every CUDA toolkit found and which one is in use (the first in search order:
    --cuda-home, CUDA_HOME, CUDA_PATH, nvcc on PATH, /usr/local/cuda, /usr/local/cuda-*,
    /opt/cuda). A toolkit is needed only to compile CUDA code (extensions, nvcc); pip and
    conda builds of PyTorch bring their own CUDA runtime."""
    if not isinstance(env.cuda, CudaFacts):
        return skipped(F.reason_of(env.cuda) + "; a toolkit is only needed to build CUDA code")
    tk = env.cuda.in_use
    assert tk is not None
    evidence = tuple(
        (t.root, f"{t.version if isinstance(t.version, str) else 'version unknown'} "
         f"(found by {t.found_by}{', in use' if t.in_use else ''}"
         f"{', assembled from pip wheels' if t.pip_assembled else ''})")
        for t in env.cuda.toolkits
    )
    v = tk.version if isinstance(tk.version, str) else "of unknown version"
    others = len(env.cuda.toolkits) - 1
    more = f" (+{others} other{'s' if others != 1 else ''})" if others else ""
    return passed(f"CUDA {v} at {tk.root}, found by {tk.found_by}{more}", evidence)


@check("GD202", "toolkit-version-consistent", "toolkit's version files agree", Layer.CUDA,
       Severity.WARNING, "version.json, version.txt, cuda.h, nvcc, libcudart")
def check_toolkit_readings(env: Environment, tables: Tables) -> Finding:
    """The toolkit in use is read several ways (version.json, version.txt, cuda.h, nvcc,
    libcudart). Disagreeing readings mean two toolkits were installed over each other, or a
    PATH/CUDA_HOME mix: nvcc from one, headers or libraries from another. An unreadable or
    garbage version file is reported too."""
    tk = F.toolkit(env)
    if tk is None:
        return skipped("no CUDA toolkit found")
    evidence = tuple(
        (f"{r.method} ({r.path})", r.value if isinstance(r.value, str) else f"✗ {r.value.message}")
        for r in tk.readings
    )
    broken = [r for r in tk.readings if isinstance(r.value, Unavailable)]
    values = {r.method: r.value for r in tk.readings if isinstance(r.value, str)}
    minors = {m: _mm(v) for m, v in values.items()}
    if len(set(minors.values())) > 1:
        listing = ", ".join(f"{m} says {v}" for m, v in values.items())
        return warned(
            f"the toolkit at {tk.root} is inconsistent: {listing}",
            f"reinstall one CUDA toolkit cleanly into {tk.root}, and make PATH and CUDA_HOME "
            "point at the same one",
            evidence,
        )
    if broken:
        return warned(
            "; ".join(r.value.message for r in broken if isinstance(r.value, Unavailable)),
            f"reinstall the CUDA toolkit at {tk.root} (a version file is damaged)",
            evidence,
        )
    v = next(iter(values.values()), "?")
    return passed(f"{len(values)} readings agree on CUDA {_mm(v)}", evidence)


def _mm(v: str) -> str:
    return ".".join(v.split(".")[:2])


@check("GD203", "toolkit-matches-torch-cuda", "toolkit's CUDA major matches PyTorch's",
       Layer.CUDA, Severity.INFO, "CUDA toolkit, torch.version.cuda")
def check_toolkit_vs_torch(env: Environment, tables: Tables) -> Finding:
    """PyTorch's pip and conda builds bring their own CUDA runtime, so the local toolkit's
    version does not matter for running PyTorch. It matters when building CUDA extensions
    (torch.utils.cpp_extension, apex, flash-attn…): those need a toolkit with the same CUDA
    major as torch.version.cuda. A mismatch is information, not an error."""
    tv, tc = F.toolkit_version(env), F.torch_cuda(env)
    if not tv:
        return skipped("no CUDA toolkit found")
    if not tc:
        return skipped("PyTorch is not a CUDA build (or not installed)")
    ev = (("toolkit", tv), ("torch CUDA", tc))
    if F.major(tv) == F.major(tc):
        return passed(f"toolkit CUDA {tv} and PyTorch's CUDA {tc} share major {F.major(tc)}", ev)
    return warned(
        f"toolkit CUDA {tv} ≠ PyTorch's CUDA {tc} (major {F.major(tv)} vs {F.major(tc)}): fine "
        "for running PyTorch, but building CUDA extensions against this torch will fail",
        f"only if you build extensions: install a CUDA {F.major(tc)}.x toolkit and point "
        "CUDA_HOME at it",
        ev,
    )


CHECKS = (check_toolkit_found, check_toolkit_readings, check_toolkit_vs_torch)
