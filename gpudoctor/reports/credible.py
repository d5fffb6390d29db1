"""What a pasted report or a snapshot states that no machine can: set aside, or refused.

`credible_driver_cuda` sets aside a driver's "CUDA Version" that no driver of that version can
report; `gpudoctor.reports.read.read_inputs` refuses a report whose facts break the rules a
snapshot is held to. Both are reading knowledge: every command that reads a report gets them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gpudoctor.model import Environment, NvmlFacts, Reason, Unavailable
from gpudoctor.versions import decode_cuda_version, encode_cuda_version, parse_version

if TYPE_CHECKING:
    from gpudoctor.compat import Tables


def credible_driver_cuda(env: Environment, tables: Tables) -> Environment:
    """`env` (read from a pasted report or a snapshot) with its driver's "CUDA Version" set
    aside when no driver of that version can report it.

    A driver reports the CUDA of its own branch (cuDriverGetVersion; nvidia-smi's banner, `-q`
    and `-q -x` print it). So a driver older than the first driver of a CUDA release (the
    compat table's driver branches) cannot report that CUDA or any later one, and no driver
    reports a CUDA more than one major past the newest the tables know. "CUDA Version: 99.9"
    under driver 535 is neither: the value is not believed but replaced by
    `Unavailable(ERROR)` saying why (the report's header shows it), and the checks derive the
    CUDA the driver runs from its version, as for a report that does not state it.
    """
    nvml = env.nvml
    if not isinstance(nvml, NvmlFacts) or not isinstance(nvml.cuda_driver_version, int):
        return env
    driver = nvml.driver_version if isinstance(nvml.driver_version, str) else "(unknown)"
    why = _incredible(driver, nvml.cuda_driver_version, tables)
    if why is None:
        return env
    return replace(env, nvml=replace(nvml, cuda_driver_version=Unavailable(Reason.ERROR, why)))


def _incredible(driver: str, cuda: int, tables: Tables) -> str | None:
    shown = decode_cuda_version(cuda) if 0 < cuda < 10**7 else str(cuda)
    said = f"the report's CUDA Version {shown} for driver {driver} is set aside"
    branches = [b for b in tables.driver_branches if encode_cuda_version(b.cuda)]
    newest = max((encode_cuda_version(b.cuda) or 0 for b in branches), default=0)
    if not 1000 <= cuda < (newest // 1000 + 2) * 1000:
        return f"{said}: no driver reports a CUDA version like it"
    version = parse_version(driver)
    later = [(encode_cuda_version(b.cuda) or 0, b) for b in branches if b.min_driver
             and version is not None and (first := parse_version(b.min_driver)) is not None
             and first > version]
    if later:
        limit, branch = min(later, key=lambda x: x[0])
        if cuda >= limit:
            return (f"{said}: a driver older than {branch.min_driver} cannot report CUDA "
                    f"{branch.cuda} or later")
    return None
