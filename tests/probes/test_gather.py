"""`gpudoctor.probes.gather`: collect() never raises at the probe boundary, what it gathers
round-trips exactly, and with `fields` only the probes the selected checks read run (the
rest are "not gathered")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import gpudoctor.probes.gather
from gpudoctor import __version__, schemas
from gpudoctor.model import (
    Environment,
    GpuFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    ToolkitsFacts,
    TorchFacts,
    Unavailable,
)
from gpudoctor.probes.gather import PROBES, collect
from gpudoctor.probes.interface import Deps
from gpudoctor.snapshot import dumps, loads

REPO_ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("torch", "toolkits", "cudnn", "libcuda", "nvml", "host")


def raiser(exc: BaseException) -> Callable[[Deps], Any]:
    def probe(deps: Deps) -> Any:
        raise exc

    return probe


def hermetic(root: Path, **kw: Any) -> Deps:
    return Deps(root=root, environ={"PATH": "/usr/bin:/bin"}, **kw)


def assert_round_trips(env: Environment) -> None:
    text = dumps(env)
    assert loads(text) == env
    assert dumps(loads(text)) == text


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_probe_that_raises_becomes_a_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = dict(gpudoctor.probes.gather.PROBES)
    probes["torch"] = raiser(RuntimeError("boom"))
    monkeypatch.setattr(gpudoctor.probes.gather, "PROBES", tuple(probes.items()))
    env = collect(hermetic(tmp_path))
    assert env.torch == Unavailable(
        Reason.ERROR,
        "the torch probe failed unexpectedly (a gpudoctor bug; please report it)",
        detail="RuntimeError: boom",
    )
    assert isinstance(env.host, HostFacts)  # the others still ran
    assert isinstance(env.toolkits, Unavailable)
    assert env.toolkits.reason is Reason.NOT_INSTALLED
    assert env.gpudoctor_version == __version__
    assert_round_trips(env)


@pytest.mark.parametrize(
    "exc",
    [OSError(5, "Input/output error"), KeyError("cuda"), RecursionError(), ValueError("")],
    ids=["oserror", "keyerror", "recursion", "empty-message"],
)
def test_every_probe_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    monkeypatch.setattr(gpudoctor.probes.gather, "PROBES", tuple((n, raiser(exc)) for n in FIELDS))
    env = collect(hermetic(tmp_path))
    for name in FIELDS:
        value = getattr(env, name)
        assert isinstance(value, Unavailable), (name, value)
        assert value.reason is Reason.ERROR, (name, value)
        assert value.detail == f"{type(exc).__name__}: {exc}"
        assert name in value.message
    assert_round_trips(env)


@pytest.mark.slow
@pytest.mark.subprocess
def test_hermetic_collect_without_torch(tmp_path: Path) -> None:
    env = collect(hermetic(tmp_path, no_torch=True))
    assert isinstance(env.torch, Unavailable)
    assert env.torch.reason is Reason.SKIPPED
    assert isinstance(env.host, HostFacts)
    assert_round_trips(env)


CHILD = """
import sys
from pathlib import Path
from gpudoctor.probes.gather import PROBES, collect
from gpudoctor.probes.interface import Deps
from gpudoctor.snapshot import dumps
root, ld = sys.argv[1], sys.argv[2]
environ = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ld, "CUDA_VISIBLE_DEVICES": "0,1,2"}
sys.stdout.write(dumps(collect(Deps(root=Path(root), environ=environ, torch_timeout=120))))
"""


@pytest.mark.slow
def test_full_environment_round_trips(
    tmp_path: Path, fake_nvml: Path, fake_libcuda: Path
) -> None:
    """Every probe with something to find: fake driver libraries, a toolkit, the real torch."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "os-release").write_text('PRETTY_NAME="Ubuntu 24.04 LTS"\n')
    (root / "proc" / "driver" / "nvidia").mkdir(parents=True)
    (root / "proc" / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:04 UTC 2025\n"
    )
    (root / "dev").mkdir()
    (root / "dev" / "nvidia0").write_text("")
    kit = root / "usr" / "local" / "cuda-12.4"
    (kit / "include").mkdir(parents=True)
    (kit / "include" / "cuda.h").write_text("#define CUDA_VERSION 12040\n")
    (kit / "version.json").write_text('{"cuda": {"version": "12.4.20240301"}}')
    env_vars = {k: v for k, v in os.environ.items()
                if not k.startswith("FAKE_") and k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    env_vars.update(
        LD_LIBRARY_PATH=str(fake_nvml),
        PYTHONPATH=str(REPO_ROOT),
        FAKE_NVML_GPUS="NVIDIA H100 80GB HBM3:9.0:85899345920;"
                       "NVIDIA H100 80GB HBM3:9.0:85899345920;"
                       "NVIDIA GeForce RTX 3090:8.6:25769803776",
        FAKE_NVML_LOST_GPU="1",
        FAKE_NVML_NOT_SUPPORTED="mig:2",
        FAKE_CUDA_DRIVER_VERSION="13000",
    )
    ld = f"/nonexistent/lib64:{fake_libcuda}"
    result = subprocess.run([sys.executable, "-c", CHILD, str(root), ld], capture_output=True,
                            text=True, env=env_vars, timeout=180, check=False)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    env = loads(text)
    assert dumps(env) == text  # exact, byte for byte
    assert json.loads(text)["schema_version"] == schemas.version(schemas.SNAPSHOT)

    assert isinstance(env.nvml, NvmlFacts)
    h100, lost, rtx = env.nvml.gpus
    assert isinstance(h100, GpuFacts)
    assert isinstance(rtx, GpuFacts)
    assert isinstance(lost, Unavailable)
    assert isinstance(rtx.mig_mode, Unavailable)
    assert env.libcuda == LibcudaFacts("libcuda.so.1", 13000, "580.65.06")
    assert isinstance(env.toolkits, ToolkitsFacts)
    assert env.toolkits.toolkits[0].version == "12.4"
    assert isinstance(env.host, HostFacts)
    assert env.host.os_name == "Ubuntu 24.04 LTS"
    assert "/nonexistent/lib64" in env.host.ld_library_path_missing
    assert env.host.getenv("CUDA_VISIBLE_DEVICES") == "0,1,2"
    assert isinstance(env.torch, TorchFacts)


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace every probe by one that notes it ran and returns a marker."""
    ran: list[str] = []

    def fake(name: str) -> Callable[[Deps], Any]:
        def probe(deps: Deps) -> Any:
            ran.append(name)
            return Unavailable(Reason.ERROR, f"ran {name}")
        return probe

    monkeypatch.setattr(gpudoctor.probes.gather, "PROBES",
                        tuple((name, fake(name)) for name, _ in PROBES))
    return ran


@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
def test_only_the_probes_of_the_fields_run(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    ran = _recording(monkeypatch)
    env = collect(Deps(root=tmp_path), fields={"host", "nvml"})
    assert sorted(ran) == ["host", "nvml"]
    assert isinstance(env, Environment)
    for name, _ in PROBES:
        fact = getattr(env, name)
        assert isinstance(fact, Unavailable)
        assert fact.message == (f"ran {name}" if name in ("host", "nvml")
                                else "not gathered: no selected check reads it")


@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
def test_no_fields_runs_every_probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ran = _recording(monkeypatch)
    collect(Deps(root=tmp_path))
    assert sorted(ran) == sorted(name for name, _ in PROBES)


@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
def test_fields_that_no_probe_fills_are_ignored(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    ran = _recording(monkeypatch)
    collect(Deps(root=tmp_path), fields={"smoke", "host"})
    assert ran == ["host"]


@pytest.fixture
def no_early(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """No probes started early by another test: a list of this test's own."""
    early: list[Any] = []
    monkeypatch.setattr(gpudoctor.probes.gather, "_EARLY", early)
    return early


@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
def test_collect_takes_the_probes_started_early_with_equal_inputs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_early: list[Any]) -> None:
    """The entry point starts them before the CLI is imported; the command's collect with
    equal Deps (another object) and every probe's field takes them: each probe ran once."""
    ran = _recording(monkeypatch)
    gpudoctor.probes.gather.start_early(Deps(root=tmp_path, no_torch=True))
    env = collect(Deps(root=tmp_path, no_torch=True),
                  fields=("smoke", *(name for name, _ in PROBES)))
    assert sorted(ran) == sorted(name for name, _ in PROBES)
    assert no_early == []
    assert env.host == Unavailable(Reason.ERROR, "ran host")


@pytest.mark.subprocess  # the mark of tests/probes/test_collect_fields.py
@pytest.mark.parametrize(("asked", "fields"), [
    ({"no_torch": False}, None),  # other inputs
    ({"python": "/other/python"}, None),
    ({"torch_timeout": 5.0}, None),
    ({"environ": {"PATH": "/x"}}, None),
    ({}, ("host", "nvml")),  # other probes
])
def test_probes_started_with_other_inputs_are_not_taken(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_early: list[Any],
        asked: dict[str, Any], fields: tuple[str, ...] | None) -> None:
    ran = _recording(monkeypatch)
    gpudoctor.probes.gather.start_early(Deps(root=tmp_path, no_torch=True))
    collect(Deps(root=tmp_path, **{"no_torch": True, **asked}), fields=fields)
    expected = [name for name, _ in PROBES if fields is None or name in fields]
    for thread in no_early[0]._threads:  # the early ones end on their own
        thread.join(10)
    assert sorted(ran) == sorted([name for name, _ in PROBES] + expected)
    assert len(no_early) == 1  # left where it was, for nothing else to take
