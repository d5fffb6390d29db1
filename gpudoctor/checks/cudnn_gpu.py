"""cuDNN against the GPUs (GD311): does the cuDNN in use support every GPU here.

NVIDIA's cuDNN support matrix gives each release, and where it differs each CUDA build, a
range of compute capabilities (`compat_tables/gpu.toml` `[[cudnn_support]]`): cuDNN 7.6 stops
at Turing (sm_75), 8.9.7 and the CUDA 12.0-12.6 builds of 9.x at Hopper (sm_90), 9.11+ drops
Maxwell and Pascal. A GPU outside the range is not supported by that release or build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.checks import facts as F
from gpudoctor.checks.base import check, failed, passed, skipped, warned
from gpudoctor.model import Check, CudnnFacts, Environment, Finding, Layer, Severity, Unavailable
from gpudoctor.versions import format_cudnn_version, sm_of

if TYPE_CHECKING:
    from gpudoctor.compat import CudnnSupport, Tables

RECOMMEND = "`gpudoctor recommend` names a torch wheel and a cuDNN tarball that fit this machine"


def _in_use(env: Environment) -> tuple[list[tuple[str, str, str | None]], str]:
    """The cuDNN copies to judge, as (what, version, CUDA it runs with): the one torch runs
    when a CUDA torch imported, else every copy found on the system; and why there is none."""
    rt = F.torch_runtime(env)
    if rt is not None and isinstance(rt.cuda, str) and isinstance(rt.cudnn_version, int) \
            and rt.cudnn_version > 0:
        return [("torch's cuDNN", format_cudnn_version(rt.cudnn_version), rt.cuda)], ""
    if not isinstance(env.cudnn, CudnnFacts) or not env.cudnn.installs:
        return [], F.reason_of(env.cudnn) if isinstance(env.cudnn, Unavailable) else \
            "no cuDNN found"
    toolkit = F.toolkit_version(env)
    out = []
    for i in env.cudnn.installs:
        version = next((v for v in (i.library_version, i.header_version) if isinstance(v, str)),
                       None)
        if version:
            cuda = toolkit if i.in_use or not isinstance(i.cuda_build, str) else i.cuda_build
            out.append((f"cuDNN in {i.lib_dir}", version, cuda))
    return out, "no cuDNN copy's version could be read"


def _range(support: CudnnSupport, cuda: str | None) -> str:
    build = f"its CUDA {support.cuda} builds" if support.cuda else "the release"
    return (f"{support.range_text()} for {build}"
            + (f" (runs with CUDA {cuda})" if cuda else "") + f", {support.status}")


@check("GD311", "cudnn-supports-gpu", "the cuDNN in use supports every GPU", Layer.CUDNN,
       Severity.ERROR, "torch's or the system's cuDNN, the GPUs, the cuDNN support table",
       facts={"cudnn", "torch", "nvml", "cuda"})
def check_cudnn_supports_gpu(env: Environment, tables: Tables) -> Finding:
    """Each cuDNN release (and, where NVIDIA's support matrix differs by build, each of its
    CUDA builds) supports a range of compute capabilities: cuDNN 8.9.7 stops at sm_90, so an
    RTX 5090 (sm_120) is not supported by it; the CUDA 12.0-12.6 builds of 9.7-9.10 neither.
    The cuDNN judged is the one torch runs (torch.backends.cudnn.version(), with torch's CUDA
    picking the build's row) when a CUDA torch imported, else every copy on the system. FAIL
    for torch's cuDNN, WARN for a system copy (what a build against the toolkit would use).

    Fix: install a torch wheel whose cuDNN supports the GPU (`gpudoctor recommend` names
    one); for a system copy, a cuDNN release that does (`gpudoctor compat gpu sm_XY` lists
    them; `gpudoctor install-cudnn` installs it).

    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html,
    https://docs.nvidia.com/deeplearning/cudnn/archives/index.html
    """
    gpus = [g for g in F.seen_gpus(env, tables) if isinstance(g.cc, str)]
    if not gpus:
        return skipped("no GPU with a known compute capability was seen")
    copies, why = _in_use(env)
    if not copies:
        return skipped(why)
    evidence = [(f"GPU {g.index}", f"{g.name}, {sm_of(str(g.cc))} ({g.source})") for g in gpus]
    unknown, judged = [], []
    for what, version, cuda in copies:
        support = tables.cudnn_gpu_support(version, cuda)
        if support is None or support.status == "unverified":
            unknown.append(f"{what} {version}")
            continue
        evidence.append((f"{what} {version}", _range(support, cuda)))
        outside = [g for g in gpus if not support.supports(str(g.cc))]
        judged.append((what, version, support, outside))
    for what, version, support, outside in judged:
        if not outside:
            continue
        names = ", ".join(f"{g.name} ({sm_of(str(g.cc))})" for g in outside)
        sm = sm_of(str(outside[0].cc))
        message = (f"{what} {version} supports {support.range_text()}; {names} is outside it "
                   f"(NVIDIA's cuDNN support matrix)")
        if what == "torch's cuDNN":
            return failed(message, f"install a torch wheel whose cuDNN supports {sm}: {RECOMMEND}",
                          tuple(evidence))
        return warned(message, f"install a cuDNN release that supports {sm} (`gpudoctor compat "
                      f"gpu {sm}` lists them) with `gpudoctor install-cudnn`", tuple(evidence))
    if not judged:
        return skipped(f"the tables do not record which GPUs {', '.join(unknown)} supports")
    ok = ", ".join(f"{what} {version}" for what, version, _, _ in judged)
    left = f" ({', '.join(unknown)}: support not in the tables)" if unknown else ""
    return passed(f"{ok} supports every GPU here{left}", tuple(evidence))


CHECKS: tuple[Check, ...] = (check_cudnn_supports_gpu,)
