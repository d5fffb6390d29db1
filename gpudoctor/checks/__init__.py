"""The registry of checks, and the runner that turns an Environment into a Report.

IDs are `GD` + 3 digits; the hundreds digit is the area: 1xx driver/NVML, 2xx CUDA toolkit and
runtime, 3xx cuDNN, 4xx PyTorch, 5xx host, 6xx
requirements (`check --require`). An ID is never renumbered or reused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpudoctor.checks import (
    container,
    cudnn,
    cudnn_builds,
    cudnn_gpu,
    driver,
    freshness,
    gpu_state,
    health,
    host,
    pytorch,
    requirements,
    smoke,
    toolkit,
)
from gpudoctor.checks.base import Check
from gpudoctor.model import Environment, Layer, Report, Result

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

REGISTRY: tuple[Check, ...] = (
    *driver.CHECKS,
    *health.CHECKS,
    *gpu_state.CHECKS,
    *toolkit.CHECKS,
    *cudnn.CHECKS,
    *cudnn_builds.CHECKS,
    *cudnn_gpu.CHECKS,
    *pytorch.CHECKS,
    *freshness.CHECKS,
    *smoke.CHECKS,
    *smoke.DISTRIBUTED_CHECKS,
    *host.CHECKS,
    *container.CHECKS,
    *requirements.CHECKS,
)


def select(
    checks: Iterable[Check], only: Iterable[str] = (), skip: Iterable[str] = ()
) -> tuple[tuple[Check, ...], tuple[str, ...]]:
    """Filter by id, slug or layer (`cudnn`, or the report's heading: `Driver & GPUs`), case
    aside; return the checks kept and the selectors that matched nothing (a usage error)."""
    checks = tuple(checks)
    only, skip = tuple(only), tuple(skip)

    def matches(c: Check, sel: str) -> bool:
        return selector_matches(sel, c.id, c.slug, c.layer)

    unknown = tuple(s for s in (*only, *skip) if not any(matches(c, s) for c in checks))
    kept = tuple(
        c
        for c in checks
        if (not only or any(matches(c, s) for s in only))
        and not any(matches(c, s) for s in skip)
    )
    return kept, unknown


def selector_matches(selector: str, check_id: str, slug: str, layer: Layer | None) -> bool:
    """Whether a selector names this check: its id, its slug, or its layer's name or heading
    (`driver`, `Driver & GPUs`, `host`, `Environment`), in any case and spacing."""
    s = " ".join(selector.split()).lower()
    names = {check_id.lower(), slug.lower()}
    if layer is not None:
        names |= {layer.value, layer.heading.lower()}
    return s in names


def run_checks(env: Environment, tables: Tables, checks: Iterable[Check] = REGISTRY) -> Report:
    """Run each check; their findings in registry order make the Report."""
    results = []
    for c in checks:
        finding = dataclasses.replace(c.run(env, tables), check_id=c.id)
        severity = c.severity if finding.severity is None else finding.severity
        results.append(Result(c.id, c.slug, c.title, c.layer, severity, finding))
    return Report(environment=env, results=tuple(results))
