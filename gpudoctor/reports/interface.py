"""What every report reader returns: the facts one block of a report states.

A reader fills the parts of the `Environment` its source covers and leaves the rest None ("this
block says nothing about it"); `gpudoctor.reports.read_reports` merges the blocks of every
input and turns what no block stated into `Unavailable(Reason.NOT_REPORTED)`. A fact a block
lacks is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.model import (
    CudnnFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    ToolkitsFacts,
    TorchFacts,
    Unavailable,
)


class ReportError(ValueError):
    """An input that holds no report gpudoctor can read; `str(e)` is one line naming it."""


def not_reported(message: str, detail: str | None = None) -> Unavailable:
    """A fact the report does not state: `message` says which, `detail` what it did say."""
    return Unavailable(Reason.NOT_REPORTED, message, detail)


@dataclass(frozen=True, slots=True)
class Partial:
    """The facts one block of a report states; None: the block says nothing about that part.

    `rank` orders blocks that state the same part: the driver's view from `nvidia-smi -q` (5)
    beats the table (4), an nvidia-smi error (3), collect_env's GPU names (2), and torch's
    messages quoted anywhere in the text (1).
    """

    kind: str  # "collect_env", "nvidia-smi", "nvidia-smi -q", "nvidia-smi -q -x", …
    rank: int
    complete: bool = True  # False: the block was cut off part-way
    nvml: NvmlFacts | Unavailable | None = None
    torch: TorchFacts | Unavailable | None = None
    host: HostFacts | Unavailable | None = None
    toolkits: ToolkitsFacts | Unavailable | None = None
    cudnn: CudnnFacts | Unavailable | None = None
    libcuda: LibcudaFacts | Unavailable | None = None  # torch's "found version 11040"
