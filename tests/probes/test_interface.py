"""`gpudoctor.probes.interface.Deps`: the outside world a probe may look at, with real defaults
(this process's environment, interpreter and machine) that a test replaces at the lowest level."""

from __future__ import annotations

import dataclasses
import os
import platform
import sys
from pathlib import Path

import pytest

from gpudoctor.probes.interface import DEFAULT_NVML_TIMEOUT, DEFAULT_TORCH_TIMEOUT, Deps


def test_system_paths_resolve_under_the_root(tmp_path: Path) -> None:
    deps = Deps(root=tmp_path)
    assert deps.path("/proc/driver/nvidia/version") == tmp_path / "proc/driver/nvidia/version"
    assert deps.path("etc/os-release") == tmp_path / "etc/os-release"
    assert Deps().path("/dev/nvidia0") == Path("/dev/nvidia0")


def test_the_defaults_are_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUDOCTOR_TEST_MARK", "1")
    deps = Deps()
    assert deps.environ == dict(os.environ)
    assert deps.environ is not os.environ  # a copy taken when the Deps is made
    monkeypatch.setenv("GPUDOCTOR_TEST_MARK", "2")
    assert deps.environ["GPUDOCTOR_TEST_MARK"] == "1"
    assert (deps.python, deps.machine, deps.root) == (sys.executable, platform.machine(),
                                                      Path("/"))
    assert (deps.torch_timeout, deps.nvml_timeout) == (DEFAULT_TORCH_TIMEOUT,
                                                       DEFAULT_NVML_TIMEOUT)
    assert (deps.cuda_home, deps.no_torch) == (None, False)


def test_the_child_environment_is_the_given_one_for_a_child() -> None:
    deps = Deps(environ={"PATH": "/usr/bin", "PYTHONSTARTUP": "/x.py"})
    assert deps.child_env() == {"PATH": "/usr/bin", "PYTHONUNBUFFERED": "1"}
    assert deps.environ == {"PATH": "/usr/bin", "PYTHONSTARTUP": "/x.py"}


def test_deps_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Deps().python = "/bin/false"  # type: ignore[misc]
