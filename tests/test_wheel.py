"""The wheel ships the compat tables, and an installed (non-editable) copy reads them from there.

Builds the wheel from this checkout, installs it with `--target` into a temporary directory,
and imports it in a child process whose working directory is not the checkout, with only that
directory ahead of site-packages. Skipped (not failed) when the wheel cannot be built offline.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, pathlib
import gpudoctor, gpudoctor.compat as compat
tables_dir = pathlib.Path(str(compat.tables_dir()))
print(json.dumps({
    "package": str(pathlib.Path(gpudoctor.__file__).resolve().parent),
    "tables_dir": str(tables_dir.resolve()),
    "tomls": sorted(p.name for p in tables_dir.glob("*.toml")),
    "cuda_10_1": compat.load_tables().cuda_min_driver("10.1").full,
}))
"""


def _pip(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, check=False,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the wheel built from this checkout, installed with --target."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist, site = tmp / "dist", tmp / "site"
    isolation = [] if importlib.util.find_spec("hatchling") else ["--use-pep517"]
    build = _pip("wheel", "--no-deps", *(isolation or ["--no-build-isolation"]), str(ROOT),
                 "-w", str(dist), cwd=tmp)
    wheels = sorted(dist.glob("gpudoctor-*.whl"))
    if build.returncode != 0 or not wheels:
        pytest.skip(f"cannot build the wheel here (offline, no hatchling?): {build.stderr[-300:]}")
    install = _pip("install", "--no-deps", "--no-index", "--target", str(site), str(wheels[0]),
                   cwd=tmp)
    assert install.returncode == 0, install.stderr
    return site


def _child(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=site.parent, env=env, timeout=60, check=False)


@pytest.mark.slow
def test_installed_wheel_reads_its_own_tables(installed: Path) -> None:
    result = _child(installed, "-c", PROBE)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    package = installed.resolve() / "gpudoctor"
    assert got["package"] == str(package)  # the installed copy, not the checkout
    assert got["tables_dir"] == str(package / "compat_tables")
    assert got["tomls"] == ["cuda.toml", "cudnn.toml", "gpu.toml", "torch.toml"]
    assert got["cuda_10_1"] == "418.39"


@pytest.mark.slow
def test_installed_cli_answers_from_the_wheel(installed: Path) -> None:
    result = _child(installed, "-m", "gpudoctor", "compat", "cuda", "10.1", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    cudnn = {r["version"]: r["tarball"] for r in data["sections"]["cudnn"]["rows"]}
    assert cudnn["7.6.5"] == "cudnn-10.1-linux-x64-v7.6.5.32.tgz"


@pytest.mark.slow
def test_installed_wheel_ships_the_explain_knowledge_base(installed: Path) -> None:
    result = _child(installed, "-m", "gpudoctor", "explain", "--no-probe", "--format", "json",
                    "The NVIDIA driver on your system is too old (found version 11040)")
    assert result.returncode == 0, result.stderr
    best = json.loads(result.stdout)["diagnoses"][0]
    assert best["id"] == "driver-too-old-for-torch"
    assert best["decoded"][0]["meaning"] == "CUDA 11.4"
