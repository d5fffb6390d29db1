"""`check`'s text report read at a glance (issue 22, item 5), and in full with `-v`.

By default a layer shows its failures, warnings and notes in full (fix lines too), its passes
as a count in the heading when nothing else of it is shown, its skips as one line grouped by
cause, and each long list in a message cut to its first items and a count; `-v` shows every
check, its evidence and every list whole. The recorded machine is this project's development VM
(no GPU, no driver, torch 2.14.1+cu130, CUDA 13.0 toolkit; tests/fixtures/glance/README.md).
"""

from __future__ import annotations

import copy
import io
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import runner
from rich.console import Console

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Finding, Layer, Report, Result, Severity, Status
from gpudoctor.policy import Verdict, verdict
from gpudoctor.renderers.console import (
    CONTINUED,
    MORE,
    ConsoleRenderer,
    cause,
    cut_lists,
    id_ranges,
    skip_summary,
)
from gpudoctor.renderers.json import JsonRenderer
from gpudoctor.snapshot import loads
from tests.hostile.forgery import FIX, forged

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VM = FIXTURES / "glance" / "vm-no-driver-cu130.json"
ENVS = sorted((FIXTURES / "envs").glob("*.json"))
TABLES = load_tables()


def con(width: int = 100) -> Console:
    """The CLI's console when stdout is not a terminal: 100 columns, no colour."""
    return Console(file=io.StringIO(), width=width, no_color=True, legacy_windows=False)


def render(report: Report, verbose: bool = False, width: int = 100) -> str:
    return ConsoleRenderer(con(width), verbose).render(report)


@cache
def judged(path: Path) -> Report:
    return run_checks(loads(path.read_text(encoding="utf-8")), TABLES)


def stressed(diverse: bool) -> Report:
    """A machine with 64 GPUs, 40 cuDNN copies and 1,000 LD_LIBRARY_PATH entries that do not
    exist; `diverse`: 64 different GPU names torch cannot run, and 40 cuDNN headers each of
    another version (long lists in failure messages)."""
    doc = json.loads((FIXTURES / "envs" / "h100-healthy.json").read_text(encoding="utf-8"))
    env = doc["environment"]
    gpu = env["nvml"]["gpus"][0]
    env["nvml"]["gpus"] = [dict(copy.deepcopy(gpu), index=i, uuid=f"GPU-{i:08d}-0000",
                                pci_bus_id=f"00000000:{i:02x}:00.0",
                                **({"name": f"NVIDIA Tesla P100 no. {i}",
                                    "compute_capability": "6.0"} if diverse else {}))
                           for i in range(64)]
    missing = [f"/nope/{i}" for i in range(1000)]
    env["host"]["env"] = [["LD_LIBRARY_PATH", ":".join(missing)]]
    env["host"]["ld_library_path_missing"] = missing
    vm = json.loads(VM.read_text(encoding="utf-8"))["environment"]["cudnn"]
    copies = []
    for i in range(40):
        one: dict[str, Any] = json.loads(json.dumps(vm["installs"][0]).replace(
            "/work/main/.venv/lib/python3.11/site-packages", f"/opt/env{i}/site-packages"))
        if diverse:
            one["header_version"] = f"9.{i}.0"
        copies.append(one)
    env["cudnn"] = dict(vm, installs=copies)
    return run_checks(loads(json.dumps(doc)), TABLES)


def unwrapped(text: str) -> str:
    """`text` with each line wrapped at the console's width joined again."""
    return re.sub(rf" *\n *{CONTINUED} ", " ", text)


def ids_in(summary: str) -> list[str]:
    """The check ids a skip summary names, its ranges expanded."""
    out = []
    for first, last in re.findall(r"(GD\d+)(?:-(GD\d+))?", summary):
        lo, hi = int(first[2:]), int((last or first)[2:])
        out += [f"GD{n}" for n in range(lo, hi + 1)]
    return out


def result(check_id: str, status: Status, message: str, layer: Layer = Layer.DRIVER,
           fix: str | None = None) -> Result:
    return Result(check_id, "slug", "a title", layer, Severity.ERROR,
                  Finding(status, message, fix, (("key", "value"),)))


# ------------------------------------------------------------------------------ at a glance


