"""`gpudoctor.checks.host`: GD501 (CUDA_VISIBLE_DEVICES), GD502 (/dev/nvidia* usable), GD503
(LD_LIBRARY_PATH entries; on real directories through the real host probe) and GD504
(/dev/shm), branch by branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks.host import (
    DEV_NODES_FIX,
    check_dev_nodes,
    check_shm,
    check_visible_devices,
)
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    DeviceNode,
    Finding,
    Reason,
    Status,
    Unavailable,
)
from gpudoctor.probes.host import probe_host
from gpudoctor.probes.interface import Deps
from tests.checks.envbuilder import NO_LIBCUDA, NO_NVML, env, finding, gpu, host, not_reported, nvml

TABLES = load_tables()
TWO_GPUS = nvml("580.65.06", 13000, gpu("H100", 0), gpu("H100", 1))


def visible(value: str | None, **kw: object) -> Finding:
    variables = (("CUDA_VISIBLE_DEVICES", value),) if value is not None else ()
    kw.setdefault("nvml", TWO_GPUS)
    return check_visible_devices.run(env(host=host(env=variables), **kw), TABLES)


# ----------------------------------------------------------------------- GD501


@pytest.mark.parametrize("value", [None, "0", "1", "0,1", " 1 , 0 ",
                                   "GPU-00000001-1111-2222-3333-444455556666", "GPU-00000000",
                                   "MIG-4b4a6f36-1c2d-5e6f-8a9b-0c1d2e3f4a5b"])
def test_gd501_passes_gpus_that_exist(value: str | None) -> None:
    f = visible(value)
    assert f.status is Status.PASS, f
    if value is None:
        assert f.message == "CUDA_VISIBLE_DEVICES is not set: every GPU is visible"


@pytest.mark.parametrize("value", ["", "-1", "none", "void"])
def test_gd501_a_value_that_hides_every_gpu_fails(value: str) -> None:
    f = visible(value)
    assert f.status is Status.FAIL, f
    assert f.message == f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU"
    assert (f.fix or "").startswith("unset CUDA_VISIBLE_DEVICES")


@pytest.mark.parametrize(("value", "named"), [
    ("2", "2"), ("0,2", "2"), ("9999999999", "9999999999"), ("²", "²"), ("gpu0", "gpu0"),
    ("GPU-deadbeef", "GPU-deadbeef"), ("0,,1", ""),
])
def test_gd501_an_entry_that_is_no_gpu_here_fails_and_names_it(value: str, named: str) -> None:
    f = visible(value)
    assert f.status is Status.FAIL, f
    assert f.message.startswith(f"CUDA_VISIBLE_DEVICES={value!r} names {named}, which is not")
    assert "(2 GPU(s): indices 0–1)" in f.message and "every one after it" in f.message


def test_gd501_without_the_gpu_list_skips_after_the_values_that_need_none() -> None:
    assert visible("", nvml=NO_NVML).status is Status.FAIL  # hides all, whatever the GPUs
    f = visible("3", nvml=NO_NVML)
    assert f.status is Status.SKIP and f.message.startswith("cannot compare with the GPU list")
    assert f.evidence == (("CUDA_VISIBLE_DEVICES", "'3'"),)
    report = env(host=not_reported("the environment"), nvml=TWO_GPUS)
    assert check_visible_devices.run(report, TABLES).status is Status.SKIP


# ----------------------------------------------------------------------- GD502


def nodes(*modes: str) -> tuple[DeviceNode, ...]:
    paths = ("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm")
    return tuple(DeviceNode(p, "r" in m, "w" in m) for p, m in zip(paths, modes, strict=False))


def dev_nodes(**kw: object) -> Finding:
    nvml_facts = kw.pop("nvml", TWO_GPUS)
    return check_dev_nodes.run(env(host=host(**kw), nvml=nvml_facts), TABLES)


def test_gd502_readable_and_writable_nodes_pass() -> None:
    f = dev_nodes(dev_nodes=nodes("rw", "rw", "rw"))
    assert f.status is Status.PASS and f.message == "3 device node(s) readable and writable"
    assert ("/dev/nvidia0", "rw") in f.evidence


def test_gd502_a_node_this_user_cannot_open_fails() -> None:
    f = dev_nodes(dev_nodes=nodes("rw", "r", "-"))
    assert f.status is Status.FAIL, f
    assert f.message == "this user cannot open /dev/nvidiactl, /dev/nvidia-uvm"
    assert f.fix == DEV_NODES_FIX
    assert ("/dev/nvidia-uvm", "--") in f.evidence


def test_gd502_no_nodes() -> None:
    f = dev_nodes(dev_nodes=())
    assert f.status is Status.FAIL and f.message == "no /dev/nvidia* device nodes"
    assert (f.fix or "").startswith("load the driver")
    f = dev_nodes(dev_nodes=(), container="docker")
    assert f.status is Status.FAIL and "--gpus all" in (f.fix or "")
    f = check_dev_nodes.run(env(host=host(dev_nodes=()), nvml=NO_NVML, libcuda=NO_LIBCUDA),
                            TABLES)
    assert f.status is Status.SKIP and "see GD101" in f.message  # no driver: counted once


def test_gd502_wsl_reaches_the_gpu_through_dxg() -> None:
    f = dev_nodes(dev_nodes=(), wsl=True)
    assert f.status is Status.PASS and "/dev/dxg" in f.message


def test_gd502_nvml_without_permission_fails_even_with_open_nodes() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "nvml: Insufficient Permissions")
    f = dev_nodes(dev_nodes=nodes("rw", "rw"), nvml=denied)
    assert f.status is Status.FAIL, f
    assert "though the 2 device node(s) are readable and writable" in f.message
    assert ("NVML", "nvml: Insufficient Permissions") in f.evidence
    # a pasted report lists no nodes: NVML's word alone fails it, else it skips
    report = env(host=not_reported("the device nodes"), nvml=denied)
    f = check_dev_nodes.run(report, TABLES)
    assert f.status is Status.FAIL and f.fix == DEV_NODES_FIX
    assert check_dev_nodes.run(env(host=not_reported("x")), TABLES).status is Status.SKIP


# ----------------------------------------------------------------------- GD503


@pytest.mark.parametrize(
    ("value", "where", "cleaned"),
    [(":/opt/a", "a leading ':'", "export LD_LIBRARY_PATH=/opt/a"),
     ("/opt/a:", "a trailing ':'", "export LD_LIBRARY_PATH=/opt/a"),
     ("/opt/a::/opt/b", "'::'", "export LD_LIBRARY_PATH=/opt/a:/opt/b"),
     (":", "a leading ':', a trailing ':'", "unset LD_LIBRARY_PATH")],
)
def test_empty_ld_library_path_entries_mean_the_current_directory(
        tmp_path: Path, value: str, where: str, cleaned: str) -> None:
    for d in ("opt/a", "opt/b"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    facts = probe_host(Deps(root=tmp_path, environ={"LD_LIBRARY_PATH": value}))
    f = finding(env(host=facts), "GD503")
    assert f.status is Status.WARN
    assert f"empty entries ({where}), which the loader reads as the current directory" in \
        f.message
    assert (f.fix or "").startswith(cleaned + " (")


def test_empty_and_missing_entries_are_cleaned_together(tmp_path: Path) -> None:
    (tmp_path / "opt/a").mkdir(parents=True)
    facts = probe_host(Deps(root=tmp_path, environ={"LD_LIBRARY_PATH": "/opt/a::/gone:"}))
    f = finding(env(host=facts), "GD503")
    assert "1 entry that do not exist: /gone" in f.message or "/gone" in f.message
    assert (f.fix or "").startswith("export LD_LIBRARY_PATH=/opt/a (")


def test_clean_ld_library_path_passes(tmp_path: Path) -> None:
    (tmp_path / "opt/a").mkdir(parents=True)
    facts = probe_host(Deps(root=tmp_path, environ={"LD_LIBRARY_PATH": "/opt/a"}))
    assert finding(env(host=facts), "GD503").status is Status.PASS


def test_gd503_unset_empty_and_missing_entries_on_hand_built_facts() -> None:
    def gd503(**kw: object) -> Finding:
        return finding(env(host=host(**kw)), "GD503")

    assert gd503().message == "LD_LIBRARY_PATH is not set"
    f = gd503(env=(("LD_LIBRARY_PATH", ""),))
    assert f.status is Status.PASS and "empty" in f.message
    f = gd503(env=(("LD_LIBRARY_PATH", "/opt/a:/old/cuda-10.2/lib64:/old/x"),),
              ld_library_path_missing=("/old/cuda-10.2/lib64", "/old/x"))
    assert f.status is Status.WARN
    assert "2 entries that do not exist: /old/cuda-10.2/lib64, /old/x" in f.message
    assert f.fix == "export LD_LIBRARY_PATH=/opt/a (and where it is set, in ~/.bashrc or the " \
                    "job script, remove them)"
    f = gd503(env=(("LD_LIBRARY_PATH", "/old/x"),), ld_library_path_missing=("/old/x",))
    assert (f.fix or "").startswith("unset LD_LIBRARY_PATH (")


# ----------------------------------------------------------------------- GD504


@pytest.mark.parametrize(("shm", "container", "status", "words"), [
    (16 << 30, None, Status.PASS, "/dev/shm is 16.0 GiB"),
    (1 << 30, None, Status.PASS, "/dev/shm is 1.0 GiB"),
    (64 << 20, "docker", Status.WARN, "/dev/shm is only 64 MiB"),
    (512 << 20, None, Status.WARN, "/dev/shm is only 512 MiB"),
])
def test_gd504_shm_size(shm: int, container: str | None, status: Status, words: str) -> None:
    f = check_shm.run(env(host=host(shm_bytes=shm, container=container)), TABLES)
    assert f.status is status and f.message.startswith(words), f
    if status is Status.WARN:
        assert ("--shm-size=8g" in (f.fix or "")) is (container is not None)
        assert ("remount" in (f.fix or "")) is (container is None)


def test_gd504_skips_without_the_size() -> None:
    unknown = Unavailable(Reason.NOT_SUPPORTED, "/dev/shm is not mounted")
    f = check_shm.run(env(host=host(shm_bytes=unknown)), TABLES)
    assert f.status is Status.SKIP and "/dev/shm is not mounted" in f.message
