"""Progress bars on stderr for the long actions (`install-cudnn`, `smoke-test`): transient,
shown only on a terminal, fed by the callbacks the actions take."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

from gpudoctor.renderers.interface import clean

if TYPE_CHECKING:
    from gpudoctor.actions.smoke import SmokeProgress


@contextmanager
def byte_progress(console: Console, name: str, total: int,
                  enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """'reading NAME [bar] 12.0/800.0 MB 0:00:05'; None when not shown."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("reading {task.description}", markup=False), BarColumn(),
                  DownloadColumn(), TimeRemainingColumn(), console=console,
                  transient=True) as bar:
        task = bar.add_task(clean(name), total=total)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def step_progress(console: Console,
                  enabled: bool) -> Iterator[Callable[[SmokeProgress], None] | None]:
    """'lenet cudnn [bar] 12/20 0:00:03' for the smoke test's steps; None when not shown."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def update(p: SmokeProgress) -> None:
            bar.update(task, description=clean(p.label), completed=p.done, total=p.total or None)

        yield update