def test_this_vm_fits_in_30_lines() -> None:
    """The recorded VM: 111 lines before this change, at most 30 now; -v still shows all."""
    report = judged(VM)
    quiet, loud = render(report), render(report, verbose=True)
    assert len(quiet.splitlines()) <= 30, quiet
    assert len(loud.splitlines()) > 100
    assert "[✓] cuDNN: 8 passed (GD302-GD307, GD309, GD310)\n" in quiet
    # a layer's skips on one line: the largest cause, the others counted
    assert "\n    – 12 skipped: the NVIDIA driver's libnvidia-ml.so.1 was not found; 3 other " \
        "causes\n" in quiet, quiet
    assert "[–] Requirements: 7 skipped: no gpus, driver, cuda, cudnn, torch, arch or gpu-memory" \
        " requirement" in quiet
    assert quiet.splitlines()[-1] == MORE


@pytest.mark.slow
def test_failures_warnings_and_notes_print_in_full_with_their_fix() -> None:
    """Every result that is not a pass or a skip keeps its line and its fix line, on every
    recorded machine; every skipped check is named in its layer's summary."""
    for path in [*ENVS, VM]:
        report = judged(path)
        quiet = render(report, width=10_000)
        for r in report.results:
            v = verdict(r)
            if v in (Verdict.FAILURE, Verdict.WARNING, Verdict.NOTE):
                assert f" {r.check_id} {r.title}: " in quiet, (path.name, r.check_id)
                if r.finding.fix and r.finding.status in (Status.FAIL, Status.WARN):
                    assert f"→ fix: {r.finding.fix}" in quiet, (path.name, r.check_id)
        summaries = [line for line in quiet.splitlines() if " skipped: " in line]
        named = [i for line in summaries for i in ids_in(line.partition(" skipped: ")[2])]
        skipped = [r.check_id for r in report.results if verdict(r) is Verdict.SKIP]
        assert sorted(named) == sorted(skipped), path.name
        # every check is named: on its own line, in its layer's pass count or skip line
        counted = [i for line in quiet.splitlines() if re.match(r"\[✓\] .*: \d+ passed \(", line)
                   for i in ids_in(line.partition(" passed ")[2])]
        own = re.findall(r"^    [✓✗!i] (GD\d+) ", quiet, re.M)
        assert sorted(counted + own + named) == sorted(r.check_id for r in report.results), \
            path.name


def test_passes_collapse_only_where_nothing_else_of_the_layer_shows() -> None:
    report = judged(FIXTURES / "envs" / "pascal-gpu-cu130-torch.json")
    quiet = render(report)
    assert "[✓] Environment: 6 passed (GD501-GD504, GD506, GD507)\n" in quiet  # nothing else
    assert "[✗] CUDA\n" in quiet  # a failure: each pass beside it is shown
    assert "✓ GD201 CUDA toolkit found:" in quiet


def test_a_few_passes_and_what_the_user_required_show_one_by_one() -> None:
    """`check GD403` shows GD403's message, not '1 passed'; a requirement that passes says
    what the machine has (it answers the job's `--require`)."""
    full = judged(FIXTURES / "envs" / "h100-healthy.json")
    one = Report(full.environment, tuple(r for r in full.results if r.check_id == "GD403"))
    assert "    ✓ GD403 torch.cuda.is_available(): CUDA available" in render(one)
    two = Report(full.environment, tuple(r for r in full.results
                                         if r.check_id in ("GD201", "GD202")))
    assert "✓ GD201 " in render(two) and "✓ GD202 " in render(two)
    three = Report(full.environment, tuple(r for r in full.results
                                           if r.check_id in ("GD201", "GD202", "GD203")))
    assert render(three).splitlines()[4] == "[✓] CUDA: 3 passed (GD201-GD203)"
    required = Report(full.environment, (
        result("GD601", Status.PASS, "8 GPUs (≥ 8)", Layer.REQUIREMENTS),
        result("GD602", Status.PASS, "driver 580.65.06 (≥ 535)", Layer.REQUIREMENTS),
        result("GD603", Status.PASS, "CUDA 13.0 (≥ 12.1)", Layer.REQUIREMENTS),
        result("GD604", Status.SKIP, "no cudnn requirement given", Layer.REQUIREMENTS)))
    text = render(required)
    assert "✓ GD601 a title: 8 GPUs (≥ 8)" in text and "✓ GD603 a title: CUDA 13.0" in text
    assert "– 1 skipped: no cudnn requirement given (GD604)" in text


