"""Every renderer renders every recorded environment; formats are exhaustive."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Status
from gpudoctor.renderers import to_renderer
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.snapshot import loads
from tests.renderers.render_kit import FIXTURES, console, report


@pytest.mark.parametrize("fmt", list(OutputFormat))
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_every_format_renders_every_fixture(fmt: OutputFormat, path: Path) -> None:
    r = run_checks(loads(path.read_text()), load_tables())
    text = to_renderer(fmt, console(), verbose=True).render(r)
    assert text.strip()
    for result in r.results:
        assert result.check_id in text


def test_text_shows_three_cuda_versions_labelled() -> None:
    text = to_renderer(OutputFormat.TEXT, console()).render(report("old-driver-new-torch"))
    assert "Driver (max CUDA it runs)" in text and "supports CUDA ≤ 12.2" in text
    assert "PyTorch (CUDA it was built with)" in text and "built with CUDA 13.0" in text
    assert "CUDA toolkit (nvcc, for building)" in text and "12.2 at /usr/local/cuda" in text
    assert "→ fix:" in text
    assert text.splitlines()[-1].strip()  # the tally is the CLI's stderr line, not the report's


def test_text_verbose_shows_evidence_and_skip_reasons() -> None:
    r = report("driver-lib-mismatch")
    quiet = to_renderer(OutputFormat.TEXT, console()).render(r)
    loud = to_renderer(OutputFormat.TEXT, console(), verbose=True).render(r)
    assert "· NVML:" in loud and "· NVML:" not in quiet
    skip = next(x for x in r.results if x.finding.status is Status.SKIP)
    assert skip.finding.message in quiet


# ------------------------------------------------------------------- one render dispatch
# (issue 22 item 1): one OutputFormat; each command declares its formats (its --format
# choices); every command renders through `renderers.render`.

ROOT = Path(__file__).resolve().parents[2]
ENVS = FIXTURES[0].parent


def _leaves() -> dict[str, Any]:
    """Every runnable command of the app, by its full name ('check', 'compat cuda', …)."""
    import typer

    from gpudoctor.cli import app

    out: dict[str, Any] = {}

    def walk(cmd: Any, name: str) -> None:
        for sub_name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, f"{name} {sub_name}".strip())
        if not getattr(cmd, "commands", None):
            out[name] = cmd

    walk(typer.main.get_command(app), "")
    return out


def declared() -> dict[str, tuple[OutputFormat, ...]]:
    """Each command's formats, as its --format option offers them."""
    out = {}
    for name, cmd in _leaves().items():
        option = next((p for p in cmd.params if "--format" in p.opts), None)
        if option is not None:
            out[name] = tuple(option.type.choices)
    return out


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[list[str], Any]]]:
    """A run of each command that renders without this machine's hardware: its arguments
    and environment (several runs where one command writes several documents)."""
    tmp = tmp_path_factory.mktemp("samples")
    (tmp / "prefix").mkdir()
    garbage = tmp / "cudnn.tgz"
    garbage.write_bytes(b"not a tarball")
    # a Python >= 3.8 without torch (no site-packages): the smoke test fails fast and renders
    no_torch = tmp / "python"
    no_torch.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    no_torch.chmod(0o755)
    healthy = str(ENVS / "h100-healthy.json")
    rank = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29517"}
    smoke = ["smoke-test", "--device", "cpu", "--python", str(no_torch)]
    runs: dict[str, list[tuple[list[str], Any]]] = {
        "check": [(["check", "--from-snapshot", healthy], None)],
        "checks": [(["checks"], None), (["checks", "GD404"], None)],
        "recommend": [(["recommend", "--from-snapshot", healthy], None)],
        "explain": [(["explain", "--no-probe",
                      "no kernel image is available for execution on the device"], None)],
        "diff": [(["diff", healthy, str(FIXTURES[0])], None)],
        "fleet": [(["fleet", str(ENVS)], None)],
        "smoke-test": [(smoke, None), ([*smoke, "--distributed"], rank)],
        "install-cudnn": [(["install-cudnn", "--tarball", str(garbage), "--prefix",
                            str(tmp / "prefix")], None)],
        "uninstall-cudnn": [(["uninstall-cudnn", "--prefix", str(tmp / "prefix")], None)],
    }
    for kind, query in (("cuda", "12.4"), ("cudnn", "8.9.7"), ("driver", "535.104.05"),
                        ("torch", "2.5.1"), ("gpu", "sm_86")):
        runs[f"compat {kind}"] = [(["compat", kind, query], None)]
    return runs


