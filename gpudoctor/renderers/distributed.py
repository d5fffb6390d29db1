"""`gpudoctor smoke-test --distributed`: rank 0's report of every rank, as text or JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpudoctor import policy
from gpudoctor.checks.smoke import rate
from gpudoctor.model import Report, Result, SmokeFailure
from gpudoctor.model_smoke import DistributedRun
from gpudoctor.renderers.console import Line, print_lines, result_lines
from gpudoctor.renderers.interface import clean
from gpudoctor.renderers.json import dumps
from gpudoctor.renderers.smoke import json_environment, json_head


def _table(r: DistributedRun) -> Table:
    table = Table(box=None, padding=(0, 1), header_style="bold")
    for name in ("rank", "host", "device", "state", "phase", "all-reduce sum", "busbw GB/s",
                 "algbw GB/s"):
        table.add_column(name, no_wrap=True, justify="right" if "GB/s" in name else "left")
    for x in r.ranks:
        exact = ("" if x.sum is None else f"{x.sum} ✓" if x.sum == x.expected_sum
                 and not x.mismatches else f"{x.sum} ≠ {x.expected_sum}")
        table.add_row(*(Text(clean(c)) for c in (
            str(x.rank), x.host, f"{x.device} {x.label}".strip(), x.state, x.phase, exact,
            "" if x.busbw_gbs is None else rate(x.busbw_gbs),
            "" if x.algbw_gbs is None else rate(x.algbw_gbs))),
            style="" if x.state == "ok" else "red")
    return table


def render_text(outcome: DistributedRun | SmokeFailure, results: tuple[Result, ...],
                console: Console) -> str:
    """The ranks' table (whole, never cut), their errors, then the verdicts; the rule of
    `gpudoctor.renderers.console` holds (host names and errors come from the ranks): every
    row starts with its rank, the title wraps behind `┆`."""
    head = ""
    if isinstance(outcome, DistributedRun):
        title = (f"{outcome.backend}, {outcome.world_size} rank(s), master {outcome.master}, "
                 f"torch {outcome.torch}; all-reduce of {outcome.elements} float32 elements, "
                 f"bandwidth over {outcome.bandwidth_bytes >> 20} MiB × {outcome.iterations}")
        table = _table(outcome)
        width = console.width
        wide = console.options.update_width(10_000)
        console.width = max(width, console.measure(table, options=wide).maximum)
        try:  # the table whole, as wide as it needs: no column dropped, every row its rank's
            with console.capture() as cap:
                console.print(table, markup=False, highlight=False, emoji=False)
        finally:
            console.width = width
        head = (print_lines(console, [Text(clean(title), style="bold")])
                + "".join(line.rstrip(" ") + "\n" for line in cap.get().splitlines()) + "\n")
    lines: list[Line] = [line for r in results for line in result_lines(r, verbose=False)]
    failed = policy.failed(results)
    took = (f" in {outcome.seconds:.1f} s" if isinstance(outcome, DistributedRun) else "")
    lines.append((Text(f"\ndistributed smoke test {'failed' if failed else 'passed'}{took}",
                       style="bold"), True))
    return head + print_lines(console, lines)


def render_json(options: Any, outcome: DistributedRun | SmokeFailure, report: Report) -> str:
    """Every rank's measurements and the verdicts; `distributed` holds the report (or
    `failure`), `environment` the facts the verdicts were judged on."""
    from gpudoctor.snapshot import to_data

    data = to_data(outcome)
    return dumps({
        **json_head("smoke-test --distributed", options, report.results),
        "distributed": {"failure": data} if isinstance(outcome, SmokeFailure) else data,
        **json_environment(report),
    })
