"""`gpudoctor smoke-test`: the measurements and the verdicts, as text or JSON."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from gpudoctor import __version__, schemas
from gpudoctor.checks.smoke import SLOWER_MARGIN, TOLERANCE, cudnn_text, rate
from gpudoctor.model import Report, Result, Status
from gpudoctor.model_smoke import SmokeRun
from gpudoctor.policy import failed
from gpudoctor.renderers.console import Line, print_lines, result_lines
from gpudoctor.renderers.interface import clean, finding_dict
from gpudoctor.renderers.json import dumps
from gpudoctor.snapshot import to_data

if TYPE_CHECKING:
    from gpudoctor.actions.smoke import SmokeOptions, SmokeOutcome

CELL = 48  # columns a cell of the timings table shows at most ("…" marks a cut)
_WORDS = {Status.PASS: "passed", Status.WARN: "warned", Status.FAIL: "failed",
          Status.SKIP: "skipped"}


def smoke_text(outcome: SmokeOutcome, results: tuple[Result, ...], console: Console) -> str:
    """The text report for `console`: the device line, the timings table (never cut: it gets
    the width it needs, and every row starts with its model), its legend and the figures
    (wrapping, by the rule of `gpudoctor.renderers.console`), then the verdicts as `check`
    prints them (fixes unwrapped), then the summary."""
    head = ""
    if isinstance(outcome, SmokeRun):
        table = _timings(outcome)
        width = console.width
        wide = console.options.update_width(10_000)
        console.width = max(width, console.measure(table, options=wide).maximum)
        try:
            with console.capture() as cap:
                console.print(table, markup=False, highlight=False, emoji=False)
        finally:
            console.width = width
        rows = "".join(line.rstrip(" ") + "\n" for line in cap.get().splitlines())
        head = (print_lines(console, [_header(outcome), Text("")]) + rows
                + print_lines(console, [_legend(outcome), Text(""), *_figures(outcome),
                                        Text("")]))
    lines: list[Line] = [line for r in results for line in result_lines(r, verbose=False)]
    return head + print_lines(console, [*lines, Text(""), _summary(outcome, results)])


class _Report:
    """`smoke_text` as a renderable: its lines, each printed as it is (never re-wrapped)."""

    def __init__(self, outcome: SmokeOutcome, results: tuple[Result, ...]) -> None:
        self.outcome, self.results = outcome, results

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in smoke_text(self.outcome, self.results, console).splitlines():
            yield Text.from_ansi(line, no_wrap=True, overflow="ignore")


def render_text(outcome: SmokeOutcome, results: tuple[Result, ...]) -> RenderableType:
    """The measurements (a table of timings) and the findings, as one renderable."""
    return _Report(outcome, results)


def _summary(outcome: SmokeOutcome, results: tuple[Result, ...]) -> Text:
    counts = {s: sum(1 for r in results if r.finding.status is s) for s in Status}
    took = f" in {outcome.seconds:.1f} s" if isinstance(outcome, SmokeRun) else ""
    return Text(f"smoke test {'failed' if failed(results) else 'passed'}{took}: "
                + ", ".join(f"{n} {_WORDS[s]}" for s, n in counts.items() if n), style="bold")


def _header(r: SmokeRun) -> Text:
    d = r.device
    bits = [f"{d.name}: {d.label}"]
    if d.arch:
        bits.append(f"{d.arch}{'' if d.arch_supported else ' (not in torch arch list)'}")
    bits.append(f"torch {d.torch}" + (f", CUDA {d.cuda}" if d.cuda and d.arch else ""))
    if d.arch:
        bits.append(f"cuDNN {cudnn_text(d.cudnn_version)}" if d.cudnn_available else "no cuDNN")
        bits.append(f"TF32 conv {'on' if d.tf32_conv else 'off'}, matmul "
                    f"{'on' if d.tf32_matmul else 'off'} (off while comparing)")
    bits.append(r.dtype)
    return Text.assemble(("device ", "bold"), (clean(" · ".join(bits)), "bold"))


def _timings(r: SmokeRun) -> Table:
    """One row a model and configuration, each starting with `·` (the names come from the
    child's report), no cell wider than CELL."""
    table = Table(box=None, padding=(0, 1), header_style="bold")
    table.add_column("", no_wrap=True, min_width=1)
    for name in ("model", "run", "input", "median", "spread", "speedup", "rel diff", "loss"):
        table.add_column(name, no_wrap=True, max_width=CELL, overflow="ellipsis",
                         justify="left" if name in ("model", "run", "input", "loss")
                         else "right")
    for m in r.models:
        native = m.config("native")
        for c in m.configs:
            t = c.timing
            ratio = (f"{native.timing.median_ms / t.median_ms:.2f}x"
                     if native is not None and c is not native else "")
            diff = "" if c.max_rel_diff is None else f"{c.max_rel_diff:.1e}"
            loss = f"{c.losses[0]:.3f} → {c.losses[-1]:.3f}" if c.losses else ""
            table.add_row(Text("·", style="dim"), *(Text(clean(cell)) for cell in (
                m.model, c.name, "x".join(map(str, m.input)), f"{t.median_ms:.3f} ms",
                f"{t.spread:.1%}", ratio, diff, loss)))
        if m.error is not None:
            table.add_row(Text("·", style="dim"), Text(clean(m.model)),
                          Text("error", style="red"), "", "", "", "", "",
                          Text(clean(m.error.message[:60])))
    return table


def _legend(r: SmokeRun) -> Text:
    clock = next((c.timing.clock for m in r.models for c in m.configs), "n/a")
    return Text(
        f"median per training step and spread = (p90 - p10) / median ({clean(clock)}); "
        f"speedup = native / this; rel diff = max|a-b|/max|b| vs native, "
        f"≤ {TOLERANCE.get(r.dtype, float('nan')):g} ({clean(r.dtype)}); cuDNN warns when "
        f"more than {SLOWER_MARGIN:.0%} slower")


def _figures(r: SmokeRun) -> list[Text]:
    lines = []
    for t in (r.matmul, r.copy):
        where = " (CPU figure)" if t.device == "cpu" else ""
        lines.append(f"{t.what}: {t.error.message}" if t.error else
                     f"{t.what}: {rate(t.value)} {t.unit}{where} — {t.setup}")
    if r.device.arch:
        lines.append("libcudnn mapped: " + (", ".join(r.cudnn_libraries) or "none"))
    traces = [c.trace for m in r.models for c in m.configs if c.trace]
    if traces:
        lines.append(f"Chrome traces: {', '.join(traces)}")
    return [Text.assemble(("· ", "dim"), clean(line)) for line in lines]


def json_head(command: str, options: Any, results: tuple[Result, ...]) -> dict[str, Any]:
    """The keys every smoke-test JSON report starts with (plain and --distributed): schema,
    version, command, options, the count of each status and every finding."""
    document = schemas.SMOKE_TEST if command == "smoke-test" else schemas.SMOKE_TEST_DISTRIBUTED
    return {
        "schema_version": schemas.version(document),
        "gpudoctor_version": __version__,
        "command": command,
        "options": dataclasses.asdict(options),
        "summary": {s.value: sum(1 for r in results if r.finding.status is s) for s in Status},
        "findings": [finding_dict(r) for r in results],
    }


def json_environment(report: Report) -> dict[str, Any]:
    """The key every smoke-test JSON report ends with (plain and --distributed): the
    Environment the verdicts were judged on, as `check --format json` writes it (the smoke
    fact, the host facts when gathered, every fact smoke-test does not probe as skipped), so
    that the report names its machine and `check --from-snapshot` replays its verdicts."""
    return {"environment": to_data(report.environment)}


def render_json(options: SmokeOptions, outcome: SmokeOutcome, report: Report) -> str:
    """Every measurement and finding; `smoke` holds the measurements (or `failure`),
    `environment` the facts they were judged on."""
    from gpudoctor.actions.smoke import outcome_to_dict

    return dumps({
        **json_head("smoke-test", options, report.results),
        "thresholds": {"max_rel_diff": TOLERANCE, "cudnn_slower_margin": SLOWER_MARGIN},
        "smoke": outcome_to_dict(outcome),
        **json_environment(report),
    })
