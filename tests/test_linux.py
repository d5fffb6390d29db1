"""gpudoctor.linux: one home for the library directories of each architecture and for the
values that hide every GPU (issue 22, item 1)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor import linux
from gpudoctor.actions.system import loader_dirs
from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import HostFacts, Status
from gpudoctor.probes.host import nvml_dirs, probe_host
from gpudoctor.probes.interface import Deps
from tests.checks.envbuilder import SCENARIOS


def test_each_architecture_has_its_own_directories() -> None:
    assert linux.library_dirs("x86_64")[:2] == ("/usr/lib/x86_64-linux-gnu",
                                                "/lib/x86_64-linux-gnu")
    assert linux.library_dirs("aarch64")[:2] == ("/usr/lib/aarch64-linux-gnu",
                                                 "/lib/aarch64-linux-gnu")
    assert "/usr/lib/powerpc64le-linux-gnu" in linux.library_dirs("ppc64le")
    assert linux.library_dirs("riscv64") == linux.library_dirs("x86_64")  # not known: x86_64's
    assert linux.include_dirs("aarch64") == ("/usr/include/aarch64-linux-gnu", "/usr/include")
    assert not any("x86_64" in d for d in nvml_dirs("aarch64"))
    assert nvml_dirs("aarch64")[-3:] == linux.DRIVER_DIRS


@pytest.mark.parametrize("value", ["", " ", "-1", "NoDevFiles", "none", "void"])
def test_values_that_hide_every_gpu(value: str) -> None:
    assert linux.hides_every_gpu(value)


@pytest.mark.parametrize("value", ["0", "0,1", "GPU-1234", "all"])
def test_values_that_do_not(value: str) -> None:
    assert not linux.hides_every_gpu(value)
    assert not linux.container_hides_every_gpu(value)


def test_the_container_variable_has_its_own_spellings() -> None:
    assert linux.container_hides_every_gpu("VOID") and linux.container_hides_every_gpu("")
    assert not linux.container_hides_every_gpu("-1")  # NVIDIA_VISIBLE_DEVICES is not CUDA's


def test_the_loader_trusts_this_machines_directories(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("platform.machine", lambda: "aarch64")
    dirs = loader_dirs(tmp_path / "no-ld.so.conf")
    assert "/usr/lib/aarch64-linux-gnu" in dirs and "/usr/lib/x86_64-linux-gnu" not in dirs


def test_the_driver_library_of_an_arm_machine_is_found(tmp_path: Path) -> None:
    """libnvidia-ml.so.1 under /lib/aarch64-linux-gnu (not merged into /usr) is the driver's
    (before, only x86_64's /lib multiarch directory was looked in)."""
    d = tmp_path / "lib" / "aarch64-linux-gnu"
    d.mkdir(parents=True)
    (d / "libnvidia-ml.so.570.124.06").write_bytes(b"")
    (d / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.570.124.06")
    facts = probe_host(Deps(root=tmp_path, environ={}, machine="aarch64"))
    assert facts.machine == "aarch64"
    assert facts.nvml_libraries == (("/lib/aarch64-linux-gnu/libnvidia-ml.so.1", "570.124.06"),)


@pytest.mark.parametrize("value", ["none", "void"])
def test_gd403_and_gd501_agree_on_none_and_void(value: str) -> None:
    """Intended change: GD501 called CUDA_VISIBLE_DEVICES=none and =void hiding every GPU,
    GD403 did not (it looked for an old driver instead). Both read linux.hides_every_gpu."""
    base = SCENARIOS["old-driver-new-torch"]
    assert isinstance(base.host, HostFacts)
    host = dataclasses.replace(base.host, env=(("CUDA_VISIBLE_DEVICES", value),))
    report = run_checks(dataclasses.replace(base, host=host), load_tables(), REGISTRY)
    got = {r.check_id: r.finding for r in report.results}
    assert got["GD501"].status is Status.FAIL
    assert got["GD403"].status is Status.FAIL
    assert got["GD403"].fix == "unset CUDA_VISIBLE_DEVICES (it hides every GPU)"
