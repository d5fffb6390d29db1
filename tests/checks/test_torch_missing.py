"""No torch in the interpreter gpudoctor probed: GD401 names that interpreter in its install line
(`/path/to/python -m pip install torch==...`, pasteable as is) and says how to point gpudoctor at
another environment. A real venv without torch, driven through the real CLI; a snapshot of an
older gpudoctor (a bare `Unavailable` for torch) is judged the same.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import runner

from gpudoctor import views as V
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.checks.pytorch import ELSEWHERE
from gpudoctor.compat import Tables, load_tables
from gpudoctor.diff import diff_environments, stack_facts
from gpudoctor.fleet import key_facts
from gpudoctor.model import Environment, Reason, Status, TorchFacts, Unavailable
from gpudoctor.renderers.interface import cuda_versions
from gpudoctor.requirements import parse_requirements
from gpudoctor.snapshot import dumps, loads, to_data

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

REPO_ROOT = Path(__file__).resolve().parents[2]
STANDS_FOR = "stands for"  # the clause of a line whose interpreter gpudoctor could not name


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh venv's interpreter: no pip, no torch."""
    venv = tmp_path_factory.mktemp("no-torch") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=60)
    return str(venv / "bin" / "python")


def gpudoctor(*args: str, nvml: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a new process; with `nvml`, the fake driver library is loaded (a GPU)."""
    return runner.gpudoctor(*args, env={"LD_LIBRARY_PATH": str(nvml)} if nvml else None,
                            timeout=120)


def gd401(report: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in report["findings"] if f["id"] == "GD401")


@pytest.mark.slow
def test_json_fix_runs_pip_through_the_probed_interpreter(bare_python: str,
                                                          fake_nvml: Path) -> None:
    p = gpudoctor("check", "--python", bare_python, "--format", "json", "--only", "GD401",
                  nvml=fake_nvml)
    assert p.returncode == 0, p.stderr  # a warning: torch is missing where a GPU is
    report = json.loads(p.stdout)
    f = gd401(report)
    assert f["status"] == "warn", f
    assert f["fix"].startswith(f"{bare_python} -m pip install torch=="), f["fix"]
    assert STANDS_FOR not in f["fix"] and "\n" not in f["fix"]
    assert f["message"].startswith(f"PyTorch is not installed for {bare_python}")
    assert "--python /path/to/that/env/bin/python" in f["message"]
    torch = report["environment"]["torch"]
    assert torch["python"] == bare_python
    assert torch["static"]["unavailable"] == torch["runtime"]["unavailable"] == "not-installed"


@pytest.mark.slow
def test_text_fix_line_pastes_as_is(bare_python: str, fake_nvml: Path) -> None:
    p = gpudoctor("check", "--python", bare_python, "--only", "GD401", nvml=fake_nvml)
    assert p.returncode == 0, p.stderr
    fixes = [ln.strip() for ln in p.stdout.splitlines() if ln.strip().startswith("→ fix:")]
    assert len(fixes) == 1, p.stdout
    assert fixes[0].startswith(f"→ fix: {bare_python} -m pip install torch=="), fixes
    assert STANDS_FOR not in p.stdout and "Traceback" not in p.stderr
    assert f"PyTorch is not installed for {bare_python}" in p.stdout


@pytest.mark.slow
def test_this_machine_as_it_is(bare_python: str) -> None:
    """No fake driver: GD401 skips, notes or warns by what this machine has (a toolkit, a GPU);
    whatever it says names the interpreter, and any install line runs through it."""
    p = gpudoctor("check", "--python", bare_python, "--format", "json", "--only", "GD401")
    assert p.returncode == 0, p.stderr
    f = gd401(json.loads(p.stdout))
    assert f["status"] in ("skip", "warn"), f
    assert f["message"].startswith(f"PyTorch is not installed for {bare_python}")
    assert ELSEWHERE in f["message"]
    if f["fix"] is not None:
        assert f["fix"].startswith(f"{bare_python} -m pip install torch=="), f["fix"]
        assert STANDS_FOR not in f["fix"]


# --------------------------------------------------------------------------- the old shape


@pytest.fixture(scope="module")
def snapshot(bare_python: str, fake_nvml: Path) -> Environment:
    """A real snapshot of this machine with the fake driver and the venv without torch."""
    p = gpudoctor("snapshot", "--python", bare_python, nvml=fake_nvml)
    assert p.returncode == 0, p.stderr
    return loads(p.stdout)


def old_shape(env: Environment) -> Environment:
    """The same machine as an older gpudoctor recorded it: torch a bare Unavailable."""
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.static, Unavailable)
    data = json.loads(dumps(env))
    data["environment"]["torch"] = to_data(env.torch.static)
    return loads(json.dumps(data))


@pytest.mark.slow
def test_the_new_shape_round_trips(snapshot: Environment) -> None:
    assert loads(dumps(snapshot)) == snapshot
    missing = V.torch_missing(snapshot)
    assert missing is not None and missing.reason is Reason.NOT_INSTALLED
    assert V.torch_facts(snapshot) is None and V.torch_version(snapshot) is None


@pytest.mark.slow
def test_old_snapshot_is_judged_the_same(snapshot: Environment, tables: Tables) -> None:
    old = old_shape(snapshot)
    assert isinstance(old.torch, Unavailable) and V.torch_missing(old) == old.torch
    new_report, old_report = (run_checks(e, tables, REGISTRY) for e in (snapshot, old))
    assert [(r.check_id, r.finding.status) for r in old_report.results] == [
        (r.check_id, r.finding.status) for r in new_report.results]
    d = diff_environments(old, snapshot, tables)
    assert not d.facts and not d.verdicts  # the same facts shown, the same verdicts
    assert list(stack_facts(old)) == list(stack_facts(snapshot))
    assert cuda_versions(old) == cuda_versions(snapshot)
    raw_new, raw_old = (json.loads(dumps(e))["environment"] for e in (snapshot, old))
    assert key_facts(raw_old) == key_facts(raw_new)  # `fleet` sees no difference either


def test_old_snapshot_line_keeps_the_unnamed_interpreter(snapshot: Environment,
                                                         tables: Tables) -> None:
    """An older snapshot does not name the interpreter: the line says `python` and why."""
    got = {r.check_id: r.finding for r in run_checks(old_shape(snapshot), tables, REGISTRY).results}
    fix = got["GD401"].fix or ""
    assert fix.startswith("python -m pip install torch==") and STANDS_FOR in fix
    assert got["GD401"].status is Status.WARN
    assert ELSEWHERE not in got["GD401"].message  # nothing says which interpreter was probed


def test_missing_torch_reads_alike_for_every_check_that_reads_torch(snapshot: Environment,
                                                                    tables: Tables) -> None:
    """The checks that read torch say the same in both shapes (GD309 reads `torch_missing`)."""
    reqs = parse_requirements(["torch>=2.4"])  # GD605 judges only with a requirement
    new, old = (dataclasses.replace(e, requirements=reqs) for e in (snapshot, old_shape(snapshot)))
    for cid in ("GD309", "GD402", "GD403", "GD406", "GD605"):
        check = next(c for c in REGISTRY if c.id == cid)
        a, b = check.run(old, tables), check.run(new, tables)
        assert (a.status, a.message) == (b.status, b.message), cid
    gd605 = next(c for c in REGISTRY if c.id == "GD605").run(new, tables)
    assert gd605.status is Status.FAIL and "PyTorch is not installed for" in gd605.message
