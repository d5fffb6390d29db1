"""No string from outside becomes a CI runner command (issue 18, Found 3).

Each command runs as a real process, as a CI step runs it (`GITHUB_ACTIONS=true`, a job summary
file; GitLab's `GITLAB_CI=true` too), over inputs whose every string carries runner commands
(`forgery.RUNNER`: `::error::` and `::add-mask::` behind every line-break code point,
`##[add-mask]`, `##vso[…]`, `##teamcity[…]`, a GitLab section marker, ANSI colours). Then
stdout and stderr are read the way the runners read them (`runner_commands`): the only command
left is gpudoctor's own annotations, and no ESC or CR reaches the log. Every format keeps its
meaning: the JSON still decodes to the hostile string, the JUnit XML parses back to it.

The job summary is rendered with a real Markdown parser (markdown-it, CommonMark + tables):
no tag, link or image comes from a string, and the text reads as the string did.
"""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import runner
from markdown_it import MarkdownIt

from tests.hostile.forgery import ENVS, RUNNER, hostile, runner_commands, write_hostile

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[2]
OWN = re.compile(r"::(error|warning|notice) title=GD\d{3} [a-z0-9-]+::")


def run(args: list[str], tmp: Path, stdin: str | None = None, **extra: str
        ) -> subprocess.CompletedProcess[bytes]:
    env: dict[str, str | None] = dict(
        PYTHONIOENCODING="utf-8", GITHUB_ACTIONS="true", GITLAB_CI="true", CI="true",
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"), COLUMNS="80", NO_COLOR=None, **extra)
    return runner.gpudoctor(*args, env=env, drop=("PYTHONIOENCODING", "LC_"), timeout=120,
                            text=False, input=stdin.encode() if stdin is not None else None)


def assert_inert(p: subprocess.CompletedProcess[bytes], what: str) -> None:
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and p.returncode in (0, 1, 2), (what, p.returncode, err)
    assert runner_commands(out) == [], (what, runner_commands(out)[:2])
    assert [c for c in runner_commands(err) if not OWN.match(c)] == [], (
        what, runner_commands(err)[:2])
    for raw in ("\x1b[0K", "section_start:1:evil\r"):  # GitLab's section marker, raw
        assert raw not in out and raw not in err, what


@pytest.fixture(scope="module")
def snaps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("snaps")
    return {n: write_hostile(ENVS / f"{n}.json", where)
            for n in ("h100-healthy", "pascal-gpu-cu130-torch")}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit", "prometheus"])
def test_check_every_format(snaps: dict[str, Path], tmp_path: Path, fmt: str) -> None:
    for snap in snaps.values():
        p = run(["check", "--from-snapshot", str(snap), "-v", "--format", fmt], tmp_path)
        assert_inert(p, f"check {fmt}")
        out = p.stdout.decode()
        if fmt == "json":  # disarmed with JSON escapes: the same strings come back
            data = json.loads(out)
            assert hostile(0).split(" ")[0] in json.dumps(data)
            assert any("##[add-mask]secret" in f["message"] for f in data["findings"])
        if fmt == "junit":
            text = "".join(ET.fromstring(out).itertext())
            assert "##[add-mask]secret" in text  # XML references: the same text
    # the annotations are there, gpudoctor's own, and carry no runner command in their data
    err = p.stderr.decode()
    assert OWN.search(err)
    assert "##[" not in err


@pytest.mark.slow
def test_npd_and_the_job_summary(snaps: dict[str, Path], tmp_path: Path) -> None:
    snap = snaps["pascal-gpu-cu130-torch"]
    assert_inert(run(["check", "--from-snapshot", str(snap), "--npd"], tmp_path), "npd")
    assert_inert(run(["check", "--from-snapshot", str(snap)], tmp_path), "check")
    summary = (tmp_path / "summary.md").read_text()
    html = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(summary)
    for made in ("<img", "<details", "<a ", "<del>", "<em>em", "<strong>bold", "<code>code",
                 "<!--", "<td> a </td>"):
        assert made not in html, made
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # shown as text, as written
    assert "[click me](https://evil.example/p)" in html
    assert "**bold** _em_ `code` ~~gone~~ $x^2$" in html


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_fleet_diff_explain(snaps: dict[str, Path], tmp_path: Path, fmt: str) -> None:
    reports = tmp_path / "r"
    reports.mkdir()
    for i, snap in enumerate(snaps.values()):
        run(["check", "--from-snapshot", str(snap), "-f", "json", "-o",
             str(reports / f"n{i}.json")], tmp_path)
    (reports / "junk.json").write_text(hostile(2))
    (reports / "##[add-mask]x ::error::y.json").write_text("{}")
    a, b = snaps.values()
    error = "CUDA error: no kernel image is available for execution on the device\n" + (
        hostile(1))
    for args in (["fleet", str(reports), "-v"], ["diff", str(a), str(b)],
                 ["explain", "-", "--from-report", str(b), "-v"]):
        assert_inert(run([*args, "--format", fmt], tmp_path, stdin=error), f"{args[0]} {fmt}")


@pytest.mark.slow
def test_recommend_compat_smoke_install_snapshot(snaps: dict[str, Path], tmp_path: Path
                                                  ) -> None:
    """Commands whose outside strings are a snapshot, or argv / file names echoed in a
    message on stderr."""
    snap = snaps["pascal-gpu-cu130-torch"]
    bad = tmp_path / "##[add-mask]x ::error::y.tgz"
    bad.write_text("not a tarball")
    cases = [["recommend", "--from-snapshot", str(snap), "-v"],
             ["recommend", "--from-snapshot", str(snap), "-f", "json"],
             ["compat", "gpu", RUNNER[0]], ["compat", "cuda", "\n".join(RUNNER)],
             ["smoke-test", "--device", "\n::error::x ##[add-mask]y"],
             ["install-cudnn", "--tarball", str(bad), "--prefix", str(tmp_path), "--dry-run"],
             ["check", "--from-report", str(bad)], ["check", "nope\n::error::x"],
             ["check", "--require", "gpus>=\n::error::x"]]
    for args in cases:
        assert_inert(run(args, tmp_path), " ".join(args[:2]))


def test_the_cli_has_one_writer() -> None:
    """A new command cannot forget the choke point: outside `gpudoctor/cli/output.py` nothing
    under gpudoctor/cli or gpudoctor/renderers writes to a stream itself."""
    writers = re.compile(r"sys\.(stdout|stderr)\.(write|buffer)|(?<![.\w])print\(|typer\.echo|"
                         r"click\.echo|\.write_text\(|os\.write\(")
    found = []
    for path in sorted((ROOT / "gpudoctor").glob("[cr][le]*/*.py")):
        if path.name == "output.py" and path.parent.name == "cli":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if writers.search(line.split("#")[0]):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []
