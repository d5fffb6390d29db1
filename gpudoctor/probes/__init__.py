"""Probes gather facts and never judge. `collect()` runs them all, concurrently.

This module is the boundary: a probe that raises despite its own care becomes
`Unavailable(Reason.ERROR)` with the exception in `detail`. It holds the only
`except Exception` outside `cli/`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

from gpudoctor import __version__
from gpudoctor.model import Environment, Reason, Unavailable
from gpudoctor.probes.cuda import probe_cuda, probe_libcuda
from gpudoctor.probes.cudnn import probe_cudnn
from gpudoctor.probes.host import probe_host
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.nvml import probe_nvml
from gpudoctor.probes.pytorch import probe_torch

logger = logging.getLogger(__name__)

# Environment field → probe. The torch child is the slowest: it is started first.
PROBES: tuple[tuple[str, Callable[[Deps], Any]], ...] = (
    ("torch", probe_torch),
    ("cuda", probe_cuda),
    ("cudnn", probe_cudnn),
    ("libcuda", probe_libcuda),
    ("nvml", probe_nvml),
    ("host", probe_host),
)


def guarded(name: str, probe: Callable[[Deps], Any], deps: Deps) -> Any:
    """Run one probe; an exception that escapes it becomes a fact."""
    try:
        return probe(deps)
    except Exception as e:  # the probe boundary (STYLE.md §3.3)
        logger.debug("probe %s raised", name, exc_info=True)
        return Unavailable(
            Reason.ERROR,
            f"the {name} probe failed unexpectedly (a gpudoctor bug; please report it)",
            detail=f"{type(e).__name__}: {e}",
        )


def collect(deps: Deps | None = None) -> Environment:
    """Run every probe concurrently and freeze the facts into an Environment."""
    deps = deps or Deps()
    with ThreadPoolExecutor(max_workers=len(PROBES)) as pool:
        futures = {name: pool.submit(guarded, name, fn, deps) for name, fn in PROBES}
        facts = {name: f.result() for name, f in futures.items()}
    return Environment(
        gpudoctor_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **facts,
    )
