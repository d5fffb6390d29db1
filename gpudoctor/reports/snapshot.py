"""A gpudoctor snapshot, or a `check --format json` report (which embeds one), read exactly as
`gpudoctor.snapshot.loads` reads it."""

from __future__ import annotations

from gpudoctor.model import Environment
from gpudoctor.reports.interface import ReportError
from gpudoctor.snapshot import SnapshotError, loads


def looks_like(text: str) -> bool:
    """Whether the text is a JSON object that names an environment."""
    return text.lstrip().startswith("{") and '"environment"' in text


def read(text: str, name: str) -> Environment:
    """The snapshot's Environment, exactly as recorded (a snapshot of a pasted report keeps the
    `sources` it was read from; one of a machine has none)."""
    try:
        return loads(text)
    except SnapshotError as e:
        raise ReportError(f"{name} is not a usable gpudoctor snapshot: {e}") from None