def test_every_command_declares_formats_and_has_a_sample(
        samples: dict[str, list[tuple[list[str], Any]]]) -> None:
    formats = declared()
    assert set(formats) == set(samples), "a command with --format needs a sample run here"
    for name, own in formats.items():
        assert own and own[0] is OutputFormat.TEXT, name  # text first: the default
        assert len(set(own)) == len(own) and all(isinstance(f, OutputFormat) for f in own)
    assert formats["check"] == tuple(OutputFormat)


def _pairs() -> list[tuple[str, OutputFormat]]:
    return [(name, fmt) for name, own in sorted(declared().items()) for fmt in own]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("name", "fmt"), _pairs(), ids=lambda x: str(x).replace(" ", "-"))
def test_every_declared_pair_renders(samples: dict[str, list[tuple[list[str], Any]]],
                                     name: str, fmt: OutputFormat) -> None:
    from runner import invoke

    for args, env in samples[name]:
        r = invoke(*args, "--format", fmt.value, env=env)
        assert r.exit_code in (0, 1), (args, r.output)
        assert r.stdout.strip(), (args, r.stderr)
        if fmt is OutputFormat.JSON:
            assert isinstance(json.loads(r.stdout), dict | list)
        elif fmt is OutputFormat.JUNIT:
            assert ET.fromstring(r.stdout).tag == "testsuite"
        elif fmt is OutputFormat.PROMETHEUS:
            assert r.stdout.startswith("# HELP ")


def _undeclared() -> list[tuple[str, str]]:
    names = [f.value for f in OutputFormat]
    return [(name, fmt) for name, own in sorted(declared().items())
            for fmt in (*(n for n in names if OutputFormat(n) not in own), "yaml", "")]


@pytest.mark.parametrize(("name", "fmt"), _undeclared(),
                         ids=lambda x: str(x).replace(" ", "-") or "empty")
def test_an_undeclared_format_is_a_usage_error(samples: dict[str, list[tuple[list[str], Any]]],
                                               name: str, fmt: str) -> None:
    from runner import invoke

    args, env = samples[name][0]
    r = invoke(*args, "--format", fmt, env=env)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    own = ", ".join(f.value for f in declared()[name])
    what = "a format this command writes" if fmt in {f.value for f in OutputFormat} else "a format"
    assert r.stderr.splitlines() == [
        f"gpudoctor: error: invalid value for --format: {fmt!r} is not {what} ({own})"]


def test_the_dispatch_covers_every_format_and_runs_only_the_one_asked_for() -> None:
    from gpudoctor.renderers import Renderings, UnsupportedFormat, render

    ran: list[str] = []

    def renderer(fmt: OutputFormat) -> Callable[[], str]:
        def run() -> str:
            ran.append(fmt.value)
            return f"<{fmt.value}>"
        return run

    # every format is a field of Renderings, and `render` reaches each (a format added to the
    # enum without its field fails here; one without its case in the dispatch, assert_never)
    every = Renderings(**{f.value: renderer(f) for f in OutputFormat})
    assert every.formats == tuple(OutputFormat)
    for fmt in OutputFormat:
        ran.clear()
        assert render(fmt, every) == f"<{fmt.value}>"
        assert ran == [fmt.value]
    some = Renderings(text=renderer(OutputFormat.TEXT), json=renderer(OutputFormat.JSON))
    assert some.formats == (OutputFormat.TEXT, OutputFormat.JSON)
    with pytest.raises(UnsupportedFormat, match="no markdown renderer"):
        render(OutputFormat.MARKDOWN, some)
    with pytest.raises(AssertionError, match="unhandled value"):
        render("yaml", every)  # type: ignore[arg-type]


def test_each_command_module_declares_its_formats_and_renders_through_the_dispatch() -> None:
    """Each command module names its formats once (FORMATS: its --format choices) and hands
    its document to `renderers.render` (check through `common.emit`); the branches that did
    the picking before (`fmt is TextOrJson.JSON`, `render_as`, the catalogue's if/elif over
    CatalogFormat) are gone."""
    from importlib import import_module

    from gpudoctor.cli import COMMANDS

    formats = declared()
    for name, (module, _, kind) in COMMANDS.items():
        mod = import_module(f"gpudoctor.cli.{module}")
        leaves = [n for n in formats if n == name or (kind == "group" and
                                                       n.startswith(f"{name} "))]
        if not leaves:
            assert not hasattr(mod, "FORMATS"), name
            continue
        for leaf in leaves:
            assert formats[leaf] == mod.FORMATS, leaf
        source = (ROOT / "gpudoctor" / "cli" / f"{module}.py").read_text(encoding="utf-8")
        assert "render(fmt, " in source or "common.emit(" in source, module
        for gone in ("render_as", "TextOrJson", "CatalogFormat", "to_renderer"):
            assert gone not in source, (module, gone)
