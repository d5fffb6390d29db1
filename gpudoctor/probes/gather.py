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


class Gathering:
    """The probes of `names` running, each in a daemon thread (`start`); `environment()`
    waits for them and freezes their facts, with `NOT_GATHERED` for every other probe."""

    def __init__(self, deps: Deps, names: frozenset[str]) -> None:
        self.deps, self.names = deps, names
        self._facts: dict[str, Any] = {}
        self._threads: list[threading.Thread] = []
        for name, fn in PROBES:
            if name not in names:
                self._facts[name] = NOT_GATHERED
                continue

            def run(name: str = name, fn: Callable[[Deps], Any] = fn) -> None:
                self._facts[name] = guarded(name, fn, deps)

            thread = threading.Thread(target=run, name=f"gpudoctor-probe-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def environment(self) -> Environment:
        """Wait for every probe (a Ctrl-C is raised here), then the Environment."""
        for thread in self._threads:
            while thread.is_alive():  # a Ctrl-C the handler could not raise is raised here
                thread.join(0.2)
                childproc.raise_if_interrupted()
        return Environment(
            gpudoctor_version=__version__,
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **self._facts,
        )


def probed(fields: Iterable[str] | None) -> frozenset[str]:
    """The probes that fill `fields` (Environment fields; None: every probe's)."""
    names = frozenset(name for name, _ in PROBES)
    return names if fields is None else names & frozenset(fields)


# Gatherings started ahead of the command (`start_early`), for `collect` to take.
_EARLY: list[Gathering] = []


def start_early(deps: Deps, fields: Iterable[str] | None = None) -> None:
    """Start the probes now, before the command line is parsed (the entry point does, so that
    they overlap the ~0.15 s of importing typer, the checks and the renderers). `collect` takes
    them when it is asked for exactly these `deps` and the same probes; else they are left to
    end on their own (their children are killed at exit) and `collect` starts its own."""
    _EARLY.append(Gathering(deps, probed(fields)))


def start(deps: Deps | None = None, fields: Iterable[str] | None = None) -> Gathering:
    """The probes of `fields` (default: every probe) running: those started early with equal
    `deps` (`start_early`), else new ones."""
    deps = deps or Deps()
    names = probed(fields)
    for i, early in enumerate(_EARLY):
        if early.names == names and early.deps == deps:
            return _EARLY.pop(i)
    return Gathering(deps, names)


def collect(deps: Deps | None = None, fields: Iterable[str] | None = None) -> Environment:
    """Run the probes concurrently and freeze the facts into an Environment.

    `fields`: the Environment fields wanted (`Check.reads` of the selected checks); a probe
    whose field is not among them does not run and its fact is `NOT_GATHERED`. Default: all.
    """
    return start(deps, fields).environment()
