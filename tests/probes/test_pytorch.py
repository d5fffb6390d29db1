"""`gpudoctor.probes.pytorch`: probe_torch for real: the child runs under a real interpreter
against the real CPU torch, no torch at all, and `torch` packages on PYTHONPATH that raise,
abort, segfault or hang on import.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from gpudoctor.model import Reason, TorchFacts, TorchRuntime, TorchStatic, Unavailable
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.pytorch import probe_torch

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

CUDNN_ERROR = "libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory"


def fake_torch(folder: Path, body: str) -> Deps:
    """A `torch` package in `folder` whose __init__ runs `body`, and Deps that put it first."""
    pkg = folder / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    (pkg / "version.py").write_text(
        "from typing import Optional\n__version__ = '2.0.1+cu118'\ncuda: Optional[str] = '11.8'\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environ["PYTHONPATH"] = str(folder)
    return Deps(environ=environ)


def facts_of(deps: Deps) -> TorchFacts:
    facts = probe_torch(deps)
    assert isinstance(facts, TorchFacts), facts
    return facts


def unavailable(value: object, reason: Reason) -> Unavailable:
    assert isinstance(value, Unavailable), value
    assert value.reason is reason, value
    return value


def assert_fake_static(static: TorchStatic | Unavailable, folder: Path) -> None:
    """The static facts describe the shadowing package, not the torch installed beneath it."""
    assert isinstance(static, TorchStatic), static
    assert static.location == str(folder / "torch")
    assert static.version == "2.0.1+cu118"
    assert static.version_py == (("__version__", "2.0.1+cu118"), ("cuda", "11.8"))


# ---------------------------------------------------------------------------- (a) real torch


@pytest.mark.slow
def test_real_torch(real_torch_facts: TorchFacts) -> None:
    installed = metadata.version("torch")
    spec = importlib.util.find_spec("torch")
    assert spec is not None
    assert spec.origin is not None
    facts = real_torch_facts
    assert facts.python == sys.executable
    assert 0 < facts.seconds < 120
    static = facts.static
    assert isinstance(static, TorchStatic)
    assert static.version == installed
    assert static.location == os.path.dirname(spec.origin)
    # PyPI's CUDA wheels: metadata "2.14.1", torch.__version__ "2.14.1+cu130"
    runtime_version = dict(static.version_py)["__version__"]
    assert runtime_version.split("+")[0] == installed.split("+")[0]
    assert all(n.startswith("nvidia-") or n in ("triton", "cuda-toolkit")
               for n, _ in static.nvidia_wheels)
    rt = facts.runtime
    assert isinstance(rt, TorchRuntime), rt
    assert rt.version == runtime_version
    if "+cpu" not in installed and dict(static.version_py).get("cuda") not in (None, "None"):
        # PyPI's default: a CUDA build, here on a machine with no driver
        cuda = dict(static.version_py)["cuda"]
        assert rt.cuda == cuda
        assert rt.hip is None
        assert not rt.cuda_available
        assert rt.cuda_init_error is not None and "NVIDIA driver" in rt.cuda_init_error
        assert rt.device_count == 0 and rt.devices == ()
        assert rt.arch_list and all(a.startswith(("sm_", "compute_")) for a in rt.arch_list)
        assert rt.cudnn_version is not None and rt.cudnn_version >= 8000  # bundled, loads
        assert rt.cudnn_conv == "not-run: CUDA is not available"
        assert any(os.path.basename(m).startswith("libcudnn") for m in rt.mapped_libraries)
        return
    assert ("cuda", "None") in static.version_py
    assert rt == TorchRuntime(
        version=installed,
        cuda=None,
        hip=None,
        cudnn_version=None,
        cuda_available=False,
        cuda_init_error="AssertionError: Torch not compiled with CUDA enabled",
        device_count=0,
        arch_list=(),
        devices=(),
        cudnn_conv="not-run: CUDA is not available",
        mapped_libraries=(),
    )


# ---------------------------------------------------------------------------- (b), (f) no torch


@pytest.mark.slow
def test_environment_without_torch(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=60)
    python = str(venv / "bin" / "python")
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    facts = facts_of(Deps(python=python, environ=environ))
    # the interpreter stays named (the install line runs pip through it); both halves say why
    assert facts.python == python
    u = unavailable(facts.static, Reason.NOT_INSTALLED)
    assert u.message == f"PyTorch is not installed for {python}"
    assert facts.runtime == u


def test_python_that_does_not_exist() -> None:
    u = unavailable(probe_torch(Deps(python="/nonexistent")), Reason.NOT_INSTALLED)
    assert u.message == "cannot run the Python interpreter /nonexistent"
    assert "FileNotFoundError" in (u.detail or "")


def test_python_that_is_a_directory(tmp_path: Path) -> None:
    # cannot be executed even by root
    u = unavailable(probe_torch(Deps(python=str(tmp_path))), Reason.NOT_INSTALLED)
    assert "PermissionError" in (u.detail or "")


def test_python_that_fails_before_reporting(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'error while loading shared libraries: libpython3.so' >&2\n"
                      "exit 127\n")
    python.chmod(0o755)
    facts = facts_of(Deps(python=str(python), environ={"PATH": "/usr/bin:/bin"}))
    static = unavailable(facts.static, Reason.ERROR)
    assert static.message == "the interpreter did not report its packages"
    assert static.detail == "error while loading shared libraries: libpython3.so"
    runtime = unavailable(facts.runtime, Reason.ERROR)
    assert runtime.message == (
        "`import torch` failed: error while loading shared libraries: libpython3.so"
    )


def test_no_torch_option() -> None:
    u = unavailable(probe_torch(Deps(no_torch=True)), Reason.SKIPPED)
    assert u.message == "PyTorch was not probed (--no-torch)"


# ---------------------------------------------------------------------------- (c)-(e) broken torch


def test_import_raises(tmp_path: Path) -> None:
    deps = fake_torch(tmp_path, f"raise ImportError({CUDNN_ERROR!r})\n")
    facts = facts_of(deps)
    rt = unavailable(facts.runtime, Reason.ERROR)
    assert rt.message == f"`import torch` failed: ImportError: {CUDNN_ERROR}"
    assert "Traceback" in (rt.detail or "")
    assert CUDNN_ERROR in (rt.detail or "")
    assert_fake_static(facts.static, tmp_path)


def test_import_aborts(tmp_path: Path) -> None:
    facts = facts_of(fake_torch(tmp_path, "import os\nos.abort()\n"))
    rt = unavailable(facts.runtime, Reason.CRASHED)
    assert rt.message == "`import torch` crashed the interpreter (SIGABRT)"
    assert_fake_static(facts.static, tmp_path)


def test_import_segfaults(tmp_path: Path) -> None:
    facts = facts_of(fake_torch(tmp_path, "import ctypes\nctypes.string_at(0)\n"))
    rt = unavailable(facts.runtime, Reason.CRASHED)
    assert rt.message == "`import torch` crashed the interpreter (SIGSEGV)"


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")  # a zombie waits for a reaper that no longer matters


@pytest.mark.slow
def test_import_hangs(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    body = (
        "import os, subprocess, time\n"
        "helper = subprocess.Popen(['sleep', '600'])\n"
        f"open({str(pids)!r}, 'w').write('%d %d' % (os.getpid(), helper.pid))\n"
        "while True:\n    time.sleep(60)\n"
    )
    deps = fake_torch(tmp_path / "site", body)
    deps = Deps(environ=deps.environ, torch_timeout=3)
    facts = facts_of(deps)
    rt = unavailable(facts.runtime, Reason.TIMEOUT)
    assert rt.message.startswith("`import torch` did not finish within 3 s")
    assert 3 <= facts.seconds < 30
    assert_fake_static(facts.static, tmp_path / "site")
    # the child and what it started were killed, not left behind
    deadline = time.monotonic() + 5
    child, helper = (int(x) for x in pids.read_text().split())
    while not (_gone(child) and _gone(helper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)
    assert _gone(helper)


@pytest.mark.slow
def test_import_exits_without_a_traceback(tmp_path: Path) -> None:
    facts = facts_of(fake_torch(tmp_path, "import sys\nsys.exit(7)\n"))
    rt = unavailable(facts.runtime, Reason.ERROR)
    assert rt.message == "`import torch` failed with exit code 7"


# ---------------------------------------------------------------------------- (g) shadows


def _without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.mark.slow
def test_real_torch_records_where_it_is_installed(real_torch_facts: TorchFacts) -> None:
    static, rt = real_torch_facts.static, real_torch_facts.runtime
    assert isinstance(static, TorchStatic)
    assert isinstance(rt, TorchRuntime), rt
    assert static.distributions[0] == (metadata.version("torch"), static.location)
    assert static.cwd == os.getcwd()
    assert rt.file == os.path.join(static.location, "__init__.py")
    # PyPI's default wheel: metadata "2.14.1", torch.__version__ "2.14.1+cu130": one copy
    from gpudoctor.checks.pytorch import check_torch_shadowed
    from gpudoctor.compat import load_tables
    from gpudoctor.model import Environment, Status

    env = Environment("0", "now", Unavailable(Reason.SKIPPED, ""), Unavailable(Reason.SKIPPED, ""),
                      Unavailable(Reason.SKIPPED, ""), Unavailable(Reason.SKIPPED, ""),
                      real_torch_facts, Unavailable(Reason.SKIPPED, ""))
    f = check_torch_shadowed.run(env, load_tables())
    assert f.status is Status.PASS, f.message


@pytest.mark.slow
def test_source_checkout_in_the_working_directory(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("needs an installed torch to be shadowed")
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text('__version__ = "0.0.0-src"\n')
    monkeypatch.chdir(tmp_path)
    facts = facts_of(Deps(environ=_without_pythonpath()))
    static = facts.static
    assert isinstance(static, TorchStatic)
    assert static.location == str(tmp_path / "torch")
    assert static.cwd == str(tmp_path)
    installed = metadata.version("torch")
    assert static.distributions
    assert static.distributions[0][0] == installed
    assert static.distributions[0][1] != static.location
    # the checks name the folder, never a `pip install torch==unknown`
    from gpudoctor.checks import REGISTRY, run_checks
    from gpudoctor.compat import load_tables
    from gpudoctor.model import Environment, Status

    skip = Unavailable(Reason.SKIPPED, "")
    env = Environment("0", "now", skip, skip, skip, skip, facts, skip)
    got = {r.check_id: r.finding for r in run_checks(env, load_tables(), REGISTRY).results}
    shadow = got["GD401"] if got["GD401"].status is Status.FAIL else got["GD406"]
    assert shadow.status in (Status.FAIL, Status.WARN)
    assert "torch imports from ./torch, a source checkout" in shadow.message
    assert f"installed torch {installed}" in shadow.message
    assert (shadow.fix or "").startswith("cd to another directory")
    assert all("unknown" not in (f.fix or "") for f in got.values())


# ---------------------------------------------------------------------------- (h) --python


@pytest.mark.slow
def test_second_venv_is_probed_and_shown_resolved(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=60)
    from gpudoctor.interpreters import resolve

    python = resolve("python", {"PATH": str(venv / "bin")})
    assert python == str(venv / "bin" / "python")
    facts = facts_of(Deps(python=python, environ=_without_pythonpath()))
    assert facts.python == python
    u = unavailable(facts.static, Reason.NOT_INSTALLED)
    assert u.message == f"PyTorch is not installed for {python}"