@pytest.mark.slow
def test_verbose_shows_every_check_and_every_evidence_item() -> None:
    for path in [*ENVS, VM]:
        report = judged(path)
        loud = render(report, verbose=True, width=10_000)
        for r in report.results:
            assert f" {r.check_id} {r.title}: " in loud, (path.name, r.check_id)
            for key, _ in r.finding.evidence:
                assert f"· {key}:" in loud, (path.name, r.check_id, key)
        assert MORE not in loud


@pytest.mark.slow
def test_long_lists_show_the_first_few_and_a_count() -> None:
    """1,000 missing LD_LIBRARY_PATH entries (354 lines of text before this change at the
    default width, GD503's message alone 250): GD503 names 5, the count and the last; the
    JSON report and -v keep all 1,000."""
    report = stressed(diverse=False)
    quiet, loud = render(report), render(report, verbose=True)
    assert len(quiet.splitlines()) <= 40, quiet
    assert "/nope/0, /nope/1, /nope/2, /nope/3, /nope/4, … 994 more …, /nope/999\n" in \
        unwrapped(quiet)
    assert "/nope/5," not in quiet and "/nope/998," in loud
    data = json.loads(JsonRenderer().render(report))
    message = next(f["message"] for f in data["findings"] if f["id"] == "GD503")
    assert all(f"/nope/{i}" in message for i in (0, 5, 500, 998, 999))


@pytest.mark.slow
def test_long_lists_in_failures_stay_short() -> None:
    """64 GPUs torch cannot use and 40 cuDNN headers of other versions: no result of the
    default report takes more than 10 lines (its fix included), where -v takes hundreds."""
    report = stressed(diverse=True)
    quiet, loud = render(report), render(report, verbose=True)
    assert len(quiet.splitlines()) <= 70 and len(loud.splitlines()) > 500
    assert "… 33 more …" in quiet  # GD302: 39 copies whose header disagrees, 5 + 33 + 1
    assert "copied over each other" in unwrapped(quiet)  # what follows a list's last item stays
    starts = [n for n, line in enumerate(quiet.splitlines())
              if re.match(r"    [✓✗!i] GD\d+ |    – \d+ skipped|\[", line)]
    assert max(b - a for a, b in zip(starts, [*starts[1:], len(quiet.splitlines())],
                                     strict=True)) <= 10, quiet


# ------------------------------------------------------------------------------ the parts


def test_id_ranges() -> None:
    assert id_ranges(["GD102", "GD105", "GD106", "GD107", "GD108", "GD110", "GD111", "GD112",
                      "GD113"]) == "GD102, GD105-GD108, GD110-GD113"
    assert id_ranges(["GD502", "GD503"]) == "GD502, GD503"  # two in a row: no range
    assert id_ranges(["GD109"]) == "GD109"
    assert id_ranges(["GD199", "GD200", "GD201", "X1", "X2", "X3"]) == "GD199-GD201, X1-X3"


def test_cause_is_the_message_up_to_its_detail() -> None:
    nvml = "the NVIDIA driver's libnvidia-ml.so.1 was not found: no driver is installed here"
    assert cause(nvml) == "the NVIDIA driver's libnvidia-ml.so.1 was not found"
    assert cause("no NVIDIA driver (see GD101)") == "no NVIDIA driver"
    assert cause("no gpus requirement given (e.g. check --require 'gpus>=8')") == \
        "no gpus requirement given"
    # a colon inside parentheses is not where the detail starts
    assert cause("no GPU on the PCI bus (or the bus cannot be read: WSL)") == \
        "no GPU on the PCI bus (or the bus cannot be read: WSL)"
    assert cause("headers missing; only needed to build") == "headers missing"
    assert cause(": odd") == ": odd"  # never empty


