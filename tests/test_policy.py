"""gpudoctor.policy: one verdict policy (issue 22, item 1).

Every (status, resolved severity, --strict) comes to one verdict, one "fails the run" and one
exit code; nothing outside the policy (and the checks, which set a finding's severity) weighs a
severity again, and fleet counts warnings as the policy does.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from gpudoctor.exitcodes import ExitCode
from gpudoctor.fleet import read_node
from gpudoctor.model import (
    CheckId,
    Finding,
    Layer,
    Report,
    Result,
    Severity,
    Status,
)
from gpudoctor.policy import (
    Verdict,
    advisory,
    counts,
    exit_code,
    failed,
    fails,
    problems,
    verdict,
    verdict_of,
    worst,
)
from gpudoctor.snapshot import loads

ROOT = Path(__file__).resolve().parent.parent
ENVS = ROOT / "tests" / "fixtures" / "envs"


def result(status: Status, severity: Severity, check_id: str = "GD999") -> Result:
    return Result(CheckId(check_id), "slug", "title", Layer.DRIVER, severity,
                  Finding(status, "message", check_id=CheckId(check_id)))


ENV = loads((ENVS / "h100-healthy.json").read_text())


def report(*results: Result) -> Report:
    return Report(environment=ENV, results=results)


# status, resolved severity → verdict; then whether it fails without and with --strict
TABLE = [
    (Status.PASS, Severity.ERROR, Verdict.PASS, False, False),
    (Status.PASS, Severity.WARNING, Verdict.PASS, False, False),
    (Status.PASS, Severity.INFO, Verdict.PASS, False, False),
    (Status.SKIP, Severity.ERROR, Verdict.SKIP, False, False),
    (Status.SKIP, Severity.WARNING, Verdict.SKIP, False, False),
    (Status.SKIP, Severity.INFO, Verdict.SKIP, False, False),
    (Status.WARN, Severity.ERROR, Verdict.WARNING, False, True),
    (Status.WARN, Severity.WARNING, Verdict.WARNING, False, True),
    (Status.WARN, Severity.INFO, Verdict.NOTE, False, False),
    (Status.FAIL, Severity.ERROR, Verdict.FAILURE, True, True),
    (Status.FAIL, Severity.WARNING, Verdict.FAILURE, True, True),
    (Status.FAIL, Severity.INFO, Verdict.FAILURE, True, True),
]


@pytest.mark.parametrize(("status", "severity", "expected", "fails_plain", "fails_strict"),
                         TABLE)
def test_every_status_and_severity(status: Status, severity: Severity, expected: Verdict,
                                   fails_plain: bool, fails_strict: bool) -> None:
    r = result(status, severity)
    assert verdict(r) is expected
    assert verdict_of(status.value, severity.name.lower()) is expected  # as JSON writes them
    assert fails(r, strict=False) is fails_plain and fails(r, strict=True) is fails_strict
    assert exit_code(report(r), strict=False) == (ExitCode.FAILURE if fails_plain else
                                                  ExitCode.OK)
    assert exit_code(report(r), strict=True) == (ExitCode.FAILURE if fails_strict else
                                                 ExitCode.OK)
    assert failed([r]) is (expected is Verdict.FAILURE)


def test_the_table_covers_every_pair() -> None:
    assert {(s, v) for s, v, *_ in TABLE} == {(s, v) for s in Status for v in Severity}


def test_problems_failures_first_then_warnings_under_strict() -> None:
    warning, note = result(Status.WARN, Severity.ERROR, "GD101"), result(Status.WARN,
                                                                        Severity.INFO, "GD102")
    failure = result(Status.FAIL, Severity.ERROR, "GD103")
    assert problems([warning, note, failure], strict=False) == (failure,)
    assert problems([warning, note, failure], strict=True) == (failure, warning)


def test_counts_and_the_worst_of_a_group() -> None:
    rs = [result(Status.PASS, Severity.ERROR), result(Status.WARN, Severity.INFO),
          result(Status.SKIP, Severity.ERROR)]
    assert counts(rs) == {Verdict.PASS: 1, Verdict.NOTE: 1, Verdict.SKIP: 1}
    assert worst(rs) is Verdict.PASS  # a note weighs as nothing
    assert worst([result(Status.WARN, Severity.INFO)]) is Verdict.PASS
    assert worst([result(Status.SKIP, Severity.ERROR)]) is Verdict.SKIP
    assert worst([*rs, result(Status.WARN, Severity.ERROR)]) is Verdict.WARNING


def test_advisory_turns_failures_into_warnings() -> None:
    after = advisory(report(result(Status.FAIL, Severity.ERROR), result(Status.PASS,
                                                                        Severity.ERROR)))
    assert [r.finding.status for r in after.results] == [Status.WARN, Status.PASS]
    assert exit_code(after, strict=False) == ExitCode.OK


def _decisions(path: Path) -> list[str]:
    """Where a module weighs a severity itself: `Severity.INFO` compared, or an `is_info`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Attribute) and o.attr == "INFO" and isinstance(
                    o.value, ast.Name) and o.value.id == "Severity" for o in operands):
                found.append(f"{name}:{node.lineno}")
        if isinstance(node, ast.Name | ast.Attribute | ast.alias) and "is_info" in (
                getattr(node, "id", None), getattr(node, "attr", None),
                getattr(node, "name", None)):
            found.append(f"{name}:{node.lineno}")
    return found


# the explain package is its owner's (issue 22 round): its confirmation rule reads the policy
# once they land; listed here so that the list can only shrink
NOT_YET = {"gpudoctor/explain/core.py"}


@pytest.mark.slow
def test_nothing_else_decides() -> None:
    """Only the policy (and the checks, which give a finding its severity) weigh a severity:
    a renderer or a command that decided note-or-warning itself could disagree with the exit
    code (fleet did: it counted notes as warnings)."""
    package = ROOT / "gpudoctor"
    deciding = [hit for path in sorted(package.rglob("*.py"))
                if path.name != "policy.py" and "checks" not in path.relative_to(package).parts
                and path.relative_to(ROOT).as_posix() not in NOT_YET
                for hit in _decisions(path)]
    assert deciding == []
    for name in NOT_YET:
        assert _decisions(ROOT / name), f"{name} no longer decides: drop it from NOT_YET"


def test_the_scan_finds_a_renderer_deciding(tmp_path: Path) -> None:
    forged = tmp_path / "r.py"
    forged.write_text("def f(r):\n    return r.severity is Severity.INFO\n")
    assert _decisions(forged) == [f"{forged}:2"]
    forged.write_text("from gpudoctor.renderers.interface import is_info\n")
    assert _decisions(forged)


def test_fleet_counts_no_note_as_a_warning(tmp_path: Path) -> None:
    """A node whose only non-pass result is a note (GD101 on a machine with no GPU) is not
    warned, from a check report's JSON and from a bare snapshot alike: the exit code of
    `check --strict` on it is 0. Before, fleet counted every WARN (notes too) as a warning."""
    snapshot = (ENVS / "gpu-less-build-host-cpu-torch.json").read_text()
    node = read_node("host.json", snapshot)
    assert node.failed == () and node.warned == (), node
    data = json.loads(snapshot)
    data["findings"] = [
        {"id": "GD101", "status": "warn", "severity": "info"},
        {"id": "GD102", "status": "warn", "severity": "warning"},
        {"id": "GD103", "status": "warn", "severity": "bogus"},  # hand-edited: weighs as a warn
        {"id": "GD104", "status": "fail", "severity": "info"},
    ]
    node = read_node("host.json", json.dumps(data))
    assert node.warned == ("GD102", "GD103") and node.failed == ("GD104",)
