"""Fix lines paste safely (issue 18, items 4 and 7): every path or outside string in a fix
command is shell-quoted, so the command's arguments are exactly the intended ones, whatever
the path holds: spaces, quotes, `$(…)`, backticks, a newline.

Each fix is taken from the real CLI (`check --cuda-home` on a real directory with such a name,
or `check --from-snapshot`), its command text is split with `shlex.split` and compared to the
arguments intended; the cuDNN fixes are also run (without sudo) in a shell, which must fix the
finding and run nothing planted in the path. GD201, GD307 and GD503 (LD_LIBRARY_PATH, CUDA_HOME)
and GD308 are the other checks whose fixes carry a path."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from runner import gpudoctor

from gpudoctor.model import (
    CudnnFacts,
    CudnnInstall,
    NamedRoot,
    Reason,
    ToolkitsFacts,
    Unavailable,
)
from gpudoctor.snapshot import dumps
from tests.checks.envbuilder import env, host, toolkit, torch
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes

# a directory name as hostile as a file system allows (no "/", no ":" for LD_LIBRARY_PATH)
HOSTILE = "cu da 'q\" $(touch PWNED) `touch PWNED2` ;touch PWNED3\nnext line"


def hostile_dir(tmp_path: Path) -> Path:
    """tmp_path/<HOSTILE>/cuda, and the shell's working directory for running fixes."""
    d = tmp_path / HOSTILE / "cuda"
    d.parent.mkdir()
    return d