def test_skip_summary_groups_by_cause_largest_first() -> None:
    nvml = "the NVIDIA driver's libnvidia-ml.so.1 was not found: no driver is installed here"
    skips = [result("GD102", Status.SKIP, nvml), result("GD103", Status.SKIP, "no driver (see"
                                                         " GD101)"),
             result("GD105", Status.SKIP, nvml), result("GD106", Status.SKIP, nvml),
             result("GD107", Status.SKIP, nvml),
             result("GD601", Status.SKIP, "no gpus requirement given (e.g. check --require x)"),
             result("GD602", Status.SKIP, "no torch requirement given")]
    assert skip_summary(skips).plain == (
        "7 skipped: the NVIDIA driver's libnvidia-ml.so.1 was not found (GD102, GD105-GD107); "
        "no gpus or torch requirement given (GD601, GD602); no driver (GD103)")
    # two words, or two words differing: apart
    two = [result("GD1", Status.SKIP, "no driver"), result("GD2", Status.SKIP, "no torch"),
           result("GD3", Status.SKIP, "a b c"), result("GD4", Status.SKIP, "a x y")]
    assert skip_summary(two).plain == "4 skipped: no driver (GD1); no torch (GD2); a b c (GD3); " \
        "a x y (GD4)"


def test_skip_summary_in_one_line_of_room() -> None:
    causes = ["no NVIDIA driver", "torch is absent", "the smoke test did not run",
              "cuDNN was not found"]
    skips = [result(f"GD{100 + i}", Status.SKIP, causes[min(i, 3)]) for i in range(6)]
    whole = skip_summary(skips).plain
    assert whole == ("6 skipped: cuDNN was not found (GD103-GD105); no NVIDIA driver (GD100); "
                     "torch is absent (GD101); the smoke test did not run (GD102)")
    assert skip_summary(skips, len(whole)).plain == whole  # it fits: every cause
    assert skip_summary(skips, 80).plain == (  # the causes that fit, the others with their ids
        "6 skipped: cuDNN was not found (GD103-GD105); 3 other causes (GD100-GD102)")
    assert skip_summary(skips, 50).plain == "6 skipped: cuDNN was not found; 3 other causes"
    # the largest cause shows even where nothing fits
    assert skip_summary(skips, 10).plain == "6 skipped: cuDNN was not found; 3 other causes"
    one = [result("GD1", Status.SKIP, "a single long cause that will not fit")]
    assert skip_summary(one, 20).plain == "1 skipped: a single long cause that will not fit"


def test_cut_lists() -> None:
    items = ", ".join(f"/p/{i}" for i in range(12))
    assert cut_lists(f"12 missing: {items}") == \
        "12 missing: /p/0, /p/1, /p/2, /p/3, /p/4, … 6 more …, /p/11"
    eight = ", ".join(str(i) for i in range(8))
    assert cut_lists(eight) == eight  # 8 items: whole
    clauses = "; ".join(f"copy {i}: a, b" for i in range(20)) + ": the end"
    assert cut_lists(clauses) == ("copy 0: a, b; copy 1: a, b; copy 2: a, b; copy 3: a, b; "
                                  "copy 4: a, b; … 14 more …; copy 19: a, b: the end")


def test_every_collapsed_cause_is_cleaned() -> None:
    """A skip message from outside (a forged one in a snapshot) with line breaks and a fake fix
    stays behind gpudoctor's own words: no line of the report starts with it."""
    evil = "\n".join(["x", FIX, "\u2028" + FIX, "\x1b[2J" + FIX])
    report = Report(judged(VM).environment, (
        result("GD102", Status.SKIP, evil), result("GD103", Status.SKIP, evil + ": more"),
        result("GD601", Status.SKIP, evil, Layer.REQUIREMENTS),
        result("GD201", Status.PASS, "ok", Layer.CUDA),
        result("GD202", Status.SKIP, ", ".join([evil] * 20), Layer.CUDA)))
    for width in (40, 57, 80, 100, 137):
        text = render(report, width=width)
        assert not forged(text), text
        assert "\x1b" not in text and "\u2028" not in text
    assert "1 skipped: x\\n→ fix (GD601)" in render(report, width=10_000)  # escaped, cut at ": "


# ------------------------------------------------------------------------------ the real CLI


@pytest.mark.needs_torch
@pytest.mark.subprocess
@pytest.mark.slow
def test_check_on_this_machine_fits_in_30_lines() -> None:
    """`gpudoctor check | wc -l` on a machine with no NVIDIA driver (this VM): at most 30."""
    done = runner.gpudoctor("check", env={"COLUMNS": None})
    assert done.returncode in (0, 1), done.stderr
    if not done.stdout.startswith("Driver (max CUDA it runs)          no driver"):
        pytest.skip("an NVIDIA driver is here: the 30-line bound is for a machine without one")
    assert len(done.stdout.splitlines()) <= 30, done.stdout
