"""Steps the commands share: gather or load an Environment, judge it, write the report."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from gpudoctor import views as V
from gpudoctor.cli.output import say
from gpudoctor.exitcodes import ExitCode
from gpudoctor.model import Environment, Report
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.renderers.interface import tally as tally

if TYPE_CHECKING:
    from gpudoctor.checks.base import Check


def fail_usage(message: str, *more: str) -> typer.Exit:
    """Print a usage error (the message on one line, then `more` lines; control characters
    and line breaks escaped) and return the Exit(2) to raise."""
    say(f"gpudoctor: error: {message}", *more)
    return typer.Exit(ExitCode.USAGE)


def refuse_with(ctx: typer.Context, given: str, names: Iterable[str]) -> None:
    """A usage error (exit 2) when any option of `names` (parameter names) was given on the
    command line together with `given` (`--from-report`): an option that only probing this
    machine uses would be ignored silently. Set by an environment variable (a CI job's
    GPUDOCTOR_TIMEOUT) it is not an error: it applies where it can."""
    options = {p.name: p for p in ctx.command.params}
    for name in names:
        source = ctx.get_parameter_source(name)  # typer's own click: compared by name
        if source is not None and source.name == "COMMANDLINE":
            flag = max(getattr(options.get(name), "opts", None) or [f"--{name}"], key=len)
            raise fail_usage(f"{flag} cannot be used with {given}: it applies only when this "
                             f"machine is probed, which {given} does not do (drop one of them)")


def split(values: Iterable[str] | None, option: str = "a selector") -> list[str]:
    """--only a,b --only c → [a, b, c]. An empty value ('', ',', 'a,') is a usage error (exit
    2), as an empty positional selector is: it names no check, and must not mean all of them."""
    values = tuple(values or ())
    for item in values:
        if any(not v.strip() for v in item.split(",")):
            raise fail_usage(f"{option} {item!r}: an empty check selector; give ids, slugs or "
                             "layers separated by commas (see `gpudoctor checks`)")
    return [v.strip() for item in values for v in item.split(",")]


def unknown_selectors(unknown: Sequence[str], checks: Iterable[Check]) -> typer.Exit:
    """The usage error for selectors that name no check, listing every valid one."""
    checks = tuple(checks)
    layers = dict.fromkeys(c.layer.value + ("" if c.layer.heading.lower() == c.layer.value
                                            else f' ("{c.layer.heading}")') for c in checks)
    return fail_usage(
        f"{', '.join(repr(u) for u in unknown)}: no such check (see `gpudoctor checks`)",
        f"  ids: {' '.join(c.id for c in checks)}",
        f"  slugs: {' '.join(c.slug for c in checks)}",
        f"  layers: {', '.join(layers)}")


def selected(only: Sequence[str], skip: Sequence[str]) -> tuple[Check, ...]:
    """The checks that `--only` / positional ids and `--skip` select; a selector that names
    no check, or a selection that leaves none to run, is a usage error (exit 2), before
    anything is probed."""
    from gpudoctor.checks import REGISTRY, select

    checks, unknown = select(REGISTRY, only, skip)
    if unknown:
        raise unknown_selectors(unknown, REGISTRY)
    if not checks:
        raise fail_usage(_cancelled(only, skip, REGISTRY))
    return checks


def _cancelled(only: Sequence[str], skip: Sequence[str], registry: Iterable[Check]) -> str:
    """Why a selection runs nothing: which --skip selectors leave out what the others chose."""
    from gpudoctor.checks import select

    def names(selectors: Iterable[str]) -> str:
        return ", ".join(repr(s) for s in dict.fromkeys(selectors))

    chosen, _ = select(registry, only)
    cancelling = [s for s in skip if select(chosen, (), (s,))[0] != chosen]
    if not only:
        return (f"--skip {names(cancelling)} leaves out every check: nothing to run "
                "(drop a --skip)")
    return (f"--skip {names(cancelling)} leaves out every check that {names(only)} selects "
            f"({len(chosen)}): nothing to run (drop the --skip, or select more)")


def fields_read(checks: Iterable[Check], smoke: bool = False) -> frozenset[str]:
    """The Environment fields the checks read; with --smoke torch's too (it picks the device)."""
    read = frozenset[str]().union(*(c.reads for c in checks))
    return read | {"torch"} if smoke else read


def interpreter(python: str | None, timeout: float) -> str:
    """The interpreter `--python` names (`gpudoctor.interpreters.resolve`: as a shell would
    run it, and it must answer as Python within `timeout` seconds), else this one. Anything
    else is a one-line usage error (exit 2). Resolved once here: what runs below takes it."""
    if python is None:
        return sys.executable
    from gpudoctor.interpreters import NotAnInterpreter, resolve

    try:
        return resolve(python, os.environ, timeout)
    except NotAnInterpreter as e:
        raise fail_usage(str(e)) from None


