"""Process exit codes (DESIGN.md, STYLE.md §6)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a gpudoctor process tells its caller."""

    OK = 0  # no FAIL (WARN allowed unless --strict)
    FAILURE = 1  # at least one FAIL, or the install / smoke action failed
    # bad command line (Click's default), an unusable input (unreadable, oversized, impossible
    # values), or an output that could not be written whole (closed stdout, full disk, a reader
    # that closed the pipe): never 0 for an undelivered report, never 1 (the machine's verdict)
    USAGE = 2
    INTERNAL = 3  # a gpudoctor bug
    INTERRUPTED = 130  # Ctrl-C
