"""CUDA toolkit checks (GD2xx)."""

from __future__ import annotations

import dataclasses
import shlex
from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import check, failed, noted, passed, skipped, warned
from gpudoctor.compat import machine
from gpudoctor.compat.rules import Ruling, arch_in_build
from gpudoctor.model import (
    Environment,
    Finding,
    GpuFacts,
    Layer,
    NamedRoot,
    NvmlFacts,
    Severity,
    ToolkitFacts,
    ToolkitsFacts,
    Unavailable,
)
from gpudoctor.reports.interface import NOT_EVERY_GPU
from gpudoctor.versions import sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import GpuArch, Tables

TOOLKIT_ARCHIVE_URL = "https://developer.nvidia.com/cuda-toolkit-archive"


@check("GD201", "toolkit-found", "CUDA toolkit found", Layer.CUDA, Severity.INFO,
       "CUDA toolkit discovery, CUDA_HOME, CUDA_PATH", reads={"toolkits"})
def check_toolkit_found(env: Environment, tables: Tables) -> Finding:
    """Lists every CUDA toolkit found and which one is in use (the first in search order:
    --cuda-home, CUDA_HOME, CUDA_PATH, nvcc on PATH, /usr/local/cuda, /usr/local/cuda-*,
    /opt/cuda). A toolkit is needed only to compile CUDA code (extensions, nvcc); pip and
    conda builds of PyTorch bring their own CUDA runtime.

    `torch.utils.cpp_extension` (and every CUDA extension built from source: apex,
    flash-attn, …) takes CUDA_HOME, else CUDA_PATH, as the toolkit even when it is none, then
    nvcc on PATH, then /usr/local/cuda. A CUDA_HOME / CUDA_PATH that is missing, a file, an
    empty directory, not a toolkit, or a toolkit without bin/nvcc and include/cuda_runtime.h
    (only version.json: a runtime-only install) is a warning that names it and what breaks."""
    if not isinstance(env.toolkits, ToolkitsFacts):
        return skipped(V.reason_of(env.toolkits) + "; a toolkit is only needed to build CUDA code")
    tk = env.toolkits.in_use
    evidence = tuple(
        (t.root, f"{t.version if isinstance(t.version, str) else 'version unknown'} "
         f"(found by {t.found_by}{', in use' if t.in_use else ''}"
         f"{', assembled from pip wheels' if t.pip_assembled else ''}"
         f"{', lacks ' + ', '.join(t.lacks) if t.lacks else ''})")
        for t in env.toolkits.toolkits
    ) + tuple((f"{n.named_by}={n.path}", NAMED_STATE.get(n.kind, n.kind))
              for n in env.toolkits.named)
    bad = [n for n in env.toolkits.named if n.kind != "toolkit" or n.lacks]
    if bad:
        return _bad_named(bad, env.toolkits.named, tk, evidence)
    if tk is None:
        return skipped("no CUDA toolkit found; a toolkit is only needed to build CUDA code",
                       evidence)
    v = tk.version if isinstance(tk.version, str) else "of unknown version"
    others = len(env.toolkits.toolkits) - 1
    more = f" (+{others} other{'s' if others != 1 else ''})" if others else ""
    if tk.lacks:
        return noted(
            f"CUDA {v} at {tk.root} (found by {tk.found_by}) has no {' and no '.join(tk.lacks)}:"
            " a runtime-only install, not a toolkit for building CUDA code",
            f"only if you build CUDA code (extensions, nvcc): install the full CUDA {v} "
            f"toolkit ({TOOLKIT_ARCHIVE_URL}) and point CUDA_HOME at it", evidence)
    return passed(f"CUDA {v} at {tk.root}, found by {tk.found_by}{more}", evidence)


_VARS = ("CUDA_HOME", "CUDA_PATH")  # a root named by one of these is fixed with `export`
NAMED_STATE = {
    "toolkit": "a CUDA toolkit",
    "missing": "does not exist",
    "file": "is a file, not a directory",
    "empty": "is an empty directory",
    "unreadable": "cannot be read",
    "not-a-toolkit": "is not a CUDA toolkit (no version.json, version.txt, include/cuda.h or "
                     "bin/nvcc in it)",
}


