"""GD303, GD305 and GD306 judge what the files are, not only their names (issue 18, items 1, 6
and 7): a world-writable, setuid or setgid cuDNN file fails GD303 with the chmod that fixes it;
a sub-library that is a text file, cut short, a program or built for another machine fails
GD305; one the loader refuses fails GD306. Through the real CLI on real directories (compiled
libraries, a real PIE) and on snapshots; old snapshots without the new facts still load."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from runner import gpudoctor

from gpudoctor.model import CudnnFacts, CudnnInstall, CudnnLibrary, ElfFacts
from gpudoctor.snapshot import dumps, loads
from tests.checks.envbuilder import env
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture

# every test here takes over 0.5 s: in the slow set
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # runs gpudoctor in new processes


def toolkit_with_cudnn(root: Path, cudnn_kit: CudnnKit, version: str = "9.1.0") -> Path:
    prefix = cudnn_kit.populate(root, version)
    (prefix / "version.json").write_text(json.dumps({"cuda": {"version": "12.4.1"}}))
    return prefix


def check(*args: str) -> dict[str, dict[str, Any]]:
    """`gpudoctor check GD303 GD305 GD306 ARGS --format json` (only the probes these need
    run): the findings by id."""
    p = gpudoctor("check", "GD303", "GD305", "GD306", *args, "--format", "json")
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    return {f["id"]: f for f in json.loads(p.stdout)["findings"]}


def ours(finding: dict[str, Any], prefix: Path) -> str:
    """The part of a finding's message about the copy in prefix."""
    return "; ".join(part for part in finding["message"].split("; ") if str(prefix) in part)


# --------------------------------------------------------------------------- GD303


@pytest.mark.parametrize(("mode", "said"), [(0o4755, "setuid"), (0o2755, "setgid"),
                                            (0o666, "world-writable"),
                                            (0o6777, "world-writable, setuid, setgid")])
def test_gd303_fails_an_unsafe_mode_and_its_chmod_fixes_it(
        tmp_path: Path, cudnn_kit: CudnnKit, mode: int, said: str) -> None:
    prefix = toolkit_with_cudnn(tmp_path / "cuda", cudnn_kit)
    lib = prefix / "lib64/libcudnn_ops.so.9.1.0"
    lib.chmod(mode)
    f = check("--cuda-home", str(prefix))["GD303"]
    assert f["status"] == "fail"
    assert f"{lib} is {said} (mode {mode:o})" in f["message"]
    assert f["fix"] == f"sudo chmod ug-s,go-w -- {lib}"
    subprocess.run(f["fix"].removeprefix("sudo "), shell=True, check=True)
    assert check("--cuda-home", str(prefix))["GD303"]["status"] == "pass"


