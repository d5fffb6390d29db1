"""Process exit codes (DESIGN.md, STYLE.md §6)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a gpudoctor process tells its caller."""

    OK = 0  # no FAIL (WARN allowed unless --strict)
    FAILURE = 1  # at least one FAIL, or the install / smoke action failed
    USAGE = 2  # bad command line (Click's default)
    INTERNAL = 3  # a gpudoctor bug
    INTERRUPTED = 130  # Ctrl-C
