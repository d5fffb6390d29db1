"""`gpudoctor.fleet`: node reports written by the real `check --format json`, read and
aggregated; then the command over the same reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import runner
from runner import invoke

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.fleet import FACTS, aggregate, read_node
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.snapshot import dumps, loads

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[1]
ENVS = ROOT / "tests" / "fixtures" / "envs"


def report(fixture: str, hostname: str | None, driver: str | None = None) -> str:
    """A `check --format json` report of a recorded machine, renamed and re-versioned."""
    data = json.loads((ENVS / f"{fixture}.json").read_text())
    if hostname is not None:
        data["environment"]["host"]["hostname"] = hostname
    if driver is not None:
        data["environment"]["nvml"]["driver_version"] = driver
    env = loads(json.dumps(data))
    return JsonRenderer().render(run_checks(env, load_tables(), REGISTRY))


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    d = tmp_path / "reports"
    d.mkdir()
    for i in range(5):
        (d / f"n{i}.json").write_text(report("h100-healthy", f"gpu{i}"))
    (d / "n5.json").write_text(report("h100-healthy", "gpu5", driver="570.124.06"))
    (d / "n6.json").write_text(report("old-driver-new-torch", "gpu6"))
    (d / "lost.json").write_text(report("lost-gpu", None))  # no host name: the file stem
    return d


@pytest.mark.slow
def test_majority_deviants_and_failures(reports: Path) -> None:
    nodes = [read_node(str(p), p.read_text()) for p in sorted(reports.iterdir())]
    view = aggregate(nodes)
    assert [n.name for n in view.nodes] == [*(f"gpu{i}" for i in range(7)), "lost"]
    driver = next(s for s in view.summaries if s.fact == "driver")
    healthy = json.loads((ENVS / "h100-healthy.json").read_text())["environment"]
    assert driver.majority == healthy["nvml"]["driver_version"]
    assert driver.count == 6  # gpu0-4 and lost
    assert dict(driver.deviants) == {"570.124.06": ("gpu5",), "535.104.05": ("gpu6",)}
    failing = {n.name: n.failed for n in view.failing}
    expected_gpu6 = tuple(r.check_id for r in run_checks(
        loads((ENVS / "old-driver-new-torch.json").read_text()), load_tables(), REGISTRY
    ).results if r.finding.status.value == "fail")
    assert failing == {"gpu6": expected_gpu6, "lost": ("GD102",)}
    assert set(view.deviating) >= {"gpu5", "gpu6", "lost"}
    assert not view.ok


def test_snapshot_without_findings_is_judged(tmp_path: Path) -> None:
    env = loads((ENVS / "lost-gpu.json").read_text())
    (tmp_path / "snap.json").write_text(dumps(env))
    node = read_node("snap.json", (tmp_path / "snap.json").read_text())
    assert node.failed == ("GD102",) and node.judged


ODD_VALUES = (None, 5, True, "x", [], {}, [[["a"], "b"]], {"unavailable": "error"}, [{"x": 1}])


@pytest.mark.slow
def test_odd_values_anywhere_never_crash_the_view() -> None:
    """Each field a key fact is read from, replaced by values of every other shape: the node
    is read (or refused with a NodeError), aggregated and rendered, never a crash."""
    from rich.console import Console

    from gpudoctor.fleet import NodeError
    from gpudoctor.renderers.fleet import render_json, render_markdown, render_text

    good = json.loads(report("h100-healthy", "gpu0"))
    env = good["environment"]
    parts = ("host", "nvml", "libcuda", "torch", "toolkits")
    paths = [(k,) for k in env] + [(k, sub) for k in parts
                                   if isinstance(env[k], dict) for sub in env[k]]
    paths += [("torch", "runtime", k) for k in env["torch"]["runtime"]]
    paths += [("torch", "static", k) for k in env["torch"]["static"]]
    read = 0
    for path in paths:
        for odd in ODD_VALUES:
            data = json.loads(json.dumps(good))
            target = data["environment"]
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = odd
            try:
                node = read_node("n.json", json.dumps(data))
            except NodeError:
                continue
            view = aggregate([node])
            render_text(view, Console(width=100, color_system=None), verbose=True)
            json.loads(render_json(view))
            render_markdown(view)
            read += 1
    assert read > len(paths)  # most variants are read: the facts degrade to text


def test_a_version_1_report_shows_its_toolkit_like_the_current_one() -> None:
    """fleet reads raw JSON: a schema_version 1 document names the toolkits `cuda`, a
    version 2 or 3 one `toolkits`; both show the toolkit in use."""
    text = (ENVS / "h100-healthy.json").read_text()
    v1 = json.loads(text)
    assert v1["schema_version"] == 1 and "cuda" in v1["environment"]
    v2 = json.loads(dumps(loads(text)))
    assert v2["schema_version"] == 3 and "cuda" not in v2["environment"]
    old, new = read_node("v1.json", text), read_node("v2.json", json.dumps(v2))
    assert old.key_facts == new.key_facts
    assert old.key_facts[FACTS.index("toolkit")] == "13.0"


# --------------------------------------------------------------------------- the command
# (`gpudoctor.cli.fleet` end to end: over the same reports)


@pytest.mark.slow
def test_cli_json_names_unreadable_and_missing_reports(reports: Path) -> None:
    (reports / "broken.json").write_text('{"schema_version": 1, "environ')
    (reports / "notes.txt").write_text("not a report, not *.json: ignored")
    r = invoke("fleet", str(reports), str(reports / "gone.json"), "-f", "json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    assert {k: data["summary"][k] for k in ("nodes", "failing", "unreadable")} == {
        "nodes": 8, "failing": 2, "unreadable": 2}
    reasons = {Path(u["path"]).name: u["reason"] for u in data["unreadable"]}
    assert reasons["gone.json"] == "no such file"
    assert reasons["broken.json"].startswith("not JSON")
    assert set(data["nodes"][0]["facts"]) == set(FACTS)
    assert "2 unreadable" in r.stderr


@pytest.mark.slow
def test_healthy_fleet_exits_0_and_text_names_deviants(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"n{i}.json").write_text(report("h100-healthy", f"gpu{i}"))
    (tmp_path / "odd.json").write_text(report("h100-healthy", "odd", driver="570.124.06"))
    r = invoke("fleet", str(tmp_path), env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output  # deviating is not failing
    assert "≠ 570.124.06: odd" in r.stdout
    assert "(3 of 4)" in r.stdout
    r = invoke("fleet", str(tmp_path), "-v", "-f", "text", env={"COLUMNS": "200"})
    assert r.stdout.splitlines()[0].split()[:2] == ["node", "driver"]
    r = invoke("fleet", *map(str, sorted(tmp_path.iterdir())), "-f", "markdown")
    assert "| driver |" in r.stdout and "<details>" in r.stdout and "odd" in r.stdout


def test_no_report_at_all_is_a_usage_error(tmp_path: Path) -> None:
    r = invoke("fleet", str(tmp_path))
    assert r.exit_code == 2
    assert "no report found" in r.stderr


@pytest.mark.slow
def test_reports_written_by_check_on_this_machine(tmp_path: Path) -> None:
    """The recipe itself: `check --format json -o reports/$(hostname).json`, then fleet."""
    out = tmp_path / "reports"
    out.mkdir()
    p = runner.gpudoctor("check", "--no-torch", "--format", "json", "-o", str(out / "this.json"),
                         timeout=120)
    assert p.returncode in (0, 1), p.stderr
    host = json.loads((out / "this.json").read_text())["environment"]["host"]["hostname"]
    p = runner.gpudoctor("fleet", str(out), "-f", "json", timeout=120)
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(p.stdout)["nodes"][0]["node"] == host
