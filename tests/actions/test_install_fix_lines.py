"""The commands install-cudnn, uninstall-cudnn and smoke-test print paste safely (issue 18,
items 4 and 7): the ldconfig hint, the undo line, the zstd line, the "changed since" refusal,
the `df` line and `recommend --python` carry the user's paths shell-quoted, so `shlex.split`
gives back exactly the intended arguments for paths with spaces, quotes, `$(…)` and newlines.
Real tarballs and the real CLI."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
import runner

from tests.cudnn_kit import GpuEnv, MakeTarball

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

HOSTILE = "cu da 'q\" $(touch PWNED) `touch PWNED2` ;touch PWNED3"
NEWLINE = HOSTILE + "\nnext line"


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    p = runner.gpudoctor(*args, env=env)
    assert "Traceback" not in p.stderr, p.stderr  # (JSON may quote the patient's own)
    return p


def hostile_toolkit(tmp_path: Path, name: str) -> Path:
    prefix = tmp_path / name / "cuda-12.4"
    (prefix / "lib64").mkdir(parents=True)
    (prefix / "include").mkdir()
    (prefix / "version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    return prefix


def between(text: str, start: str, end: str | None = None) -> str:
    """The command text in a sentence: after the first `start`, up to the last `end` (the
    path inside may hold either)."""
    tail = text[text.index(start) + len(start):]
    return tail[:tail.rindex(end)] if end else tail


@pytest.mark.slow
def test_the_ldconfig_hint(tmp_path: Path, make_tarball: MakeTarball, gpu_env: GpuEnv) -> None:
    prefix = hostile_toolkit(tmp_path, NEWLINE)
    p = cli(gpu_env(), "install-cudnn", "--tarball", str(make_tarball("9.1.0")), "--prefix",
            str(prefix), "--ldconfig", "--format", "json")
    assert p.returncode == 0, p.stdout + p.stderr
    hint = json.loads(p.stdout)["ldconfig"]
    assert shlex.split(between(hint, "to add it: ")) == [
        "echo", str(prefix / "lib64"), "|", "sudo", "tee", "/etc/ld.so.conf.d/cudnn.conf",
        "&&", "sudo", "ldconfig"]
    assert not list(tmp_path.rglob("PWNED*"))


@pytest.mark.slow
def test_the_undo_line(tmp_path: Path, make_tarball: MakeTarball, gpu_env: GpuEnv) -> None:
    prefix = hostile_toolkit(tmp_path, HOSTILE)
    p = cli({**gpu_env(), "NO_COLOR": "1", "COLUMNS": "400"}, "install-cudnn", "--tarball",
            str(make_tarball("9.1.0")), "--prefix", str(prefix))
    assert p.returncode == 0, p.stdout + p.stderr
    line = next(x for x in p.stdout.splitlines() if "undo: " in x)
    assert shlex.split(between(line, "undo: ")) == ["gpudoctor", "uninstall-cudnn", "--prefix",
                                                    str(prefix)]


@pytest.mark.slow
def test_the_changed_since_refusal(tmp_path: Path, make_tarball: MakeTarball,
                                   gpu_env: GpuEnv) -> None:
    prefix = hostile_toolkit(tmp_path, NEWLINE)
    tarball = make_tarball("9.1.0")
    env = gpu_env()
    assert cli(env, "install-cudnn", "-t", str(tarball), "--prefix", str(prefix)).returncode == 0
    (prefix / "lib64/libcudnn_ops.so.9.1.0").write_bytes(b"\x7fELF edited by hand")
    p = cli(env, "install-cudnn", "-t", str(make_tarball("9.1.0")), "--prefix", str(prefix),
            "--format", "json")
    assert p.returncode == 1
    fix = json.loads(p.stdout)["error"]["fix"]
    assert shlex.split(between(fix, "run `", "`")) == ["gpudoctor", "uninstall-cudnn",
                                                      "--prefix", str(prefix)]


@pytest.mark.slow
def test_the_zstd_line(tmp_path: Path, gpu_env: GpuEnv) -> None:
    (tmp_path / NEWLINE).mkdir()
    tarball = tmp_path / NEWLINE / "cudnn.tar.zst"
    tarball.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(600))
    prefix = hostile_toolkit(tmp_path, "plain")
    p = cli(gpu_env(), "install-cudnn", "-t", str(tarball), "--prefix", str(prefix), "--format",
            "json")
    assert p.returncode == 1
    fix = json.loads(p.stdout)["error"]["fix"]
    assert shlex.split(between(fix, "unpack it first: ", ", then")) == [
        "zstd", "-d", "--", str(tarball)]


@pytest.mark.slow
def test_smoke_test_names_the_interpreter_quoted(tmp_path: Path) -> None:
    where = tmp_path / HOSTILE
    where.mkdir()
    python = where / "python"
    python.symlink_to("/usr/bin/python3")  # a Python without torch
    if subprocess.run([str(python), "-c", "import torch"], capture_output=True,
                      check=False).returncode == 0:
        pytest.skip("/usr/bin/python3 has torch here")
    p = cli({"PATH": "/usr/bin:/bin"}, "smoke-test", "--python", str(python), "--device", "cpu",
            "--format", "json")
    assert p.returncode == 1
    fix = next(f["fix"] for f in json.loads(p.stdout)["findings"] if f["id"] == "GD454")
    assert shlex.split(between(fix, "`", "`")) == ["gpudoctor", "recommend", "--python",
                                                   str(python)]
    assert not list(tmp_path.rglob("PWNED*"))