def findings(*args: str) -> dict[str, dict[str, Any]]:
    p = gpudoctor("check", *args, "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    return {f["id"]: f for f in json.loads(p.stdout)["findings"]}


def commands(text: str) -> list[list[str]]:
    """The argument lists of a `a && b && c` command line, as a shell parses them."""
    out: list[list[str]] = [[]]
    for word in shlex.split(text):
        if word == "&&":
            out.append([])
        else:
            out[-1].append(word)
    return out


def run_fix(fix: str, cwd: Path) -> None:
    """Run a printed fix without its sudo; nothing planted in a path may run."""
    subprocess.run(fix.replace("sudo ", ""), shell=True, check=True, cwd=cwd,
                   executable="/bin/bash")
    assert not list(cwd.rglob("PWNED*")), "a command planted in a path ran"


def snapshot(tmp_path: Path, **kw: object) -> Path:
    path = tmp_path / "snap.json"
    path.write_text(dumps(env(**kw)))
    return path


def real_copy(root: Path, cudnn_kit: CudnnKit, **kw: object) -> Path:
    prefix = cudnn_kit.populate(root, "9.1.0", **kw)  # type: ignore[arg-type]
    (prefix / "version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    return prefix


def test_gd303_chmod_lines(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = real_copy(hostile_dir(tmp_path), cudnn_kit)
    (prefix / "include/cudnn_version.h").chmod(0o600)
    lib = prefix / "lib64/libcudnn_ops.so.9.1.0"
    lib.chmod(0o4777)
    fix = findings("GD303", "--cuda-home", str(prefix))["GD303"]["fix"]
    assert commands(fix) == [
        ["sudo", "chmod", "a+r", "--", f"{prefix}/include/cudnn*.h"],  # the glob stays a glob
        ["sudo", "chmod", "ug-s,go-w", "--", str(lib)]]
    run_fix(fix, tmp_path)
    assert findings("GD303", "--cuda-home", str(prefix))["GD303"]["status"] == "pass"


def test_gd304_ln_lines(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = real_copy(hostile_dir(tmp_path), cudnn_kit, chain=False)
    f = findings("GD304", "--cuda-home", str(prefix))["GD304"]
    assert f["status"] == "warn"
    parts = commands(f["fix"])
    assert parts[0] == ["cd", "--", str(prefix / "lib64")]
    assert ["sudo", "ln", "-sf", "--", "libcudnn_ops.so.9.1.0", "libcudnn_ops.so.9"] in parts
    run_fix(f["fix"], tmp_path)
    assert findings("GD304", "--cuda-home", str(prefix))["GD304"]["status"] == "pass"


def test_gd305_reinstall_line(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = real_copy(hostile_dir(tmp_path), cudnn_kit)
    (prefix / "lib64/libcudnn_cnn.so.9.1.0").write_bytes(b"text\n")
    fix = findings("GD305", "--cuda-home", str(prefix))["GD305"]["fix"]
    command = fix[fix.index("gpudoctor install-cudnn"):]
    assert commands(command) == [["gpudoctor", "install-cudnn", "--tarball", "TARBALL",
                                  "--prefix", str(prefix)]]


def test_gd301_chmod_line_from_a_snapshot(tmp_path: Path) -> None:
    include = f"/opt/{HOSTILE}/include"
    install = CudnnInstall(
        origin=f"toolkit /opt/{HOSTILE}", lib_dir="", header=f"{include}/cudnn_version.h",
        header_version=Unavailable(Reason.PERMISSION_DENIED, "not readable"), libraries=(),
        library_version=Unavailable(Reason.NOT_INSTALLED, "no libcudnn"), missing_deps=(),
        cuda_build="12", prefix=f"/opt/{HOSTILE}", include_dir=include)
    f = findings("--from-snapshot", str(snapshot(tmp_path, cudnn=CudnnFacts((install,)))),
                 "GD301")["GD301"]
    assert f["status"] == "fail"
    assert commands(f["fix"]) == [["sudo", "chmod", "a+r", "--", f"{include}/cudnn*.h"]]


def test_gd308_install_line_from_a_snapshot(tmp_path: Path) -> None:
    root = f"/opt/{HOSTILE}"
    install = CudnnInstall(
        origin=f"toolkit {root}", lib_dir=f"{root}/lib64", header=None, header_version="8.9.7",
        libraries=(), library_version="8.9.7", missing_deps=(), cuda_build="11", prefix=root,
        in_use=True)
    f = findings("--from-snapshot", str(snapshot(tmp_path, cudnn=CudnnFacts((install,)),
                                                 toolkits=toolkit("12.4", root=root))),
                 "GD308")["GD308"]
    assert f["status"] == "fail"
    words = commands(f["fix"])[0]
    assert words[:3] == ["gpudoctor", "install-cudnn", "--tarball"]
    assert words[4:] == ["--prefix", root]


@pytest.mark.parametrize("check_id", ["GD307", "GD503"])
def test_ld_library_path_export_lines_from_a_snapshot(tmp_path: Path, check_id: str) -> None:
    kept = f"/opt/{HOSTILE.replace(';', '&')}/lib"  # GD503 splits at ';' as well as ':'
    value = f"/opt/cudnn8/lib64:{kept}"
    install = CudnnInstall(
        origin="LD_LIBRARY_PATH", lib_dir="/opt/cudnn8/lib64", header=None,
        header_version="8.9.7", libraries=(), library_version="8.9.7", missing_deps=(),
        cuda_build="12", found_by=("LD_LIBRARY_PATH",), real_lib_dir="/opt/cudnn8/lib64")
    wheel_dir = "/venv/site-packages/nvidia/cudnn/lib"
    wheel = dataclasses.replace(install, origin="pip wheel /venv/site-packages/nvidia/cudnn",
                                lib_dir=wheel_dir, real_lib_dir=wheel_dir,
                                found_by=("pip wheel",), library_version="9.1.0",
                                header_version="9.1.0")
    h = host(env=(("LD_LIBRARY_PATH", value),), ld_library_path_missing=("/opt/cudnn8/lib64",))
    crashed = Unavailable(Reason.CRASHED, "import torch died")  # so nothing tells what it loads
    f = findings("--from-snapshot", str(snapshot(tmp_path, cudnn=CudnnFacts((install, wheel)),
                                                 host=h, torch=crashed)), check_id)[check_id]
    assert f["status"] == "warn", f
    command = f["fix"].split(" (and where")[0]  # GD503 goes on in words
    assert commands(command) == [["export", f"LD_LIBRARY_PATH={kept}"]]


def test_gd201_export_line_from_a_snapshot(tmp_path: Path) -> None:
    root = f"/opt/{HOSTILE}"
    cuda = toolkit("12.4", root=root)
    assert isinstance(cuda, ToolkitsFacts)
    cuda = dataclasses.replace(cuda, named=(NamedRoot("/usr/local/cuda-9.9", "CUDA_HOME",
                                                      "missing"),))
    f = findings("--from-snapshot", str(snapshot(tmp_path, toolkits=cuda)), "GD201")["GD201"]
    assert commands(f["fix"]) == [["export", f"CUDA_HOME={root}"]]


def test_gd307_mixed_load_export_line_from_a_snapshot(tmp_path: Path) -> None:
    wheel = "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib"
    old, kept = "/opt/cudnn-9.0/lib", f"/opt/{HOSTILE.replace(';', '&')}/lib"
    t = torch("2.13.0+cu130", "13.0", ("H100",), cudnn=92000)
    assert not isinstance(t.runtime, Unavailable)
    t = dataclasses.replace(t, runtime=dataclasses.replace(t.runtime, mapped_libraries=(
        f"{wheel}/libcudnn.so.9", f"{old}/libcudnn_graph.so.9.0.0")))
    h = host(env=(("LD_LIBRARY_PATH", f"{old}:{kept}"),))
    f = findings("--from-snapshot", str(snapshot(tmp_path, torch=t, host=h)), "GD307")["GD307"]
    assert f["status"] == "fail", f
    assert commands(f["fix"][f["fix"].index("export "):]) == [
        ["export", f"LD_LIBRARY_PATH={kept}"]]
