"""`gpudoctor smoke-test`: train reference CNNs on a device and judge the numbers."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from gpudoctor import policy
from gpudoctor.actions.smoke import (
    SmokeOptions,
    parse_device,
    run_smoke,
    smoke_report,
)
from gpudoctor.cli import common
from gpudoctor.cli.common import fail_usage
from gpudoctor.cli.options import (
    TEXT_JSON,
    DebugOption,
    OutputOption,
    PythonOption,
    format_option,
    report_console,
    resolve_format,
    seconds,
    stderr_console,
)
from gpudoctor.cli.output import deliver, say
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.renderers.progress import step_progress
from gpudoctor.renderers.smoke import render_json, render_text, smoke_text

if TYPE_CHECKING:
    from gpudoctor.model import Report

__all__ = ["render_json", "render_text", "smoke_test"]

FORMATS = TEXT_JSON

# bounds: below 2 steps no loss can fall; past these the run takes hours or cannot fit
STEPS = (2, 10000)
WARMUP = (0, 1000)
BATCH = (1, 4096)


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
        "--batch-size", min=BATCH[0], max=BATCH[1], help="batch size, 1 to 4096 (default: lenet "
        "128 / convnet 32 on CUDA, 32 / 4 on the CPU)", show_default=False)] = None,
    steps: Annotated[int, typer.Option("--steps", min=STEPS[0], max=STEPS[1],
                                       help="timed steps per run, 2 to 10000")] = 20,
    warmup: Annotated[int, typer.Option("--warmup", min=WARMUP[0], max=WARMUP[1],
                                        help="untimed steps first, 0 to 1000")] = 3,
    dtype: Annotated[DtypeChoice, typer.Option("--dtype", help="autocast dtype",
                                               case_sensitive=False)] = DtypeChoice.FLOAT32,
    profile: Annotated[Path | None, typer.Option(
        "--profile", help="save a Chrome trace per model and configuration in this directory",
        file_okay=False)] = None,
    fmt: Annotated[OutputFormat | None, format_option(FORMATS)] = None,
    output: OutputOption = "-",
    timeout: Annotated[float, typer.Option(
        "--timeout", help="seconds before the test is called hung (above 0, at most 86400)",
        envvar="GPUDOCTOR_SMOKE_TIMEOUT", callback=seconds)] = 300.0,
    python: PythonOption = None,
    distributed: Annotated[bool, typer.Option(
        "--distributed", help="one rank of a torchrun job: all-reduce correctness and bus "
        "bandwidth over NCCL (GPUs) or gloo (--device cpu); rank 0 writes the report")] = False,
    debug: DebugOption = False,
) -> None:
    """train reference CNNs on a device: correct numbers, cuDNN used and faster

    \b
    Exit 0: the verdicts pass (warnings allowed); 1: one failed, or the test could not run;
    2: usage error, or the report could not be written. With --distributed, rank 0's status
    is the run's; the other ranks exit 0 (torchrun would stop rank 0 before its report).

    \b
    examples:
      gpudoctor smoke-test                          both models on cuda:0
      gpudoctor smoke-test --device cpu --steps 5   the same code path on the CPU
      gpudoctor smoke-test --model convnet --dtype bfloat16 --profile traces/
      gpudoctor smoke-test --format json -o smoke.json
      torchrun --nproc-per-node 8 -m gpudoctor smoke-test --distributed
                                                    every GPU of the node, all-reduce over NCCL
    """
    fmt = resolve_format(fmt, FORMATS)
    try:
        device = parse_device(device)
    except ValueError as e:
        raise fail_usage(f"--device: {e}") from None
    interpreter = common.interpreter(python, timeout)  # not a Python: exit 2, one line
    if distributed:
        _distributed(device, timeout, interpreter, fmt, output)
    if profile is not None:
        _writable(profile)
    options = SmokeOptions(
        device=device, model=model.value, batch_size=batch_size, steps=steps, warmup=warmup,
        dtype=dtype.value, profile_dir=str(profile) if profile else None, timeout=timeout,
        python=interpreter)
    err = stderr_console()
    with_host = _host_beside(fmt is OutputFormat.JSON)
    with step_progress(err, enabled=fmt is OutputFormat.TEXT and err.is_terminal) as on_progress:
        outcome = run_smoke(options, on_progress)
    report = smoke_report(outcome)
    results = report.results
    deliver(render(fmt, Renderings(
        text=lambda: smoke_text(outcome, results, report_console(output)),
        json=lambda: render_json(options, outcome, with_host(report)))), output, fmt)
    failed = policy.failed(results)
    if output != "-" or fmt is not OutputFormat.TEXT:
        say(f"gpudoctor: smoke test {'failed' if failed else 'passed'}"
            + (f"; report written to {output}" if output != "-" else ""))
    raise typer.Exit(ExitCode.FAILURE if failed else ExitCode.OK)


def _host_beside(wanted: bool) -> Callable[[Report], Report]:
    """For the JSON report, which names its machine: the host probe (about 1 ms, after some
    15 ms of imports), run in a thread while the smoke child works, so that it costs no time.
    The returned function puts its facts into a report's Environment; the verdicts stand, as
    the smoke checks read only the smoke fact (`reads=`). Not wanted: reports stay as they are.
    """
    if not wanted:
        return lambda report: report
    found: list[Any] = []

    def probe() -> None:
        from gpudoctor.probes.gather import guarded
        from gpudoctor.probes.host import probe_host
        from gpudoctor.probes.interface import Deps

        found.append(guarded("host", probe_host, Deps()))

    thread = threading.Thread(target=probe, name="gpudoctor-probe-host", daemon=True)
    thread.start()

    def with_host(report: Report) -> Report:
        from gpudoctor.childproc import raise_if_interrupted

        while thread.is_alive():  # as `probes.collect` waits: a Ctrl-C is raised here
            thread.join(0.2)
            raise_if_interrupted()
        if not found:
            return report
        env = dataclasses.replace(report.environment, host=found[0])
        return dataclasses.replace(report, environment=env)

    return with_host


def _writable(directory: Path) -> None:
    """`--profile DIR` is created if need be and must take a file, else a usage error (exit 2)
    before the test runs: traces that cannot be written must not end in exit 0."""
    import tempfile

    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".gpudoctor-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise fail_usage(f"--profile {directory}: cannot write the traces there: "
                         f"{e.strerror or e}") from None


def _distributed(device: str, timeout: float, python: str, fmt: OutputFormat,
                 output: str) -> NoReturn:
    """`--distributed`: this rank's part (`gpudoctor.actions.distributed`); rank 0 writes the
    report of every rank, another rank one line on stderr. Exit 1 when a verdict fails."""
    import os

    from gpudoctor.actions.distributed import (
        DistributedOptions,
        rank_environment,
        run_distributed,
    )
    from gpudoctor.actions.smoke import smoke_environment
    from gpudoctor.checks import run_checks
    from gpudoctor.checks.smoke import DISTRIBUTED_CHECKS, check_smoke_device_usable
    from gpudoctor.compat import load_tables
    from gpudoctor.model import SmokeFailure
    from gpudoctor.renderers import distributed as renderer

    try:
        where = rank_environment(os.environ)
    except ValueError as e:
        raise fail_usage(f"--distributed: {e}") from None
    options = DistributedOptions("cpu" if device == "cpu" else "cuda", timeout, python)
    outcome = run_distributed(options)
    if where.rank != 0:
        # exit 0 whatever this rank found: torchrun stops every rank, rank 0 included, as soon
        # as one exits non-zero, and rank 0 would be killed before it wrote the report that
        # names this rank's state. Rank 0's exit status is the run's (and torchrun's). Said at
        # once, before any check or table loads: torchrun stops this rank when rank 0 exits,
        # and on a loaded machine rank 0 could write its report first (CI saw the line lost)
        state = (outcome.message if isinstance(outcome, SmokeFailure)
                 else "; ".join(f"{x.state} ({x.error or x.phase})" for x in outcome.ranks))
        say(f"gpudoctor: rank {where.rank} of {where.world_size}: {state}; rank 0 writes "
            "the report and carries the exit status")
        raise typer.Exit(ExitCode.OK)
    checks = ((check_smoke_device_usable, *DISTRIBUTED_CHECKS)  # GD454 says why it failed
              if isinstance(outcome, SmokeFailure) else DISTRIBUTED_CHECKS)
    report = run_checks(smoke_environment(outcome), load_tables(), checks)
    results = report.results
    failed = policy.failed(results)
    # no host probe in the JSON: each rank's host is in the report, and rank 0 keeps its path
    # short (torchrun stops it when another rank exits before it has written the report)
    deliver(render(fmt, Renderings(
        text=lambda: renderer.render_text(outcome, results, report_console(output)),
        json=lambda: renderer.render_json(options, outcome, report))), output, fmt)
    say(f"gpudoctor: distributed smoke test {'failed' if failed else 'passed'}"
        + (f"; report written to {output}" if output != "-" else ""))
    raise typer.Exit(ExitCode.FAILURE if failed else ExitCode.OK)
