"""The Python-version rule of the install line, with real interpreters: `--python` names
another environment, its version is probed (torch or not), and the line installs a release
that has wheels for it.

The other interpreters are pyenv's (~/.pyenv/versions/3.8 to 3.13, or $PYENV_ROOT): a venv
without torch per version is enough, since the probe records the interpreter's version before
it looks for torch. A version that is not there is skipped.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

import pytest
import runner

from gpudoctor.compat import Tables, load_tables
from gpudoctor.compat.wheels import python_fits
from gpudoctor.model import TorchFacts
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.pytorch import probe_torch

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

ROOT = Path(__file__).resolve().parents[1]
PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
MINORS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13")


def interpreter(minor: str) -> Path | None:
    """pyenv's newest CPython `minor` ("3.10" -> ~/.pyenv/versions/3.10.13/bin/python)."""
    if not PYENV.is_dir():
        return None
    found = sorted((p for p in PYENV.glob(f"{minor}.*") if p.name.split(".")[:2] == minor.split(".")
                    and (p / "bin" / "python").exists()),
                   key=lambda p: [int(x) for x in p.name.split(".")[2:3] if x.isdigit()])
    return found[-1] / "bin" / "python" if found else None


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def test_the_probe_records_this_interpreters_version() -> None:
    facts = probe_torch(Deps())
    assert isinstance(facts, TorchFacts), facts
    assert facts.python_version == platform.python_version()


def expected_release(tables: Tables, minor: str) -> str:
    """The newest release (not unverified) whose wheels include CPython `minor`."""
    fits = [r for r in tables.torch_releases if r.status != "unverified" and r.variants
            and python_fits(r, minor)]
    return max(fits, key=lambda r: [int(x) for x in r.version.split(".")]).version


@pytest.mark.slow
@pytest.mark.parametrize("minor", MINORS)
def test_recommend_for_another_python(minor: str, tmp_path: Path, tables: Tables) -> None:
    python = interpreter(minor)
    if python is None:
        pytest.skip(f"no CPython {minor} under {PYENV}")
    venv = tmp_path / f"venv{minor}"
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)
    target = venv / "bin" / "python"
    p = runner.gpudoctor("recommend", "--python", str(target), "--format", "json",
                         env={"VIRTUAL_ENV": None, "PYTHONPATH": None})
    assert p.returncode in (0, 1), p.stderr
    data = json.loads(p.stdout)
    pick = data["torch"]
    assert pick is not None, data["notes"]
    # the venv's own interpreter runs pip, for a release that has its wheels: the newest one
    assert pick["command"].startswith(f"{target} -m pip install torch=={pick['version']}")
    rel = tables.torch_release(pick["version"])
    assert rel is not None and python_fits(rel, minor) is True, (minor, pick["version"])
    assert pick["version"] == expected_release(tables, minor), data["notes"]