def _bad_named(bad: list[NamedRoot], named: tuple[NamedRoot, ...], tk: ToolkitFacts | None,
               evidence: tuple[tuple[str, str], ...]) -> Finding:
    problems = [
        f"{n.named_by}={n.path} " + (
            f"is not a toolkit for building: it has no {' and no '.join(n.lacks)}"
            if n.kind == "toolkit" else NAMED_STATE.get(n.kind, n.kind))
        for n in bad
    ]
    first = bad[0]
    torch_reads = next((n.named_by for n in named if n.named_by in ("CUDA_HOME", "CUDA_PATH")),
                       None)  # CUDA_HOME, else CUDA_PATH: torch.utils.cpp_extension's order
    if first.named_by == torch_reads:
        breaks = (f"builds of CUDA extensions (torch.utils.cpp_extension, and apex, "
                  f"flash-attn… from source) take {first.named_by} as the toolkit and fail "
                  "(no nvcc, no cuda_runtime.h)")
    elif first.named_by == "CUDA_PATH":
        breaks = ("torch.utils.cpp_extension reads CUDA_HOME instead, but other build tools "
                  "(CMake's FindCUDAToolkit) take CUDA_PATH and fail")
    else:
        breaks = "gpudoctor was told to check it first"
    good = tk if tk is not None and not tk.lacks and tk.root != first.path else None
    if good is not None:
        v = good.version if isinstance(good.version, str) else "?"
        breaks += f"; without it they would use CUDA {v} at {good.root} ({good.found_by})"
        fix = (f"export {first.named_by}={shlex.quote(good.root)}" if first.named_by in _VARS
               else f"pass --cuda-home {shlex.quote(good.root)}")
    else:
        unset = f"unset {first.named_by}" if first.named_by in _VARS else "drop --cuda-home"
        fix = (f"{unset}, or point it at an installed CUDA toolkit (the "
               f"directory with bin/nvcc; {TOOLKIT_ARCHIVE_URL})")
    finding = warned("; ".join(problems) + ": " + breaks, fix, evidence)
    return dataclasses.replace(finding, severity=Severity.WARNING)


@check("GD202", "toolkit-version-consistent", "toolkit's version files agree", Layer.CUDA,
       Severity.WARNING, "version.json, version.txt, cuda.h, nvcc, libcudart", reads={"toolkits"})
def check_toolkit_readings(env: Environment, tables: Tables) -> Finding:
    """The toolkit in use is read several ways (version.json, version.txt, cuda.h, nvcc,
    libcudart). Disagreeing readings mean two toolkits were installed over each other, or a
    PATH/CUDA_HOME mix: nvcc from one, headers or libraries from another. An unreadable or
    garbage version file is reported too.

    Fix: remove the toolkit installed over the other, or point CUDA_HOME and PATH at one prefix
    (`export CUDA_HOME=/usr/local/cuda-X.Y PATH=/usr/local/cuda-X.Y/bin:$PATH`).

    Sources: https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html
    """
    tk = V.toolkit(env)
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
       Layer.CUDA, Severity.INFO, "CUDA toolkit, torch.version.cuda", reads={"toolkits", "torch"})
def check_toolkit_vs_torch(env: Environment, tables: Tables) -> Finding:
    """PyTorch's pip and conda builds bring their own CUDA runtime, so the local toolkit's
    version does not matter for running PyTorch. It matters when building CUDA extensions
    (torch.utils.cpp_extension, apex, flash-attn…): those need a toolkit with the same CUDA
    major as torch.version.cuda. A mismatch is information, not an error.

    Fix: only if you build extensions: install a toolkit of torch's CUDA major and point CUDA_HOME
    at it.

    Sources: https://pytorch.org/docs/stable/cpp_extension.html
    """
    tv, tc = V.toolkit_version(env), V.torch_cuda(env)
    if not tv:
        return skipped("no CUDA toolkit found")
    if not tc:
        return skipped(V.why_no_torch_cuda(env))
    ev = (("toolkit", tv), ("torch CUDA", tc))
    if V.major(tv) == V.major(tc):
        return passed(f"toolkit CUDA {tv} and PyTorch's CUDA {tc} share major {V.major(tc)}", ev)
    return warned(
        f"toolkit CUDA {tv} ≠ PyTorch's CUDA {tc} (major {V.major(tv)} vs {V.major(tc)}): fine "
        "for running PyTorch, but building CUDA extensions against this torch will fail",
        f"only if you build extensions: install a CUDA {V.major(tc)}.x toolkit and point "
        "CUDA_HOME at it",
        ev,
    )


