"""The composite action at the repository root: its inputs, and its steps' commands run for
real in bash with the inputs substituted (the install step creates a virtual environment and
pip-installs this checkout into it, as on a runner)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ci.cikit import ROOT

ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
_EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def substitute(text: str, inputs: dict[str, str]) -> str:
    """GitHub's `${{ inputs.X }}` and `${{ github.action_path }}`; any other expression fails
    the test (the action must not depend on what this test cannot supply)."""
    def value(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr == "github.action_path":
            return str(ROOT)
        name = expr.removeprefix("inputs.")
        assert name != expr and name in ACTION["inputs"], f"unexpected expression {expr}"
        return inputs.get(name, ACTION["inputs"][name].get("default", ""))
    return _EXPR.sub(value, text)


def run_step(step: dict[str, Any], inputs: dict[str, str], temp: Path,
             timeout: float = 600) -> subprocess.CompletedProcess[str]:
    assert step["shell"] == "bash"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GPUDOCTOR_"))}
    env.update({k: substitute(str(v), inputs) for k, v in step.get("env", {}).items()})
    env.update(RUNNER_TEMP=str(temp), GITHUB_ACTIONS="true",
               GITHUB_STEP_SUMMARY=str(temp / "summary.md"), NO_COLOR="1")
    script = substitute(step["run"], inputs)
    # how GitHub runs `shell: bash`: bash --noprofile --norc -eo pipefail {0}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=temp, check=False)


def test_a_composite_action_with_the_inputs_a_job_sets() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert {"require", "format", "strict", "python", "smoke"} <= set(ACTION["inputs"])
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name
        assert spec.get("required") is False, name
    for step in ACTION["runs"]["steps"]:
        assert "${{ inputs." not in step["run"], "inputs reach scripts through env only"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The install step, run once: a venv under RUNNER_TEMP with this checkout in it."""
    temp = tmp_path_factory.mktemp("runner-temp")
    install = ACTION["runs"]["steps"][0]
    p = run_step(install, {"python": sys.executable}, temp)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (temp / "gpudoctor-venv" / "bin" / "gpudoctor").exists()
    return temp


@pytest.mark.slow
@pytest.mark.needs_torch  # requires torch>=1.0 of this interpreter
def test_the_steps_install_and_fail_an_unmet_requirement(installed: Path) -> None:
    out = installed / "gpudoctor.xml"
    check = ACTION["runs"]["steps"][1]
    inputs = {"require": "gpus>=100000,\ntorch>=1.0", "format": "junit", "output": str(out),
              "python": sys.executable}
    p = run_step(check, inputs, installed)
    assert p.returncode == 1, p.stderr
    assert "::error title=GD601 require-gpus::" in p.stderr
    suite = ET.parse(out).getroot()
    cases = {c.get("name", "").split()[0]: c for c in suite.iter("testcase")}
    assert cases["GD601"].find("failure") is not None
    assert cases["GD605"].find("failure") is None and cases["GD605"].find("skipped") is None
    assert "## gpudoctor " in (installed / "summary.md").read_text()


@pytest.mark.slow
def test_the_step_with_defaults_and_a_malformed_requirement(installed: Path) -> None:
    check = ACTION["runs"]["steps"][1]
    p = run_step(check, {"python": sys.executable, "strict": "true", "require": "gpus>>1"},
                 installed)
    assert p.returncode == 2 and "'gpus>>1'" in p.stderr
    p = run_step(check, {"python": sys.executable}, installed)
    assert p.returncode in (0, 1) and "Driver (max CUDA it runs)" in p.stdout
    assert "Traceback" not in p.stderr


@pytest.mark.subprocess
def test_a_missing_interpreter_is_an_annotated_error(tmp_path: Path) -> None:
    p = run_step(ACTION["runs"]["steps"][0], {"python": "no-such-python3"}, tmp_path)
    assert p.returncode == 2
    assert "::error title=gpudoctor::no Python interpreter no-such-python3" in p.stdout