def environment(
    cuda_home: Path | None,
    python: str,
    timeout: float,
    no_torch: bool,
    fields: Iterable[str] | None = None,
) -> Environment:
    """Probe this machine: only the probes of `fields` (`fields_read` the selected checks;
    default all), with `timeout` for `import torch` and NVML alike; `python` as `interpreter`
    returned it."""
    from gpudoctor.probes.gather import collect
    from gpudoctor.probes.interface import Deps

    if cuda_home is not None:  # a toolkit, else exit 2 (one with only version.json: GD201)
        from gpudoctor.checks.toolkit import NAMED_STATE
        from gpudoctor.probes.toolkit import describe_root

        kind, _ = describe_root(cuda_home)
        if kind != "toolkit":
            raise fail_usage(f"--cuda-home {cuda_home} {NAMED_STATE[kind]}")
    deps = Deps(
        cuda_home=str(cuda_home) if cuda_home else None,
        torch_timeout=timeout,
        nvml_timeout=timeout,
        no_torch=no_torch,
        python=python,
    )
    return collect(deps, fields)


def load_reports(paths: Sequence[str]) -> Environment:
    """Saved snapshots and pasted reports read from files ('-': stdin), bounded, through the
    one reader entry (`gpudoctor.reports.read.read_inputs`); nothing on this machine is probed. An
    input that cannot be read or holds no usable report is a one-line usage error (exit 2)
    naming it."""
    from gpudoctor.cli.inputs import SNAPSHOT_LIMIT, InputError, read_input
    from gpudoctor.compat import load_tables
    from gpudoctor.reports.read import ReportError, read_inputs

    def read(path: str) -> tuple[str, str]:
        try:
            return "stdin" if path == "-" else path, read_input(path, SNAPSHOT_LIMIT)
        except InputError as e:
            raise fail_usage(f"cannot read {e}") from None

    items = [read(path) for path in paths]
    try:
        return read_inputs(items, load_tables())
    except ReportError as e:
        raise fail_usage(str(e)) from None


# Set by the warm-up thread once the compat tables are loaded (or failed to load).
_TABLES_WARM: list[threading.Event] = []


def warm_up(fmt: OutputFormat) -> None:
    """Load the compat tables and the renderer of `fmt` (for JSON the tables' date too) in a
    background thread while the probes wait on their children (`import torch`, ~1-2 s):
    `judge` and `emit` then find them loaded, and `check` ends ~50 ms sooner after torch's
    child does. A failure here is left for `judge` / `emit` to meet again and report."""
    tables = threading.Event()

    def load() -> None:
        try:
            from gpudoctor.compat import load_tables

            load_tables()
        except Exception:  # noqa: BLE001 - judge raises it where it is handled
            pass
        finally:
            tables.set()
        try:  # the module of `renderers.report_renderings` for `fmt`
            from importlib import import_module

            from gpudoctor.compat import known_until

            import_module("gpudoctor.renderers."
                          + ("console" if fmt is OutputFormat.TEXT else fmt.value))
            if fmt is OutputFormat.JSON:  # its report states the date, read apart (cached)
                known_until()
        except Exception:  # noqa: BLE001 - emit raises it where it is handled
            pass

    _TABLES_WARM.append(tables)
    threading.Thread(target=load, name="gpudoctor-warm-up", daemon=True).start()


def judge(env: Environment, checks: Iterable[Check]) -> Report:
    """Run the selected checks over the environment. The tables the warm-up thread is still
    loading are waited for, not loaded a second time beside it (~50 ms of CPU: the probes,
    started early, can be done first)."""
    from gpudoctor import childproc
    from gpudoctor.checks import run_checks
    from gpudoctor.compat import load_tables

    for warm in _TABLES_WARM:
        while not warm.wait(0.2):  # a Ctrl-C the handler could not raise is raised here
            childproc.raise_if_interrupted()
    return run_checks(env, load_tables(), checks)


def emit(report: Report, fmt: OutputFormat, output: str, verbose: bool,
         strict: bool = False) -> None:
    """Render and write the report (exit 2 when it cannot be written whole), then the
    summary line on stderr; `strict`: warnings fail the job (JUnit counts them as failures)."""
    from gpudoctor.cli.options import report_console
    from gpudoctor.cli.output import deliver
    from gpudoctor.renderers import render, report_renderings

    deliver(render(fmt, report_renderings(report, lambda: report_console(output), verbose,
                                          strict)), output, fmt)
    say(f"gpudoctor: {tally(report)}" + (f"; report written to {output}" if output != "-"
                                         else ""))


def cuda_usable(env: Environment) -> bool:
    """Whether torch imported and sees a CUDA device."""
    rt = V.torch_runtime(env)
    return bool(rt and rt.cuda_available is True)


def smoke_pending(env: Environment) -> bool:
    """Whether the smoke test has not run for this environment (nor for the snapshot read)."""
    from gpudoctor.model import Unavailable

    return isinstance(env.smoke, Unavailable)


def with_smoke(env: Environment, python: str, timeout: float) -> Environment:
    """Run the quick LeNet smoke test and put its outcome into the environment (the smoke
    checks GD450-GD455 then judge it with the others).

    On a machine where torch sees CUDA it trains on cuda:0 with cuDNN on and off; elsewhere on
    the CPU, which still proves that forward, backward and the optimizer step compute.
    """
    from gpudoctor.actions.smoke import SmokeOptions, run_smoke

    device = "cuda:0" if cuda_usable(env) else "cpu"
    options = SmokeOptions(device=device, model="lenet", steps=5, warmup=2, python=python,
                           timeout=max(timeout, 60.0))
    return dataclasses.replace(env, smoke=run_smoke(options))
