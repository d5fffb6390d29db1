"""`gpudoctor.probes.native.read_version`: a version integer read from a native library in a
child process, each way that can go wrong mapped to its reason (the mapping in the module's
docstring), on real compiled libraries."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpudoctor.model import Reason, Unavailable
from gpudoctor.probes.native import read_version
from tests.conftest import CompileFake

# each test starts a child Python that loads a compiled library (~0.1 s and more): slow too
pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def unavailable(value: object, reason: Reason) -> Unavailable:
    assert isinstance(value, Unavailable), value
    assert value.reason is reason, value
    return value


@pytest.fixture(scope="module")
def cudnn_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library whose cudnnGetVersion returns the version (size_t), as cuDNN's does."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler (gcc) to build the library")
    out = tmp_path_factory.mktemp("native")
    (out / "v.c").write_text("#include <stddef.h>\nsize_t cudnnGetVersion(void) "
                             "{ return 91000; }\n")
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(out / "libcudnn.so.9"),
                    str(out / "v.c")], check=True, capture_output=True, timeout=60)
    return out / "libcudnn.so.9"


def test_the_version_a_status_call_gives(fake_libcuda: Path) -> None:
    lib = str(fake_libcuda / "libcuda.so.1")
    assert read_version(lib, "cuDriverGetVersion", env={"FAKE_CUDA_DRIVER_VERSION": "12040"}) \
        == 12040


def test_the_version_a_size_t_call_returns(cudnn_like: Path) -> None:
    assert read_version(str(cudnn_like), "cudnnGetVersion", returns_size_t=True, env={}) == 91000


def test_an_error_status_is_an_error_naming_it(fake_libcuda: Path) -> None:
    fact = read_version(str(fake_libcuda / "libcuda.so.1"), "cuDriverGetVersion",
                        env={"FAKE_CUDA_STATUS": "999"})
    assert unavailable(fact, Reason.ERROR).message == "cuDriverGetVersion returned error 999"


def test_a_missing_symbol_is_not_supported(compile_fake: CompileFake) -> None:
    lib = compile_fake("fake_libcuda.c", "libcuda.so.1", ("FAKE_CUDA_NO_SYMBOL",))
    fact = read_version(str(lib / "libcuda.so.1"), "cuDriverGetVersion", env={})
    assert unavailable(fact, Reason.NOT_SUPPORTED).message.endswith(" has no cuDriverGetVersion")


def test_a_library_that_cannot_be_loaded_keeps_the_loaders_message(tmp_path: Path) -> None:
    missing = str(tmp_path / "libcuda.so.1")
    fact = unavailable(read_version(missing, "cuDriverGetVersion", env={}), Reason.NOT_INSTALLED)
    assert fact.message == f"{missing} cannot be loaded"
    assert fact.detail is not None and "No such file" in fact.detail


def test_a_library_that_aborts_its_loader_is_a_crash(fake_libcuda: Path) -> None:
    lib = str(fake_libcuda / "libcuda.so.1")
    fact = read_version(lib, "cuDriverGetVersion", env={"FAKE_CUDA_ABORT": "1"})
    crashed = unavailable(fact, Reason.CRASHED)
    assert crashed.message == f"loading {lib} crashed the process that loaded it (signal 6)"


def test_a_native_library_that_blocks_is_abandoned(tmp_path: Path) -> None:
    """libcuda (or libcudart, libcudnn) whose version call blocks: the child that loaded it is
    killed at the deadline; the reading is TIMEOUT."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler (gcc) to build the blocking library")
    source = tmp_path / "blocking.c"
    source.write_text("#include <unistd.h>\n"
                      "int cuDriverGetVersion(int *v) { for (;;) pause(); *v = 0; return 0; }\n")
    lib = tmp_path / "libcuda.so.1"
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(lib), str(source)], check=True,
                   capture_output=True, timeout=60)
    fact = read_version(str(lib), "cuDriverGetVersion", timeout=1.0)
    assert isinstance(fact, Unavailable)
    assert fact.reason is Reason.TIMEOUT
    assert fact.message.startswith(f"{lib} did not answer within 1 s")


@pytest.mark.parametrize("style", ["size_t", "intptr"])
def test_the_childs_line_is_the_one_json_dumps_writes(cudnn_like: Path, fake_libcuda: Path,
                                                      style: str) -> None:
    """The child writes its JSON line by hand (no `import json`): byte for byte what
    `json.dumps` writes of the same answer."""
    import json
    import sys

    from gpudoctor import childproc
    from gpudoctor.probes.native import _CHILD

    lib, symbol, env, answer = (
        (str(cudnn_like), "cudnnGetVersion", {}, {"value": 91000}) if style == "size_t" else
        (str(fake_libcuda / "libcuda.so.1"), "cuDriverGetVersion",
         {"FAKE_CUDA_DRIVER_VERSION": "12040"}, {"value": 12040, "status": 0}))
    for argv, said in (([lib, symbol, style], answer),
                       ([lib, "noSuchSymbol", style], {"no_symbol": "noSuchSymbol"})):
        out = childproc.run([sys.executable, "-I", "-S", "-c", _CHILD, *argv], 30.0, env).stdout
        assert out == json.dumps(said) + "\n"


def test_a_path_json_must_escape_is_read_back_exactly(tmp_path: Path) -> None:
    """Quotes, a backslash and a non-ASCII letter in the path of a library that cannot be
    loaded: the loader's message comes back whole, the line parsed."""
    folder = tmp_path / 'a "quoted" \\ dir é'
    folder.mkdir()
    missing = str(folder / "libcuda.so.1")
    fact = unavailable(read_version(missing, "cuDriverGetVersion", env={}), Reason.NOT_INSTALLED)
    assert fact.message == f"{missing} cannot be loaded"
    assert fact.detail is not None and "No such file" in fact.detail
