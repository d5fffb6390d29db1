"""The one status line of a Kubernetes node-problem-detector custom plugin (`check --npd`).

NPD keeps at most `max_output_length` bytes of a plugin's stdout (80 unless configured) as the
node condition's message, and reads the exit code: 0 OK, 1 NonOK, anything else Unknown. The
line names the first problem and how many more there are, cut to fit in 80 bytes of UTF-8.
"""

from __future__ import annotations

from gpudoctor.model import Report, Result
from gpudoctor.renderers.interface import clean, tally

MAX_BYTES = 80


def fit_bytes(text: str, limit: int = MAX_BYTES) -> str:
    """`text` cut to `limit` bytes of UTF-8 at a character boundary, `…` marking a cut."""
    if len(text.encode("utf-8")) <= limit:
        return text
    room = limit - len("…".encode())
    cut = text.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    return cut.rstrip() + "…"


def status_line(report: Report, problems: tuple[Result, ...]) -> str:
    """"GD101 no NVIDIA driver … (+2 more)" for a node with problems, else "OK: <tally>"."""
    if not problems:
        return fit_bytes(f"OK: {tally(report)}")
    first = problems[0]
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    message = " ".join(clean(first.finding.message).split())
    head = f"{first.check_id} "
    room = MAX_BYTES - len(head.encode()) - len(more.encode())
    return head + fit_bytes(message, room) + more
