"""The README's CI and monitoring recipes, each exercised: the GitLab job's command run for
real (its JUnit file parsed), the Dockerfile's RUN at build time (no GPU), the Kubernetes init
container's argv, the systemd unit's textfile and node-problem-detector's plugin config."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from runner import gpudoctor

from gpudoctor.model import NvmlFacts
from gpudoctor.requirements import parse_requirements
from gpudoctor.snapshot import loads
from tests.ci.cikit import GPU_LESS, H100, ROOT

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## In CI jobs and on nodes"):README.index("## Exit codes")]
BLOCKS = {m[1]: m[2] for m in re.finditer(r"\*\*([^*]+)\*\*.*?```\w+\n(.*?)```", SECTION, re.S)}
GPUDOCTOR = str(Path(sys.executable).parent / "gpudoctor")


def args_of(line: str) -> list[str]:
    """A `gpudoctor …` shell command's arguments (after the program name)."""
    argv = shlex.split(line)
    assert Path(argv[0]).name == "gpudoctor", line
    return argv[1:]


def test_every_recipe_is_there() -> None:
    assert set(BLOCKS) >= {"GitHub Actions", "GitLab CI", "Dockerfile", "Kubernetes",
                           "Prometheus", "node-problem-detector"}


def test_github_workflow_uses_the_actions_inputs() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    workflow: dict[str, Any] = yaml.safe_load(BLOCKS["GitHub Actions"])
    steps = next(iter(workflow["jobs"].values()))["steps"]
    step = next(s for s in steps if str(s.get("uses", "")).endswith("/gpudoctor@v1"))
    assert set(step["with"]) <= set(action["inputs"])
    assert parse_requirements([step["with"]["require"]])
    assert step["with"]["format"] in {"text", "json", "markdown", "junit", "prometheus"}


@pytest.mark.slow
def test_gitlab_job_writes_the_junit_report_it_declares(tmp_path: Path) -> None:
    job = yaml.safe_load(BLOCKS["GitLab CI"])["gpu-preflight"]
    report = job["artifacts"]["reports"]["junit"]
    line = next(s for s in job["script"] if s.startswith("gpudoctor "))
    p = gpudoctor(*args_of(line), cwd=tmp_path)  # this machine, probed for real
    assert p.returncode in (0, 1), p.stderr
    suite = ET.parse(tmp_path / report).getroot()
    assert suite.tag == "testsuite"
    failures = len([c for c in suite.iter("testcase") if c.find("failure") is not None])
    assert int(suite.get("failures", "-1")) == failures
    assert (p.returncode == 1) == (failures > 0)
    assert any(c.get("name", "").startswith("GD601 ") for c in suite.iter("testcase"))


@pytest.mark.slow
def test_dockerfile_run_passes_at_build_time_without_a_gpu() -> None:
    run = BLOCKS["Dockerfile"].replace("\\\n", " ")
    line = next(part.strip() for part in run.split("&&") if part.strip().startswith("gpudoctor"))
    p = gpudoctor(*args_of(line), "--from-snapshot", str(GPU_LESS), "--format", "json")
    found = {f["id"]: f for f in json.loads(p.stdout)["findings"]}
    assert found["GD101"]["status"] == "warn"  # a note: no GPU at build time is expected
    judged = [f for f in found.values() if f["id"].startswith("GD6") and f["status"] != "skip"]
    assert judged and all(f["status"] == "pass" for f in judged)
    assert p.returncode == 0, p.stderr


@pytest.mark.slow
def test_kubernetes_init_container_fails_a_node_without_the_gpus() -> None:
    job = yaml.safe_load(BLOCKS["Kubernetes"])
    pod = job["spec"]["template"]["spec"]
    init, = pod["initContainers"]
    main, = pod["containers"]
    assert init["resources"]["limits"]["nvidia.com/gpu"] == main["resources"]["limits"][
        "nvidia.com/gpu"]
    argv = init["command"]
    assert argv[0] == "gpudoctor"
    wanted = next(r for r in parse_requirements(argv[argv.index("--require") + 1:])
                  if r.kind == "gpus")
    env = loads(H100.read_text())
    assert isinstance(env.nvml, NvmlFacts)
    n = len(env.nvml.gpus)
    p = gpudoctor(*argv[1:], "--from-snapshot", str(H100), "--format", "json")
    gd601 = next(f for f in json.loads(p.stdout)["findings"] if f["id"] == "GD601")
    if n < int(wanted.value):
        assert p.returncode == 1
        assert gd601["message"].startswith(f"requirement {wanted}: {n} GPU")
    else:
        assert gd601["status"] == "pass"


@pytest.mark.slow
def test_systemd_unit_writes_a_textfile_node_exporter_reads(tmp_path: Path) -> None:
    unit = BLOCKS["Prometheus"]
    assert "SuccessExitStatus=1" in unit
    exec_start = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    args = args_of(exec_start.removeprefix("ExecStart="))
    target = tmp_path / Path(args[args.index("-o") + 1]).name
    args[args.index("-o") + 1] = str(target)
    p = subprocess.run([GPUDOCTOR, *args, "--from-snapshot", str(H100)], capture_output=True,
                       text=True, check=False, timeout=180)
    assert p.returncode in (0, 1), p.stderr
    names = {f.name for f in text_string_to_metric_families(target.read_text())}
    assert {"gpudoctor_check_status", "gpudoctor_last_run_timestamp_seconds"} <= names


@pytest.mark.slow
def test_node_problem_detector_plugin_config() -> None:
    config = json.loads(BLOCKS["node-problem-detector"])
    assert config["plugin"] == "custom"
    limit = config["pluginConfig"]["max_output_length"]
    rule, = config["rules"]
    assert rule["condition"] == config["conditions"][0]["type"]
    assert Path(rule["path"]).name == "gpudoctor"
    for path, want in ((H100, 0), (GPU_LESS, 1)):  # OK; NonOK (no GPU, one required)
        p = subprocess.run([GPUDOCTOR, *rule["args"], "--from-snapshot", str(path)],
                           capture_output=True, text=True, check=False, timeout=180)
        assert p.returncode == want, p.stdout + p.stderr
        assert len(p.stdout.encode()) <= limit + 1  # the line and its newline
