"""The line protocol of the smoke test's children (`_smoke_child.py`, `_distributed_child.py`).

A child prints `GPUDOCTOR:{"kind": ..., "data": ...}` lines among whatever torch prints; the
parent keeps the last message of each kind and the label of the last progress message (to say
where a child that timed out was). Both runners use this one reader.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

logger = logging.getLogger(__name__)

PREFIX = "GPUDOCTOR:"


def child_environ(environ: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: ours (or `environ`), unbuffered, without PYTHONSTARTUP."""
    env = dict(os.environ if environ is None else environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


class ChildMessages:
    """Collects a child's protocol lines: pass the instance as childproc's `on_line`."""

    def __init__(self, on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.messages: dict[str, Any] = {}
        self.last = "starting"  # the label of the last progress message
        self._on_progress = on_progress

    def __call__(self, line: str) -> None:
        """Read one line of the child's stdout; other lines are not ours and are skipped."""
        if not line.startswith(PREFIX):
            return
        try:
            msg = json.loads(line[len(PREFIX):])
            kind, data = msg["kind"], msg["data"]
        except (ValueError, KeyError, TypeError):
            logger.debug("unparsable child line: %r", line)
            return
        self.messages[kind] = data
        if kind == "progress" and isinstance(data, dict):
            self.last = str(data.get("label"))
            if self._on_progress is not None:
                self._on_progress(data)
