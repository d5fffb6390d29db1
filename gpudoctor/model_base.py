"""The leaf of the model: why a fact is missing (`Reason`, `Unavailable`), stdlib only.

`gpudoctor.model` re-exports every name here; the model's other leaves (`model_health`) import
them from this module so that none of them imports `gpudoctor.model` (which imports them).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class StrEnum(str, Enum):
    """`enum.StrEnum` for Python 3.10."""

    def __str__(self) -> str:
        return str(self.value)


class Reason(StrEnum):
    """Why a fact is unavailable."""

    NOT_INSTALLED = "not-installed"
    DRIVER_NOT_LOADED = "driver-not-loaded"
    VERSION_MISMATCH = "version-mismatch"
    PERMISSION_DENIED = "permission-denied"
    NOT_SUPPORTED = "not-supported"
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # a child process died from a signal (abort, segfault)
    SKIPPED = "skipped"  # the user asked not to gather it (e.g. --no-torch)
    NOT_REPORTED = "not-reported"  # read from a pasted report that does not state it
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A fact that could not be gathered, and why."""

    reason: Reason
    message: str  # one actionable sentence
    detail: str | None = None  # exception type and text, stderr tail: for -v and JSON


# the default of a fact added after snapshots were first written: an older snapshot lacks it
NOT_RECORDED = Unavailable(Reason.NOT_SUPPORTED, "not recorded (a snapshot from an older "
                           "gpudoctor, or a report that does not state it)")
