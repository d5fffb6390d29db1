"""probe_libcuda against a fake libcuda.so.1 (tests/fakes/fake_libcuda.c) and, with a GPU, the
real one. `Deps(root=tmp)` stands for /, so /proc/driver/nvidia/version is read under tmp."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from gpudoctor.model import LibcudaFacts, Reason, Unavailable
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.libcuda import probe_libcuda

pytestmark = pytest.mark.subprocess  # reads libcuda.so.1 in a child process

CompileFake = Callable[[str, str, Sequence[str]], Path]


def unavailable(value: object, reason: Reason) -> Unavailable:
    assert isinstance(value, Unavailable), value
    assert value.reason is reason, value
    return value


def _system_has_libcuda() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _proc_version(root: Path, line: str) -> None:
    (root / "proc" / "driver" / "nvidia").mkdir(parents=True)
    (root / "proc" / "driver" / "nvidia" / "version").write_text(
        f"{line}\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
    )


def test_libcuda_without_a_driver(tmp_path: Path) -> None:
    if _system_has_libcuda():
        pytest.skip("this machine has a real libcuda.so.1")
    u = unavailable(probe_libcuda(Deps(root=tmp_path, environ={})), Reason.NOT_INSTALLED)
    assert u.message.startswith("libcuda.so.1 (the CUDA driver library) is not on the loader")
    assert "libcuda.so.1" in (u.detail or "")


@pytest.mark.slow
@pytest.mark.parametrize(
    "line",
    [
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:18:30 UTC 2024",
    ],
    ids=["proprietary", "open"],
)
def test_fake_libcuda(tmp_path: Path, fake_libcuda: Path, line: str) -> None:
    _proc_version(tmp_path, line)
    environ = {"LD_LIBRARY_PATH": str(fake_libcuda), "FAKE_CUDA_DRIVER_VERSION": "12040"}
    facts = probe_libcuda(Deps(root=tmp_path, environ=environ))
    assert facts == LibcudaFacts(path="libcuda.so.1", cuda_driver_version=12040,
                                 driver_version="550.54.15")


def test_fake_libcuda_without_proc_version(tmp_path: Path, fake_libcuda: Path) -> None:
    facts = probe_libcuda(Deps(root=tmp_path, environ={"LD_LIBRARY_PATH": str(fake_libcuda)}))
    assert isinstance(facts, LibcudaFacts)
    assert facts.cuda_driver_version == 13000
    unavailable(facts.driver_version, Reason.NOT_INSTALLED)


def test_fake_libcuda_error_status(tmp_path: Path, fake_libcuda: Path) -> None:
    environ = {"LD_LIBRARY_PATH": str(fake_libcuda), "FAKE_CUDA_STATUS": "999"}
    u = unavailable(probe_libcuda(Deps(root=tmp_path, environ=environ)), Reason.ERROR)
    assert u.message == "cuDriverGetVersion returned error 999"


def test_fake_libcuda_that_aborts_its_loader(tmp_path: Path, fake_libcuda: Path) -> None:
    environ = {"LD_LIBRARY_PATH": str(fake_libcuda), "FAKE_CUDA_ABORT": "1"}
    u = unavailable(probe_libcuda(Deps(root=tmp_path, environ=environ)), Reason.CRASHED)
    assert u.message == "loading libcuda.so.1 crashed the process that loaded it (signal 6)"


def test_fake_libcuda_without_the_symbol(tmp_path: Path, compile_fake: CompileFake) -> None:
    lib = compile_fake("fake_libcuda.c", "libcuda.so.1", ("FAKE_CUDA_NO_SYMBOL",))
    u = unavailable(probe_libcuda(Deps(root=tmp_path, environ={"LD_LIBRARY_PATH": str(lib)})),
                    Reason.NOT_SUPPORTED)
    assert u.message == "libcuda.so.1 has no cuDriverGetVersion"


@pytest.mark.gpu
def test_real_libcuda() -> None:
    facts = probe_libcuda(Deps())
    assert isinstance(facts, LibcudaFacts), facts
    assert facts.cuda_driver_version >= 10000
    assert isinstance(facts.driver_version, str)
