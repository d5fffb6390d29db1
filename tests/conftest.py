"""Shared test set-up: what the markers do, and the fake native libraries.

The markers are declared in pyproject.toml (`--strict-markers`: an undeclared one is an error):
`slow` (over ~0.5 s here; `-m "not slow"` is the fast subset), `subprocess` (starts a program),
`needs_torch` (skipped here when torch is not installed) and `gpu` (skipped unless `--run-gpu`).

The fakes under `tests/fakes/` are C sources compiled once per session into a temporary
directory; a test puts that directory on `LD_LIBRARY_PATH` of a *new* process (the loader reads
it only at process start) so the real binding and the real probe load the fake. Without gcc the
tests that need a fake are skipped, not failed.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.model import TorchFacts, Unavailable
from gpudoctor.probes.interface import Deps

REPO_ROOT = Path(__file__).resolve().parent.parent
FAKES = Path(__file__).resolve().parent / "fakes"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-gpu",
        action="store_true",
        default=False,
        help="run the tests marked gpu (they need a real NVIDIA GPU and driver)",
    )
    parser.addoption(
        "--check-subprocess-marker",
        action="store_true",
        default=False,
        help="fail a test that starts a process without the subprocess marker",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`needs_torch` tests skip where torch is not installed, `gpu` tests unless --run-gpu."""
    no_torch = importlib.util.find_spec("torch") is None
    skip_torch = pytest.mark.skip(reason="needs torch installed (pip install torch)")
    skip_gpu = pytest.mark.skip(reason="needs a real GPU: run with --run-gpu")
    for item in items:
        if no_torch and "needs_torch" in item.keywords:
            item.add_marker(skip_torch)
        if "gpu" in item.keywords and not config.getoption("--run-gpu"):
            item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _subprocess_marker_is_honest(request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """With --check-subprocess-marker: a test that starts a process (subprocess.Popen, which
    childproc and subprocess.run use too) without the `subprocess` marker fails, naming the
    program, so that `-m "not subprocess"` stays free of new processes."""
    started: list[object] = []
    if (request.config.getoption("--check-subprocess-marker")
            and "subprocess" not in request.keywords):
        real = subprocess.Popen._execute_child  # type: ignore[attr-defined]

        def record(self: subprocess.Popen[bytes], args: object, *rest: Any, **kw: Any) -> Any:
            started.append(args)
            return real(self, args, *rest, **kw)

        monkeypatch.setattr(subprocess.Popen, "_execute_child", record)
    yield
    if started:
        pytest.fail(f"starts a process ({started[0]!r}) but is not marked subprocess",
                    pytrace=False)


CompileFake = Callable[[str, str, Sequence[str]], Path]


@pytest.fixture(scope="session")
def compile_fake(tmp_path_factory: pytest.TempPathFactory) -> CompileFake:
    """`compile_fake("fake_nvml.c", "libnvidia-ml.so.1", defines)` → a directory holding it.

    Each (source, soname, defines) is built once per session, in a directory of its own, so
    that directory can go on `LD_LIBRARY_PATH` alone.
    """
    gcc = shutil.which("gcc") or shutil.which("cc")
    built: dict[tuple[str, str, tuple[str, ...]], Path] = {}

    def build(source: str, soname: str, defines: Sequence[str] = ()) -> Path:
        if gcc is None:
            pytest.skip("no C compiler (gcc) to build the fake libraries")
        key = (source, soname, tuple(defines))
        if key not in built:
            out = tmp_path_factory.mktemp(Path(source).stem)
            argv = [gcc, "-shared", "-fPIC", "-O1", f"-Wl,-soname,{soname}",
                    *(f"-D{d}" for d in defines), "-o", str(out / soname), str(FAKES / source)]
            result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
            if result.returncode != 0:
                pytest.fail(f"building {source} failed:\n{result.stderr}")
            built[key] = out
        return built[key]

    return build


@pytest.fixture(scope="session")
def fake_nvml(compile_fake: CompileFake) -> Path:
    """Directory with the fake libnvidia-ml.so.1 (a current driver)."""
    return compile_fake("fake_nvml.c", "libnvidia-ml.so.1", ())


@pytest.fixture(scope="session")
def fake_nvml_old(compile_fake: CompileFake) -> Path:
    """Directory with a fake libnvidia-ml.so.1 that lacks the newer functions."""
    return compile_fake("fake_nvml.c", "libnvidia-ml.so.1", ("FAKE_NVML_OLD",))


@pytest.fixture(scope="session")
def fake_libcuda(compile_fake: CompileFake) -> Path:
    """Directory with a fake libcuda.so.1 exporting cuDriverGetVersion."""
    return compile_fake("fake_libcuda.c", "libcuda.so.1", ())


@pytest.fixture(scope="session")
def real_torch_facts() -> TorchFacts:
    """The torch probe run once against the torch installed for the test interpreter."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed for the test interpreter")
    from gpudoctor.probes.pytorch import probe_torch

    facts = probe_torch(Deps(torch_timeout=120))
    assert not isinstance(facts, Unavailable), facts
    return facts


# ---------------------------------------------------------------------------- the torch under test


def installed_torch_version_py() -> dict[str, str]:
    """`torch/version.py` of the torch installed for the test interpreter, read without importing
    torch: `__version__` ("2.14.1+cu130", "2.13.0+cpu") and `cuda` ("13.0", or "None").

    The suite runs against whichever torch pip resolved (PyPI's default is a CUDA build, the
    CPU wheel comes from PyTorch's own index); tests that depend on the build ask this.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        pytest.skip("torch is not installed for the test interpreter")
    text = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        name = name.split(":")[0].strip()
        if sep and name.isidentifier():
            found[name] = value.strip().strip("'\"")
    return found


def installed_torch_cuda() -> str | None:
    """torch.version.cuda of the installed torch; None for a CPU build."""
    value = installed_torch_version_py().get("cuda", "None")
    return None if value in ("None", "") else value


@pytest.fixture(scope="session")
def torch_cuda() -> str | None:
    """torch.version.cuda of the installed torch (None: a CPU build); skips without torch."""
    return installed_torch_cuda()
