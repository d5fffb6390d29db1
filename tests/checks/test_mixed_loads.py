"""`gpudoctor.checks.mixed_loads`, through GD307: one process that maps two copies of a library
(cuDNN's sub-libraries, cuBLAS's halves) from different places is named, with the fix that keeps
one; one copy, or two majors side by side, is not a mixed load. Hand-built facts, and a real
child that loads compiled libraries.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpudoctor.model import (
    CudnnFacts,
    CudnnInstall,
    Environment,
    Reason,
    Status,
    TorchFacts,
    Unavailable,
)
from gpudoctor.probes.interface import Deps
from tests.checks.envbuilder import env, host, torch
from tests.checks.test_cudnn import hand_install, run
from tests.cudnn_kit import CudnnKit, cudnn_kit_fixture  # noqa: F401 - the fixture


def mapped(*paths: str, host_env: tuple[tuple[str, str], ...] = (),
           real: tuple[tuple[str, str], ...] = (), installs: tuple[CudnnInstall, ...] = ()
           ) -> Environment:
    t = torch("2.5.1+cu124", "12.4", ("H100",), cudnn=90100)
    assert not isinstance(t.runtime, Unavailable)
    t = dataclasses.replace(t, runtime=dataclasses.replace(t.runtime, mapped_libraries=paths))
    return env(torch=t, host=host(env=host_env, ld_library_path_real=real),
               cudnn=CudnnFacts(installs) if installs else Unavailable(Reason.NOT_INSTALLED, "-"))


SITE = "/venv/lib/python3.11/site-packages/nvidia"


def test_sub_library_from_ld_library_path_beside_the_wheel() -> None:
    wheel = hand_install(origin=f"pip wheel {SITE}/cudnn", lib_dir=f"{SITE}/cudnn/lib",
                         real_lib_dir=f"{SITE}/cudnn/lib", prefix=None, found_by=("pip wheel",))
    e = mapped(f"{SITE}/cudnn/lib/libcudnn.so.9", "/opt/cudnn-9.0.0/lib/libcudnn_graph.so.9.0.0",
               f"{SITE}/cublas/lib/libcublas.so.12",
               host_env=(("LD_LIBRARY_PATH", "/opt/cudnn/lib:/usr/local/lib"),),
               real=(("/opt/cudnn/lib", "/opt/cudnn-9.0.0/lib"),
                     ("/usr/local/lib", "/usr/local/lib")),
               installs=(wheel,))
    f = run(e)["GD307"]
    assert f.status is Status.FAIL
    assert "loaded cuDNN from 2 places" in f.message
    assert f"libcudnn.so.9 from {SITE}/cudnn/lib (cuDNN 9.1.0)" in f.message
    assert "libcudnn_graph.so.9.0.0 from /opt/cudnn-9.0.0/lib (cuDNN 9.0.0)" in f.message
    assert f.fix == (f"drop /opt/cudnn/lib from LD_LIBRARY_PATH (so that every part comes from "
                     f"{SITE}/cudnn/lib): export LD_LIBRARY_PATH=/usr/local/lib")


def test_cublas_halves_from_two_places() -> None:
    e = mapped(f"{SITE}/cublas/lib/libcublas.so.12", "/usr/local/cuda-12.1/lib64/libcublasLt.so.12",
               host_env=(("LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64"),))
    f = run(e)["GD307"]
    assert f.status is Status.FAIL
    assert "loaded cuBLAS from 2 places" in f.message
    assert f.fix is not None and f.fix.endswith("unset LD_LIBRARY_PATH")


def test_preloaded_or_cached_copies_get_their_own_fix() -> None:
    paths = (f"{SITE}/cudnn/lib/libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.0.0")
    f = run(mapped(*paths, host_env=(
        ("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.0.0"),)))["GD307"]
    assert (f.fix or "").startswith("remove the cuDNN in /usr/lib/x86_64-linux-gnu from LD_PRELOAD")
    f = run(mapped(*paths))["GD307"]
    assert "ldconfig -p | grep cudnn" in (f.fix or "")


def test_one_copy_or_two_majors_is_not_a_mixed_load() -> None:
    one = mapped(f"{SITE}/cudnn/lib/libcudnn.so.9", f"{SITE}/cudnn/lib/libcudnn_graph.so.9")
    assert run(one)["GD307"].status is not Status.FAIL
    # two SONAME majors are two libraries to the loader (another framework's cuDNN 8)
    two = mapped(f"{SITE}/cudnn/lib/libcudnn.so.9", "/opt/tf/lib/libcudnn.so.8.9.7")
    assert run(two)["GD307"].status is not Status.FAIL


FAKE_TORCH = '''
import ctypes, os, types
ctypes.CDLL(os.environ["FAKE_WHEEL_CUDNN"])  # torch preloads its wheel's cuDNN by full path
try:  # cuDNN opens its sub-libraries by SONAME: LD_LIBRARY_PATH comes before its own folder
    ctypes.CDLL("libcudnn_graph.so.9")
except OSError:
    ctypes.CDLL(os.path.join(os.path.dirname(os.environ["FAKE_WHEEL_CUDNN"]),
                             "libcudnn_graph.so.9"))
__version__ = "2.5.1+cu124"
version = types.SimpleNamespace(cuda="12.4", hip=None)
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 90100))
def _init():
    raise RuntimeError("Found no NVIDIA driver on your system.")
cuda = types.SimpleNamespace(is_available=lambda: False, init=_init, device_count=lambda: 0,
                             get_arch_list=lambda: [])
'''


@pytest.mark.slow
def test_real_mixed_load_named_and_the_fix_works(tmp_path: Path, cudnn_kit: CudnnKit) -> None:
    """Real libraries, a real child: torch's process maps the wheel's libcudnn.so.9 and the
    libcudnn_graph.so.9.0.0 of a cuDNN 9.0.0 on LD_LIBRARY_PATH (through a symlinked path)."""
    from gpudoctor.probes.cudnn import probe_cudnn
    from gpudoctor.probes.host import probe_host
    from gpudoctor.probes.pytorch import probe_torch

    site = tmp_path / "venv/lib/python3.11/site-packages"
    wheel = cudnn_kit.populate(site / "nvidia/cudnn", "9.1.0", lib="lib", chain=False)
    for p in (wheel / "lib").glob("*"):
        if not p.name.endswith(".so.9"):
            p.unlink()
    old = cudnn_kit.populate(tmp_path / "opt/cudnn-9.0.0", "9.0.0", lib="lib")
    (tmp_path / "opt/cudnn").symlink_to("cudnn-9.0.0")
    other = tmp_path / "other-lib"
    other.mkdir()
    (tmp_path / "pkgs/torch").mkdir(parents=True)
    (tmp_path / "pkgs/torch/__init__.py").write_text(FAKE_TORCH)
    python = tmp_path / "python"  # the cuDNN probe's view of the patient's site-packages
    python.write_text(f"#!/bin/sh\necho '{json.dumps([str(site)])}'\n")
    python.chmod(0o755)
    entry = str(tmp_path / "opt/cudnn/lib")

    def probe(ld: str) -> Environment:
        environ = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "pkgs"),
                   "LD_LIBRARY_PATH": ld, "FAKE_WHEEL_CUDNN": str(wheel / "lib/libcudnn.so.9")}
        deps = Deps(environ=environ, root=tmp_path / "root")
        t = probe_torch(deps)
        assert isinstance(t, TorchFacts), t
        cudnn = probe_cudnn(dataclasses.replace(deps, python=str(python)))
        return env(torch=t, host=probe_host(Deps(environ=environ)), cudnn=cudnn)

    f = run(probe(f"{other}:{entry}"))["GD307"]
    assert f.status is Status.FAIL, f.message
    assert f"libcudnn.so.9 from {wheel / 'lib'} (cuDNN 9.1.0)" in f.message
    assert f"libcudnn_graph.so.9.0.0 from {old / 'lib'} (cuDNN 9.0.0)" in f.message
    assert f.fix is not None
    assert f.fix.startswith(f"drop {entry} from LD_LIBRARY_PATH")
    assert f.fix.endswith(f": export LD_LIBRARY_PATH={other}")
    fixed = f.fix.rsplit("export LD_LIBRARY_PATH=", 1)[1]
    after = run(probe(fixed))["GD307"]  # the printed line, applied: one copy
    assert after.status is not Status.FAIL, after.message