def test_gd303_names_each_real_file_once_and_keeps_the_readability_fix(
        tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = toolkit_with_cudnn(tmp_path / "cuda", cudnn_kit)
    (prefix / "lib64/libcudnn.so.9.1.0").chmod(0o4700)  # root's only, and setuid
    (prefix / "include/cudnn_version.h").chmod(0o666)
    f = check("--cuda-home", str(prefix))["GD303"]
    assert f["status"] == "fail"
    # the links libcudnn.so.9 and libcudnn.so lead to the same file: it is named once
    assert f["fix"] == (f"sudo chmod a+r -- {prefix}/lib64/libcudnn* && sudo chmod ug-s,go-w -- "
                        f"{prefix}/lib64/libcudnn.so.9.1.0 {prefix}/include/cudnn_version.h")
    subprocess.run(f["fix"].replace("sudo ", ""), shell=True, check=True)
    assert check("--cuda-home", str(prefix))["GD303"]["status"] == "pass"


def test_gd303_from_a_snapshot(tmp_path: Path) -> None:
    lib = CudnnLibrary("libcudnn.so.9.1.0", "/opt/my cuda/lib64/libcudnn.so.9.1.0", None, 10,
                       0o4777, True)
    install = CudnnInstall(
        origin="toolkit /opt/my cuda", lib_dir="/opt/my cuda/lib64", header=None,
        header_version="9.1.0", libraries=(lib,), library_version="9.1.0", missing_deps=(),
        cuda_build="12", prefix="/opt/my cuda")
    snap = tmp_path / "snap.json"
    snap.write_text(dumps(env(cudnn=CudnnFacts((install,)))))
    p = gpudoctor("check", "--from-snapshot", str(snap), "GD303", "--format", "json")
    assert p.returncode == 1, p.stderr
    f = json.loads(p.stdout)["findings"][0]
    assert f["status"] == "fail"
    assert shlex.split(f["fix"]) == ["sudo", "chmod", "ug-s,go-w", "--",
                                     "/opt/my cuda/lib64/libcudnn.so.9.1.0"]


# --------------------------------------------------------------------------- GD305, GD306


def broken(cudnn_kit: CudnnKit) -> dict[str, tuple[bytes, str, str]]:
    """Sub-library contents, what GD305 says of them, what GD306's loader says."""
    real = cudnn_kit.compile("libcudnn_cnn.so.9", 90100).read_bytes()
    foreign = 183 if os.uname().machine != "aarch64" else 62
    cases = {
        "text": (b"not a library\n", "is not an ELF file: it starts with b'not a librar' "
                 "(no ELF magic)",
                 "cannot be loaded"),
        "cut to 200 bytes": (real[:200], "is cut short: its ELF headers say it has at least ",
                             "cannot be loaded"),
        "gcc PIE": (cudnn_kit.program(), "is a program (a position-independent executable",
                    "cannot be loaded"),
        "another machine": (cudnn_kit.shared_object(patch={18: foreign.to_bytes(2, "little")}),
                            "is built for ", "cannot be loaded"),
    }
    true = Path("/bin/true").read_bytes()
    if true[16:18] == b"\x03\x00":
        cases["/bin/true"] = (true, "is a program (a position-independent executable",
                              "cannot be loaded")
    return cases


@pytest.mark.parametrize("case", ["text", "cut to 200 bytes", "gcc PIE", "another machine",
                                  "/bin/true"])
def test_a_broken_sub_library_fails_gd305_and_gd306(
        tmp_path: Path, cudnn_kit: CudnnKit, case: str) -> None:
    cases = broken(cudnn_kit)
    if case not in cases:
        pytest.skip(f"{case} is not a position-independent executable here")
    data, gd305, gd306 = cases[case]
    prefix = toolkit_with_cudnn(tmp_path / "cuda", cudnn_kit)
    lib = prefix / "lib64/libcudnn_cnn.so.9.1.0"
    lib.write_bytes(data)
    found = check("--cuda-home", str(prefix))
    assert found["GD305"]["status"] == "fail"
    assert f"{lib} {gd305}" in ours(found["GD305"], prefix)
    assert found["GD306"]["status"] == "fail"
    assert f"{lib} {gd306}" in ours(found["GD306"], prefix)
    assert "gpudoctor install-cudnn --tarball TARBALL --prefix" in found["GD306"]["fix"]


def test_a_whole_copy_passes_and_its_facts_round_trip(
        tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    prefix = toolkit_with_cudnn(tmp_path / "cuda", cudnn_kit)
    p = gpudoctor("check", "GD305", "GD306", "--cuda-home", str(prefix), "--format", "json")
    report = json.loads(p.stdout)
    found = {f["id"]: f for f in report["findings"]}
    assert found["GD305"]["status"] == "pass", found["GD305"]
    assert found["GD306"]["status"] == "pass", found["GD306"]
    copy = next(i for i in report["environment"]["cudnn"]["installs"] if i["prefix"] == str(prefix))
    real = next(lib for lib in copy["libraries"] if lib["name"] == "libcudnn_ops.so.9.1.0")
    assert real["elf"] == {"e_type": 3, "machine": os.uname().machine, "interpreter": False,
                           "extent": (prefix / "lib64/libcudnn_ops.so.9.1.0").stat().st_size}
    assert real["loads"] is True
    snap = tmp_path / "report.json"
    snap.write_text(p.stdout)
    again = gpudoctor("check", "--from-snapshot", str(snap), "GD305", "GD306", "--format",
                      "json")
    assert {f["id"]: f["status"] for f in json.loads(again.stdout)["findings"]} == {
        "GD305": "pass", "GD306": "pass"}


def test_a_snapshot_from_before_the_file_facts_still_loads_and_passes(
        tmp_path: Path) -> None:
    lib = CudnnLibrary("libcudnn.so.9.1.0", "/c/lib64/libcudnn.so.9.1.0", None, 10, 0o644, True,
                       elf=ElfFacts(3, "x86_64", False, 10), loads=True)
    install = CudnnInstall(
        origin="toolkit /c", lib_dir="/c/lib64", header=None, header_version="9.1.0",
        libraries=(lib,), library_version="9.1.0", missing_deps=(), cuda_build="12",
        prefix="/c")
    data = json.loads(dumps(env(cudnn=CudnnFacts((install,)))))
    old = data["environment"]["cudnn"]["installs"][0]["libraries"][0]
    del old["elf"], old["loads"]
    restored = loads(json.dumps(data))
    assert isinstance(restored.cudnn, CudnnFacts)
    assert restored.cudnn.installs[0].libraries[0].elf is None
    assert restored.cudnn.installs[0].libraries[0].loads is None
    snap = tmp_path / "old.json"
    snap.write_text(json.dumps(data))
    p = gpudoctor("check", "--from-snapshot", str(snap), "GD305", "--format", "json")
    assert json.loads(p.stdout)["findings"][0]["status"] != "fail", p.stdout
    bad = json.loads(dumps(env(cudnn=CudnnFacts((install,)))))
    bad["environment"]["cudnn"]["installs"][0]["libraries"][0]["elf"]["extent"] = -1
    snap.write_text(json.dumps(bad))
    p = gpudoctor("check", "--from-snapshot", str(snap))
    assert p.returncode == 2
    assert "extent" in p.stderr