@check("GD204", "gpu-supported-by-toolkit", "the local toolkit can compile for every GPU",
       Layer.CUDA, Severity.WARNING, "CUDA toolkit, NVML compute capability, GPU table",
       reads={"toolkits", "nvml"})
def check_toolkit_vs_gpus(env: Environment, tables: Tables) -> Finding:
    """nvcc compiles only for the GPU architectures its release supports. CUDA 12.0 dropped
    Kepler sm_35/sm_37, and CUDA 13.0 removed offline compilation for Maxwell, Pascal and Volta
    (sm_50 to sm_72): what a newer toolkit builds has no kernel for such a GPU ("no kernel image
    is available for execution on the device"). A toolkit older than a GPU's architecture
    cannot emit its native code either; PTX for an older architecture still JIT-compiles on it.
    This matters only for building CUDA code (extensions, nvcc); PyTorch wheels bring their own
    kernels (see GD404), so a toolkit older than a GPU warns, and fails where a pasted build
    log shows its nvcc refusing that GPU's architecture ("nvcc fatal : Unsupported gpu
    architecture 'compute_86'"). The fix names the toolkit range that compiles for every GPU."""
    tv, root = V.toolkit_version(env), getattr(V.toolkit(env), "root", "?")
    if not tv or V.version(tv) is None:
        return skipped("no CUDA toolkit found (or its version is unreadable)")
    resolved = machine.resolved_gpus(env, tables)  # a report's GPU: its cc from the product name
    gpus = [g for g, _ in resolved]
    if not gpus:
        return skipped(V.reason_of(env.nvml) if not isinstance(env.nvml, NvmlFacts)
                       else "NVML lists no GPU")
    tk = _mm_key(tv)
    known: list[tuple[GpuFacts, GpuArch]] = []
    by_rule: list[tuple[GpuFacts, Ruling]] = []  # no row: the arch rule (compat.rules) decided
    evidence = [("toolkit", f"CUDA {tv} at {root}")]
    for g, source in resolved:
        if isinstance(g.compute_capability, Unavailable):
            evidence.append((f"GPU {g.index}", f"{g.name}: {source}"))
            continue
        arch = tables.gpu_arch(g.compute_capability)
        if source != "NVML":
            evidence.append((f"GPU {g.index} compute capability", source))
        if arch is None or arch.status == "unverified":
            ruling = arch_in_build(tables, tv, g.compute_capability)
            evidence.append((f"GPU {g.index}", f"{g.name}, {_sm(g)}: no verified row; "
                             f"{ruling.cited}"))
            if ruling.verdict == "cannot":  # only a retired architecture is certain
                by_rule.append((g, ruling))
            continue
        known.append((g, arch))
        span = f"CUDA {arch.first_cuda or '(older)'} to {arch.last_cuda or 'current'}"
        evidence.append((f"GPU {g.index}", f"{g.name}, {_sm(g)} ({arch.family}): toolkits {span}"))
    for g, ruling in by_rule:
        if ruling.verdict == "cannot":
            return failed(f"CUDA {tv} cannot compile for the {g.name} ({_sm(g)}), judged by the "
                          f"arch rule: {ruling.cited}", f"build CUDA code for it with an older "
                          f"toolkit ({TOOLKIT_ARCHIVE_URL})", tuple(evidence))
    if not known:
        sms = ", ".join(sorted({_sm(g) for g in gpus}))
        return skipped(f"the GPU table has no verified row for {sms}", tuple(evidence))
    dropped = [(g, a) for g, a in known if a.last_cuda and tk > _mm_key(a.last_cuda)]
    early = [(g, a) for g, a in known if a.first_cuda and tk < _mm_key(a.first_cuda)]
    refused = getattr(V.toolkit(env), "refused_archs", ())
    other = [cc for cc in refused if cc not in {g.compute_capability for g in gpus}]
    if not dropped and not early and other and isinstance(env.nvml, NvmlFacts) \
            and env.nvml.binding in NOT_EVERY_GPU:
        # a build log shows nvcc refusing an architecture that no GPU the words name has: the
        # words may not name every GPU (or the build asked for an architecture of no GPU here)
        return skipped(f"the report's nvcc refused {sm_of(other[0])}, which no GPU it names "
                       "has, and it may not name every GPU", tuple(evidence))
    if not dropped and not early:
        names = ", ".join(sorted({f"{_sm(g)} ({a.family})" for g, a in known}))
        rest = len(gpus) - len(known)
        which = f"{names} ({rest} other GPU{'s' if rest > 1 else ''} not in the table)" \
            if rest else f"every GPU: {names}"
        return passed(f"CUDA {tv} compiles for {which}", tuple(evidence))
    fix = _toolkit_fix([a for _, a in known])
    if dropped:
        g, a = dropped[0]
        others = f" (and {len(dropped) - 1} more GPU)" if len(dropped) > 1 else ""
        message = (f"CUDA {tv} cannot compile for the {g.name} ({_sm(g)}, {a.family}){others}: "
                   f"CUDA {a.last_cuda} was the last toolkit that does, so what it builds fails "
                   "there with 'no kernel image is available for execution on the device'")
        sure = all(arch.status in ("verified", "copy") for _, arch in dropped)
        return (failed if sure else warned)(message, fix, tuple(evidence))
    g, a = early[0]
    if g.compute_capability in refused:
        # a pasted build log: nvcc was asked for this GPU's architecture and refused it
        return failed(f"CUDA {tv} predates the {g.name} ({_sm(g)}, {a.family}, from CUDA "
                      f"{a.first_cuda}), and the report shows its nvcc refusing that "
                      f"architecture ('Unsupported gpu architecture'): the build for this GPU "
                      "fails", fix, (*evidence, ("nvcc refused", ", ".join(refused))))
    return warned(f"CUDA {tv} predates the {g.name} ({_sm(g)}, {a.family}, from CUDA "
                  f"{a.first_cuda}): it can build only PTX of an older architecture for it, "
                  "which the driver JIT-compiles", fix, tuple(evidence))


