"""`gpudoctor smoke-test`: train reference CNNs on a device and judge the numbers."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpudoctor import __version__
from gpudoctor.actions.smoke import (
    ProgressCallback,
    SmokeOptions,
    SmokeOutcome,
    SmokeProgress,
    SmokeReport,
    outcome_to_dict,
    parse_device,
    run_smoke,
    smoke_results,
)
from gpudoctor.actions.smoke_checks import SLOWER_MARGIN, TOLERANCE, rate
from gpudoctor.cli.common import fail_usage
from gpudoctor.cli.options import (
    FormatOption,
    OutputOption,
    PythonOption,
    stderr_console,
    stdout_console,
    write_output,
)
from gpudoctor.exitcodes import ExitCode
from gpudoctor.model import SCHEMA_VERSION, Result, Status
from gpudoctor.renderers.console import SYMBOLS
from gpudoctor.renderers.interface import OutputFormat, docs_url


class ModelChoice(str, Enum):
    """Which reference model to train."""

    LENET = "lenet"
    CONVNET = "convnet"
    ALL = "all"


class DtypeChoice(str, Enum):
    """Autocast dtype (float32: no autocast)."""

    FLOAT32 = "float32"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"


def smoke_test(
    device: Annotated[str, typer.Option("--device", "-d", help="cpu, cuda or cuda:N",
                                        envvar="GPUDOCTOR_DEVICE")] = "cuda:0",
    model: Annotated[ModelChoice, typer.Option("--model", help="reference model to train",
                                               case_sensitive=False)] = ModelChoice.ALL,
    batch_size: Annotated[int | None, typer.Option(
        "--batch-size", min=1, help="batch size (default: lenet 128 / convnet 32 on CUDA, "
        "32 / 4 on the CPU)", show_default=False)] = None,
    steps: Annotated[int, typer.Option("--steps", min=1, help="timed steps per run")] = 20,
    warmup: Annotated[int, typer.Option("--warmup", min=0, help="untimed steps first")] = 3,
    dtype: Annotated[DtypeChoice, typer.Option("--dtype", help="autocast dtype",
                                               case_sensitive=False)] = DtypeChoice.FLOAT32,
    profile: Annotated[Path | None, typer.Option(
        "--profile", help="save a Chrome trace per model and configuration in this directory",
        file_okay=False)] = None,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = "-",
    timeout: Annotated[float, typer.Option(
        "--timeout", min=1.0, help="seconds before the test is called hung",
        envvar="GPUDOCTOR_SMOKE_TIMEOUT")] = 300.0,
    python: PythonOption = None,
) -> None:
    """train reference CNNs on a device: correct numbers, cuDNN used and faster"""
    if fmt not in (OutputFormat.TEXT, OutputFormat.JSON):
        raise fail_usage(f"smoke-test writes text or json, not {fmt}")
    try:
        device = parse_device(device)
    except ValueError as e:
        raise fail_usage(f"--device: {e}") from None
    options = SmokeOptions(
        device=device, model=model.value, batch_size=batch_size, steps=steps, warmup=warmup,
        dtype=dtype.value, profile_dir=str(profile) if profile else None, timeout=timeout,
        python=_interpreter(python))
    err = stderr_console()
    with _progress(err, enabled=fmt is OutputFormat.TEXT and err.is_terminal) as on_progress:
        outcome = run_smoke(options, on_progress)
    results = smoke_results(outcome)
    if fmt is OutputFormat.JSON:
        text = render_json(options, outcome, results)
    else:
        console = stdout_console() if output == "-" else Console(no_color=True, width=100)
        with console.capture() as cap:
            console.print(render_text(outcome, results))
        text = cap.get()
    try:
        write_output(text, output)
    except OSError as e:
        raise fail_usage(f"cannot write {output}: {e.strerror or e}") from None
    failed = any(r.finding.status is Status.FAIL for r in results)
    if output != "-" or fmt is not OutputFormat.TEXT:
        err.print(f"gpudoctor: smoke test {'failed' if failed else 'passed'}"
                  + (f"; report written to {output}" if output != "-" else ""), markup=False)
    raise typer.Exit(ExitCode.FAILURE if failed else ExitCode.OK)


def _interpreter(python: str | None) -> str | None:
    if python is None or Path(python).exists():
        return python
    found = shutil.which(python)
    if found is None:
        raise fail_usage(f"--python {python}: no such interpreter")
    return found


@contextmanager
def _progress(console: Console, enabled: bool) -> Iterator[ProgressCallback | None]:
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def update(p: SmokeProgress) -> None:
            bar.update(task, description=p.label, completed=p.done, total=p.total or None)

        yield update


# --------------------------------------------------------------------------- rendering


def render_text(outcome: SmokeOutcome, results: tuple[Result, ...]) -> RenderableType:
    """The measurements (a table of timings) and the findings."""
    parts: list[RenderableType] = []
    if isinstance(outcome, SmokeReport):
        parts += [_header(outcome), _timings(outcome), _figures(outcome), Text("")]
    for r in results:
        f = r.finding
        sym, style = SYMBOLS[f.status]
        parts.append(Text.assemble((f"{sym} ", style), (f"{r.check_id} ", "dim"),
                                   (f"{r.title}: ", ""), (f.message, "dim" if
                                                           f.status is Status.SKIP else "")))
        if f.fix and f.status in (Status.FAIL, Status.WARN):
            parts.append(Text.assemble(("    → fix: ", "bold"), (f.fix, "")))
    counts = {s: sum(1 for r in results if r.finding.status is s) for s in Status}
    took = f" in {outcome.seconds:.1f} s" if isinstance(outcome, SmokeReport) else ""
    parts.append(Text(f"\nsmoke test {'failed' if counts[Status.FAIL] else 'passed'}{took}: "
                      + ", ".join(f"{n} {_WORDS[s]}" for s, n in counts.items() if n),
                      style="bold"))
    return Group(*parts)


_WORDS = {Status.PASS: "passed", Status.WARN: "warned", Status.FAIL: "failed",
          Status.SKIP: "skipped"}


def _header(r: SmokeReport) -> Text:
    d = r.device
    bits = [f"{d.name}: {d.label}"]
    if d.arch:
        bits.append(f"{d.arch}{'' if d.arch_supported else ' (not in torch arch list)'}")
    bits.append(f"torch {d.torch}" + (f", CUDA {d.cuda}" if d.cuda and d.arch else ""))
    if d.arch:
        bits.append(f"cuDNN {d.cudnn_version}" if d.cudnn_available else "no cuDNN")
        bits.append(f"TF32 conv {'on' if d.tf32_conv else 'off'}, matmul "
                    f"{'on' if d.tf32_matmul else 'off'} (off while comparing)")
    bits.append(r.dtype)
    return Text(" · ".join(bits) + "\n", style="bold")


def _timings(r: SmokeReport) -> Table:
    table = Table(box=None, padding=(0, 1), header_style="bold", caption_justify="left")
    for name in ("model", "run", "input", "median", "spread", "speedup", "rel diff", "loss"):
        table.add_column(name, no_wrap=True, justify="left" if name in (
            "model", "run", "input", "loss") else "right")
    for m in r.models:
        native = m.config("native")
        for c in m.configs:
            t = c.timing
            ratio = (f"{native.timing.median_ms / t.median_ms:.2f}x"
                     if native is not None and c is not native else "")
            diff = "" if c.max_rel_diff is None else f"{c.max_rel_diff:.1e}"
            loss = f"{c.losses[0]:.3f} → {c.losses[-1]:.3f}" if c.losses else ""
            table.add_row(m.model, c.name, "x".join(map(str, m.input)), f"{t.median_ms:.3f} ms",
                          f"{t.spread:.1%}", ratio, diff, loss)
        if m.error is not None:
            table.add_row(m.model, "[red]error[/]", "", "", "", "", "", m.error.message[:60])
    clock = next((c.timing.clock for m in r.models for c in m.configs), "n/a")
    table.caption = (f"median per training step and spread = (p90 - p10) / median ({clock}); "
                     f"speedup = native / this; rel diff = max|a-b|/max|b| vs native, "
                     f"≤ {TOLERANCE[r.dtype]:g} ({r.dtype}); cuDNN warns when more than "
                     f"{SLOWER_MARGIN:.0%} slower")
    return table


def _figures(r: SmokeReport) -> Text:
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
    return Text("\n" + "\n".join(lines))


def render_json(options: SmokeOptions, outcome: SmokeOutcome,
                results: tuple[Result, ...]) -> str:
    """Every measurement and finding; `smoke` holds the measurements (or `failure`)."""
    data = {
        "schema_version": SCHEMA_VERSION,
        "gpudoctor_version": __version__,
        "command": "smoke-test",
        "options": dataclasses.asdict(options),
        "summary": {s.value: sum(1 for r in results if r.finding.status is s) for s in Status},
        "findings": [
            {"id": r.check_id, "slug": r.slug, "title": r.title, "layer": r.layer.value,
             "severity": r.severity.name.lower(), "status": r.finding.status.value,
             "message": r.finding.message, "fix": r.finding.fix,
             "evidence": [list(e) for e in r.finding.evidence], "docs_url": docs_url(r.check_id)}
            for r in results
        ],
        "thresholds": {"max_rel_diff": TOLERANCE, "cudnn_slower_margin": SLOWER_MARGIN},
        "smoke": outcome_to_dict(outcome),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
