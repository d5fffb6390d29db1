"""`gpudoctor.cli.common`, the steps the commands share: usage errors on one line (an empty or
unknown selector, a selection that leaves nothing, a probe option given with a pasted report,
a `--cuda-home` that is no toolkit, an unreadable report), the facts the selected checks read,
judging and writing the report, and the smoke test's device. Nothing here probes this
machine. (The commands through the CLI: tests/cli/test_check_cli.py, test_leftovers.py.)"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Annotated

import pytest
import typer
from runner import invoke

from gpudoctor.actions import smoke
from gpudoctor.checks import REGISTRY
from gpudoctor.cli import common
from gpudoctor.model import Environment, Layer, Status
from gpudoctor.renderers.interface import OutputFormat, tally
from tests.renderers.render_kit import FIXTURES

ENVS = FIXTURES[0].parent


def usage_error(capsys: pytest.CaptureFixture[str], call: object) -> list[str]:
    """The stderr lines of the usage error (exit 2) `call()` raises."""
    with pytest.raises(typer.Exit) as e:
        call()  # type: ignore[operator]
    assert e.value.exit_code == 2
    return capsys.readouterr().err.splitlines()


def fixture(name: str) -> Environment:
    return common.load_reports([str(ENVS / f"{name}.json")])


def test_fail_usage(capsys: pytest.CaptureFixture[str]) -> None:
    exit_ = common.fail_usage("bad\nthing", "  more")
    assert isinstance(exit_, typer.Exit) and exit_.exit_code == 2
    assert capsys.readouterr().err == "gpudoctor: error: bad\\nthing\n  more\n"


def test_split_joins_repeats_and_commas(capsys: pytest.CaptureFixture[str]) -> None:
    assert common.split(["GD101, gd404", "cudnn"]) == ["GD101", "gd404", "cudnn"]
    assert common.split(None) == [] and common.split([]) == []
    for empty in ("", ",", "GD101,", " , host"):
        (line,) = usage_error(capsys, lambda e=empty: common.split([e], "--only"))
        assert line.startswith(f"gpudoctor: error: --only {empty!r}: an empty check selector")


def test_selected_and_unknown_selectors(capsys: pytest.CaptureFixture[str]) -> None:
    assert [c.id for c in common.selected(["GD404"], [])] == ["GD404"]
    cudnn = common.selected(["cudnn"], ["GD302"])
    assert cudnn and all(c.layer is Layer.CUDNN for c in cudnn)
    assert "GD302" not in {c.id for c in cudnn}
    assert len(common.selected([], [])) == len(REGISTRY)
    lines = usage_error(capsys, lambda: common.selected(["GD999", "cudnn"], ["nope"]))
    assert lines[0] == "gpudoctor: error: 'GD999', 'nope': no such check (see `gpudoctor checks`)"
    assert lines[1] == "  ids: " + " ".join(c.id for c in REGISTRY)
    assert lines[2] == "  slugs: " + " ".join(c.slug for c in REGISTRY)
    assert lines[3].startswith("  layers: driver (\"Driver & GPUs\"), ")


def test_a_selection_that_leaves_nothing_says_which_skip(
        capsys: pytest.CaptureFixture[str]) -> None:
    (line,) = usage_error(capsys, lambda: common.selected(["GD404"], ["pytorch", "host"]))
    assert line == ("gpudoctor: error: --skip 'pytorch' leaves out every check that 'GD404' "
                    "selects (1): nothing to run (drop the --skip, or select more)")
    layers = sorted({c.layer.value for c in REGISTRY})
    (line,) = usage_error(capsys, lambda: common.selected([], layers))
    assert line.startswith("gpudoctor: error: --skip ")
    assert "leaves out every check: nothing to run (drop a --skip)" in line


def test_fields_read() -> None:
    gd302 = common.selected(["GD302"], [])
    assert common.fields_read(gd302) == gd302[0].reads
    assert "torch" not in common.fields_read(gd302)
    assert common.fields_read(gd302, smoke=True) == gd302[0].reads | {"torch"}
    everything = common.fields_read(REGISTRY)
    assert everything == frozenset().union(*(c.reads for c in REGISTRY))


def test_interpreter(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert common.interpreter(None, 10.0) == sys.executable
    (line,) = usage_error(capsys, lambda: common.interpreter(str(tmp_path / "python9"), 10.0))
    assert line.startswith("gpudoctor: error: ") and "python9" in line


def test_a_cuda_home_that_is_no_toolkit_is_refused_before_probing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (line,) = usage_error(capsys, lambda: common.environment(
        tmp_path / "cuda", sys.executable, 10.0, no_torch=True, fields=()))
    assert line.startswith(f"gpudoctor: error: --cuda-home {tmp_path / 'cuda'} ")


def test_load_reports(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    env = fixture("h100-healthy")
    assert isinstance(env, Environment) and env.host is not None
    (line,) = usage_error(capsys, lambda: common.load_reports([str(tmp_path / "none.json")]))
    assert line.startswith(f"gpudoctor: error: cannot read {tmp_path / 'none.json'}")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("no report of any kind here\n")
    (line,) = usage_error(capsys, lambda: common.load_reports([str(garbage)]))
    assert line.startswith("gpudoctor: error: ") and "garbage.json" in line


def test_judge_runs_only_the_selected_checks() -> None:
    env = fixture("pascal-gpu-cu130-torch")
    report = common.judge(env, common.selected(["GD404", "GD101"], []))
    assert [r.check_id for r in report.results] == ["GD101", "GD404"]
    assert report.results[1].finding.status is Status.FAIL


def test_emit_writes_the_report_then_the_tally(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    report = common.judge(fixture("h100-healthy"), REGISTRY)
    target = tmp_path / "r.md"
    common.emit(report, OutputFormat.MARKDOWN, str(target), verbose=False)
    assert target.read_text().startswith("## gpudoctor ")
    assert capsys.readouterr().err == f"gpudoctor: {tally(report)}; report written to {target}\n"
    common.emit(report, OutputFormat.JSON, "-", verbose=False)
    out, err = capsys.readouterr()
    assert out.startswith("{") and err == f"gpudoctor: {tally(report)}\n"


def test_cuda_usable_and_smoke_pending() -> None:
    assert common.cuda_usable(fixture("h100-healthy"))
    assert not common.cuda_usable(fixture("no-driver-cuda-torch"))
    assert not common.cuda_usable(fixture("gpu-less-build-host-cpu-torch"))
    assert common.smoke_pending(fixture("h100-healthy"))


@pytest.mark.parametrize(("name", "device"), [("h100-healthy", "cuda:0"),
                                              ("no-driver-cuda-torch", "cpu")])
def test_with_smoke_trains_where_torch_sees_cuda(monkeypatch: pytest.MonkeyPatch, name: str,
                                                 device: str) -> None:
    ran: list[smoke.SmokeOptions] = []
    outcome = object()

    def run_smoke(options: smoke.SmokeOptions) -> object:
        ran.append(options)
        return outcome

    monkeypatch.setattr(smoke, "run_smoke", run_smoke)
    env = common.with_smoke(fixture(name), "/opt/py/bin/python", timeout=5.0)
    (options,) = ran
    assert (options.device, options.model, options.python) == (device, "lenet",
                                                               "/opt/py/bin/python")
    assert options.timeout == 60.0  # at least a minute, whatever --timeout says
    assert env.smoke is outcome


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_warm_up_loads_the_renderer_of_the_format(monkeypatch: pytest.MonkeyPatch,
                                                  fmt: OutputFormat) -> None:
    module = "gpudoctor.renderers." + ("console" if fmt is OutputFormat.TEXT else fmt.value)
    monkeypatch.delitem(sys.modules, module, raising=False)
    common.warm_up(fmt)
    for t in threading.enumerate():
        if t.name == "gpudoctor-warm-up":
            t.join(30)
    assert module in sys.modules


def test_refuse_with_names_an_option_given_on_the_command_line() -> None:
    app = typer.Typer()

    @app.command()
    def cmd(ctx: typer.Context,
            report: Annotated[str | None, typer.Option("--from-report")] = None,
            timeout: Annotated[float, typer.Option("--timeout", "-t",
                                                   envvar="GPUDOCTOR_TIMEOUT")] = 60.0) -> None:
        if report:
            common.refuse_with(ctx, "--from-report", ("timeout",))

    r = invoke("--from-report", "r.json", "-t", "5", app=app)
    assert r.exit_code == 2
    assert r.stderr == ("gpudoctor: error: --timeout cannot be used with --from-report: it "
                        "applies only when this machine is probed, which --from-report does "
                        "not do (drop one of them)\n")
    assert invoke("--from-report", "r.json", env={"GPUDOCTOR_TIMEOUT": "5"}, app=app
                  ).exit_code == 0
    assert invoke("-t", "5", app=app).exit_code == 0
