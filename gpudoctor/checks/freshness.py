"""Versions newer than the compat tables (GD407): a note, never a warning or a failure.

In the PyTorch layer: the stack as torch runs it (torch, its CUDA and cuDNN, the driver under
it) is what the tables' rows are for; a toolkit and the system's cuDNN copies are read too.
Not a host check: `check host` must not need torch's probe."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor import views as V
from gpudoctor.checks.base import Check, check, noted, passed, skipped
from gpudoctor.compat.freshness import Beyond, beyond_tables, note
from gpudoctor.model import CudnnFacts, Environment, Finding, Layer, Severity
from gpudoctor.versions import format_cudnn_version

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


def _versions(env: Environment) -> list[tuple[str, str, str]]:
    """(kind, version, whose) of everything here the tables have rows for: torch, the CUDA of
    torch and of the toolkit, the cuDNN torch runs and every copy found, the driver."""
    out = []
    if tv := V.torch_version(env):
        out.append(("torch", tv, "torch"))
    if tc := V.torch_cuda(env):
        out.append(("cuda", tc, "torch's CUDA"))
    if kit := V.toolkit_version(env):
        out.append(("cuda", kit, "the CUDA toolkit"))
    rt = V.torch_runtime(env)
    if rt is not None and isinstance(rt.cudnn_version, int) and rt.cudnn_version > 0:
        out.append(("cudnn", format_cudnn_version(rt.cudnn_version), "torch's cuDNN"))
    if isinstance(env.cudnn, CudnnFacts):
        for i in env.cudnn.installs:
            v = next((v for v in (i.library_version, i.header_version) if isinstance(v, str)),
                     None)
            if v:
                out.append(("cudnn", v, f"cuDNN in {i.lib_dir}"))
    if drv := V.driver_version(env):
        out.append(("driver", drv, "the driver"))
    return out


@check("GD407", "versions-in-compat-tables", "the compat tables know every version here",
       Layer.PYTORCH, Severity.INFO, "torch, CUDA, cuDNN and driver versions, the tables' dates",
       reads={"torch", "toolkits", "cudnn", "nvml", "libcuda"})
def check_versions_in_tables(env: Environment, tables: Tables) -> Finding:
    """gpudoctor's compat tables hold every release up to their `known_until` date (shown by
    `gpudoctor --version` and in JSON output). A torch, CUDA (torch's or the toolkit's),
    cuDNN (torch's or a copy on the system) or driver branch newer than every release of its
    kind in them may be one they have not caught up with: the other checks then judge it by
    the family rules (`gpudoctor.compat.rules`) where they need its row, and say so. This
    check says which versions those are (`gpudoctor.compat.freshness`): a note, not a warning,
    so `--strict` still passes.

    Fix: nothing to do on the machine; a newer gpudoctor may hold those releases' own rows.
    """
    found = _versions(env)
    if not found:
        return skipped("no torch, CUDA, cuDNN or driver version is known here")
    beyond: list[Beyond] = []
    for kind, version, _ in found:
        for b in beyond_tables(tables, **{kind: version}):
            if b not in beyond:
                beyond.append(b)
    evidence = tuple((whose, version) for _, version, whose in found)
    until = tables.known_until.isoformat() if tables.known_until else "an unknown date"
    said = note(tables, tuple(beyond))
    if said is None:
        return passed(f"every version here is within the compat tables (known until {until})",
                      evidence)
    return noted(said, "nothing to do on this machine (`gpudoctor --version` shows the date of "
                 "its compat tables)", evidence)


CHECKS: tuple[Check, ...] = (check_versions_in_tables,)
