"""`collect()`: run the probes concurrently and freeze their facts into an Environment.

This module is the boundary: a probe that raises despite its own care becomes
`Unavailable(Reason.ERROR)` with the exception in `detail`. It holds the only
`except Exception` outside `cli/`.

Each probe runs in a daemon thread and bounds its own waiting (child processes through
`gpudoctor.childproc` with a deadline, NVML with `Deps.nvml_timeout`); the waits here can be
interrupted (Ctrl-C), and a thread stuck in a driver call never keeps the process alive.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from gpudoctor import __version__, childproc
from gpudoctor.model import Environment, Reason, Unavailable
from gpudoctor.probes.cudnn import probe_cudnn
from gpudoctor.probes.host import probe_host
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.libcuda import probe_libcuda
from gpudoctor.probes.nvml import probe_nvml
from gpudoctor.probes.toolkit import probe_toolkits

if TYPE_CHECKING:
    from gpudoctor.model import TorchFacts

logger = logging.getLogger(__name__)


def probe_torch(deps: Deps) -> TorchFacts | Unavailable:
    """`gpudoctor.probes.pytorch.probe_torch`, imported when it runs."""
    # lazy: `check host` never runs the torch probe, and `--no-torch` returns at its first
    # line; imported here, in the probe's own thread, the module overlaps the other probes'
    # waits on their children instead of adding to the imports before any probe starts
    from gpudoctor.probes.pytorch import probe_torch as probe

    return probe(deps)

# Environment field → probe. The torch child is the slowest: it is started first.
PROBES: tuple[tuple[str, Callable[[Deps], Any]], ...] = (
    ("torch", probe_torch),
    ("toolkits", probe_toolkits),
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


NOT_GATHERED = Unavailable(Reason.SKIPPED, "not gathered: no selected check reads it")


def collect(deps: Deps | None = None, fields: Iterable[str] | None = None) -> Environment:
    """Run the probes concurrently and freeze the facts into an Environment.

    `fields`: the Environment fields wanted (`Check.reads` of the selected checks); a probe
    whose field is not among them does not run and its fact is `NOT_GATHERED`. Default: all.
    """
    deps = deps or Deps()
    wanted = None if fields is None else frozenset(fields)
    facts: dict[str, Any] = {}
    threads = []
    for name, fn in PROBES:
        if wanted is not None and name not in wanted:
            facts[name] = NOT_GATHERED
            continue

        def run(name: str = name, fn: Callable[[Deps], Any] = fn) -> None:
            facts[name] = guarded(name, fn, deps)

        thread = threading.Thread(target=run, name=f"gpudoctor-probe-{name}", daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        while thread.is_alive():  # a Ctrl-C the handler could not raise is raised here
            thread.join(0.2)
            childproc.raise_if_interrupted()
    return Environment(
        gpudoctor_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **facts,
    )