def _sm(g: GpuFacts) -> str:
    cc = g.compute_capability
    return sm_of(cc) if isinstance(cc, str) else "sm_?"


def _mm_key(v: str) -> tuple[int, int]:
    parsed = V.version(v)
    assert parsed is not None
    return parsed.major, parsed.minor


def _toolkit_fix(archs: list[GpuArch]) -> str:
    firsts = [a.first_cuda for a in archs if a.first_cuda]
    lasts = [a.last_cuda for a in archs if a.last_cuda]
    low = max(firsts, key=_mm_key) if firsts else None
    high = min(lasts, key=_mm_key) if lasts else None
    if low and high and _mm_key(low) > _mm_key(high):
        return (f"no single CUDA toolkit compiles for every GPU here (one needs CUDA ≤ {high}, "
                f"another ≥ {low}): build for each GPU with its own toolkit "
                f"({TOOLKIT_ARCHIVE_URL}), or leave the other out with CUDA_VISIBLE_DEVICES")
    if high:
        return (f"to build CUDA code for this GPU, install CUDA Toolkit {high} (the last that "
                f"compiles for it; {TOOLKIT_ARCHIVE_URL}) and point CUDA_HOME at it: "
                f"export CUDA_HOME=/usr/local/cuda-{high}")
    return (f"install CUDA Toolkit {low} or newer ({TOOLKIT_ARCHIVE_URL}) and point CUDA_HOME "
            f"at it: export CUDA_HOME=/usr/local/cuda-{low}")


CHECKS = (check_toolkit_found, check_toolkit_readings, check_toolkit_vs_torch,
          check_toolkit_vs_gpus)
