"""The corpus of real reports (tests/fixtures/reports/) replayed: every file, as posted by
someone else, is read through `read_reports`, judged by every check, and compared with the
verdicts its `index.toml` entry expects. The README states the figure; this test keeps it true.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import runner

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from gpudoctor.checks import run_checks
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import Status
from gpudoctor.reports.read import ReportError, read_reports

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures" / "reports"
INDEX: list[dict[str, Any]] = tomllib.loads(
    (REPORTS / "index.toml").read_text(encoding="utf-8"))["report"]
BY_FILE = {e["file"]: e for e in INDEX}
FIELDS = {"file", "source", "kinds", "summary", "healthy", "expect_fail", "expect_pass", "fault",
          "notes", "recognised"}


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def _text(entry: dict[str, Any]) -> str:
    return (REPORTS / str(entry["file"])).read_text(encoding="utf-8")


def _verdicts(entry: dict[str, Any], tables: Tables) -> dict[str, tuple[Status, str]]:
    env = read_reports([(entry["file"], _text(entry))])
    report = run_checks(env, tables)
    return {str(r.check_id): (r.finding.status, r.finding.message) for r in report.results}


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_report_is_judged_as_expected(entry: dict[str, Any], tables: Tables) -> None:
    if not entry.get("recognised", True):
        with pytest.raises(ReportError, match="no report recognised"):
            read_reports([(entry["file"], _text(entry))])
        assert entry["healthy"] is False and not entry["expect_fail"] and not entry["expect_pass"]
        return
    found = _verdicts(entry, tables)
    wrong = []
    if entry["healthy"]:
        wrong += [f"{cid} FAILs on a healthy report: {msg}"
                  for cid, (status, msg) in found.items() if status is Status.FAIL]
    for cid in entry["expect_fail"]:
        status, msg = found[cid]
        if status is not Status.FAIL:
            wrong.append(f"{cid} must FAIL, is {status}: {msg}")
    for cid in entry["expect_pass"]:
        status, msg = found[cid]
        if status is not Status.PASS:
            wrong.append(f"{cid} must PASS, is {status}: {msg}")
    assert not wrong, "\n".join(wrong)


def test_index_and_folder_agree() -> None:
    files = {p.name for p in REPORTS.iterdir() if p.name not in ("index.toml", "README.md")}
    assert files == set(BY_FILE), (sorted(files - set(BY_FILE)), sorted(set(BY_FILE) - files))
    assert len(BY_FILE) == len(INDEX), "a file is in the index twice"
    for e in INDEX:
        assert set(e) <= FIELDS and FIELDS - {"recognised"} <= set(e), e["file"]
        assert e["source"].startswith("https://github.com/"), e["file"]
        assert not set(e["expect_fail"]) & set(e["expect_pass"]), e["file"]
        assert not (e["healthy"] and e["expect_fail"]), e["file"]
        assert all(re.fullmatch(r"GD\d{3}", c) for c in e["expect_fail"] + e["expect_pass"])


def test_readme_states_the_figure() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = r"Tested on (\d+) real reports from public GitHub issues \(`?tests/fixtures/reports/`?\): (\d+) of (\d+) judged as expected"  # noqa: E501
    m = re.search(said.replace(" ", r"\s+"), readme)
    assert m, "README.md must state the corpus figure"
    stated, right, of = (int(x) for x in m.groups())
    # every entry is judged as expected (test_report_is_judged_as_expected, one per entry)
    assert stated == right == of == len(INDEX)


# --------------------------------------------------------------------------- the CLI


def gpudoctor(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return runner.gpudoctor(*args, input=stdin, timeout=120)


CLI_CASES = [
    ("collect_env-h100-cu126-healthy.txt", 0),
    ("nvidia_smi_xml-a10g-515-healthy.xml", 0),
    ("collect_env-titanxp-cu101-driver410-too-old.txt", 1),
    ("issue_body-nvml-mismatch-550.144-ci-runner.md", 1),
    ("issue_body-rtx3090-sm86-warning-only.md", 1),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), CLI_CASES, ids=[n for n, _ in CLI_CASES])
def test_cli_exit_code(name: str, code: int) -> None:
    assert BY_FILE[name]["healthy"] is (code == 0) and bool(BY_FILE[name]["expect_fail"]) is (
        code == 1)
    p = gpudoctor("check", "--from-report", str(REPORTS / name))
    assert p.returncode == code, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and name in p.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), CLI_CASES[1:3], ids=[n for n, _ in CLI_CASES[1:3]])
def test_cli_reads_stdin(name: str, code: int) -> None:
    p = gpudoctor("check", "--from-report", "-", stdin=(REPORTS / name).read_text("utf-8"))
    assert p.returncode == code, p.stdout + p.stderr
    assert "in stdin" in p.stdout and "Traceback" not in p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("entry", [e for e in INDEX if not e.get("recognised", True)],
                         ids=lambda e: e["file"])
def test_cli_unrecognised_report_exits_2(entry: dict[str, Any]) -> None:
    path = REPORTS / entry["file"]
    p = gpudoctor("check", "--from-report", str(path))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "no report recognised" in lines[0]
