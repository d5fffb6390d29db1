"""Steps the commands share: gather or load an Environment, judge it, write the report."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

import typer

from gpudoctor.exitcodes import ExitCode
from gpudoctor.model import Environment, Report, Status
from gpudoctor.renderers.interface import OutputFormat, is_info
from gpudoctor.renderers.interface import tally as tally


def fail_usage(message: str) -> typer.Exit:
    """Print a one-line usage error and return the Exit(2) to raise."""
    from gpudoctor.cli.options import stderr_console

    stderr_console().print(f"gpudoctor: error: {message}", markup=False)
    return typer.Exit(ExitCode.USAGE)


def split(values: Iterable[str] | None) -> list[str]:
    """--only a,b --only c → [a, b, c]."""
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def environment(
    from_snapshot: Path | None,
    cuda_home: Path | None,
    python: str | None,
    timeout: float,
    no_torch: bool,
) -> Environment:
    """Load a snapshot, or probe this machine."""
    if from_snapshot is not None:
        from gpudoctor.snapshot import SnapshotError, loads

        try:
            return loads(from_snapshot.read_text(encoding="utf-8"))
        except OSError as e:
            raise fail_usage(f"cannot read {from_snapshot}: {e.strerror or e}") from None
        except (SnapshotError, UnicodeDecodeError) as e:
            raise fail_usage(f"{from_snapshot} is not a gpudoctor snapshot: {e}") from None
    from gpudoctor.probes import collect
    from gpudoctor.probes.interface import Deps

    if python is not None and not Path(python).exists():
        import shutil

        found = shutil.which(python)
        if found is None:
            raise fail_usage(f"--python {python}: no such interpreter")
        python = found
    deps = Deps(
        cuda_home=str(cuda_home) if cuda_home else None,
        torch_timeout=timeout,
        no_torch=no_torch,
    )
    if python:
        deps = dataclasses.replace(deps, python=python)
    return collect(deps)


def judge(env: Environment, only: list[str], skip: list[str]) -> Report:
    """Run the selected checks over the environment."""
    from gpudoctor.checks import REGISTRY, run_checks, select
    from gpudoctor.compat import load_tables

    checks, unknown = select(REGISTRY, only, skip)
    report = run_checks(env, load_tables(), checks)
    return dataclasses.replace(report, unknown_selectors=unknown)


def emit(report: Report, fmt: OutputFormat, output: str, verbose: bool) -> None:
    """Render and write the report."""
    from gpudoctor.cli.options import stdout_console, write_output
    from gpudoctor.renderers import to_renderer

    console = stdout_console()
    if output != "-":
        from rich.console import Console

        console = Console(no_color=True, highlight=False, width=100)
    text = to_renderer(fmt, console, verbose).render(report)
    try:
        write_output(text, output)
    except OSError as e:
        raise fail_usage(f"cannot write {output}: {e.strerror or e}") from None


def exit_code(report: Report, strict: bool) -> int:
    """0 no failure; 1 a failure, or with --strict a warning (notes never fail)."""
    if report.count(Status.FAIL):
        return ExitCode.FAILURE
    if strict and any(r.finding.status is Status.WARN and not is_info(r) for r in report.results):
        return ExitCode.FAILURE
    return ExitCode.OK


def cuda_usable(env: Environment) -> bool:
    """Whether torch imported and sees a CUDA device."""
    from gpudoctor.checks.facts import torch_runtime

    rt = torch_runtime(env)
    return bool(rt and rt.cuda_available)


def with_smoke(report: Report, python: str | None, timeout: float) -> Report:
    """Run the quick LeNet smoke test and add its results to the report.

    On a machine where torch sees CUDA it trains on cuda:0 with cuDNN on and off; elsewhere on
    the CPU, which still proves that forward, backward and the optimizer step compute.
    """
    from gpudoctor.actions.smoke import SmokeOptions, run_smoke, smoke_results

    device = "cuda:0" if cuda_usable(report.environment) else "cpu"
    options = SmokeOptions(device=device, model="lenet", steps=5, warmup=2, python=python,
                           timeout=max(timeout, 60.0))
    results = smoke_results(run_smoke(options))
    return dataclasses.replace(report, results=report.results + results)
