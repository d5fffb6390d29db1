"""`--wheels` and `--arch-lists`: facts that only the torch wheel itself holds.

`--wheels` downloads a release's Linux x86_64 wheel with `pip download --no-deps` (0.5–2.5 GB a
release) and reads `torch/version.py` and the wheel's own `*.dist-info/METADATA` from the zip.
`--arch-lists` also installs that wheel, with its dependencies (several GB more: the CUDA and
cuDNN wheels), into a throwaway venv and runs `torch.cuda.get_arch_list()` there; no GPU is
needed. pip runs with `PIP_CONFIG_FILE=/dev/null` so a local constraints file or extra index
cannot pick another file; proxy and certificate environment variables still apply.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path

from tools.refresh_diff import arch_list_from_flags
from tools.refresh_registry import DistFile, FetchError, TorchFacts, read_pins

DOWNLOAD_TIMEOUT_S = 3600
INSTALL_TIMEOUT_S = 3600
RUN_TIMEOUT_S = 300

_ARCH_SCRIPT = (
    "import json, torch\n"
    "arch = torch.cuda.get_arch_list() or (torch._C._cuda_getArchFlags() or '').split()\n"
    "print(json.dumps(arch))\n"
)


def _pip(args: list[str], url: str, timeout: int, python: str = sys.executable) -> str:
    """Run pip; a failure is a FetchError naming `url` and pip's last line."""
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    try:
        done = subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True,
                              env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise FetchError(url, f"pip ran past {timeout} s") from exc
    except OSError as exc:
        raise FetchError(url, f"cannot run pip: {exc}") from exc
    if done.returncode != 0:
        last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()),
                    f"pip exited {done.returncode}")
        raise FetchError(url, f"pip: {last.strip()}")
    return done.stdout


def download(wheel: DistFile, dest: Path) -> Path:
    """`pip download --no-deps` the wheel (hash-checked when the index gave a sha256).

    The wheel's own tags are passed as the target, so a wheel for another Python or another
    manylinux level than this machine's is downloaded all the same.
    """
    url = wheel.url.split("#", 1)[0] + (f"#sha256={wheel.sha256}" if wheel.sha256 else "")
    target: list[str] = []
    if wheel.tags:
        interpreter, abi, platform = wheel.tags[0]
        target = ["--only-binary=:all:", "--implementation", interpreter[:2],
                  "--python-version", interpreter[2:], "--abi", abi, "--platform", platform]
    _pip(["download", "--no-deps", "--no-index", *target, "--dest", str(dest),
          f"torch @ {url}"], wheel.url, DOWNLOAD_TIMEOUT_S)
    path = dest / wheel.filename
    if not path.is_file():
        raise FetchError(wheel.url, f"pip reported success but {path.name} is not in {dest}")
    return path


def version_py_cuda(source: str) -> str | None:
    """The `cuda` value assigned in a torch/version.py (None for a CPU build)."""
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == "cuda" and isinstance(
                value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def read_wheel(path: Path, facts: TorchFacts) -> TorchFacts:
    """`facts` with the wheel's own METADATA pins and its torch/version.py `cuda`."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
            if "torch/version.py" not in names or meta is None:
                raise FetchError(str(path), "no torch/version.py or METADATA in the wheel")
            version_py = archive.read("torch/version.py").decode("utf-8", "replace")
            metadata = archive.read(meta).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile) as exc:
        raise FetchError(str(path), f"not a readable wheel: {exc}") from exc
    try:
        cuda = version_py_cuda(version_py)
    except SyntaxError as exc:
        raise FetchError(str(path), f"torch/version.py does not parse: {exc}") from exc
    return replace(facts, pins=read_pins(metadata), version_py_cuda=cuda or None)


def arch_list(path: Path, url: str, workdir: Path) -> tuple[str, ...]:
    """Install the wheel with its dependencies into a venv under `workdir`; its arch list."""
    venv = workdir / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                       capture_output=True, timeout=RUN_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise FetchError(url, f"cannot make a venv in {venv}: {exc}") from exc
    python = str(venv / "bin" / "python")
    _pip(["install", "--index-url", "https://pypi.org/simple/", str(path)], url,
         INSTALL_TIMEOUT_S, python)
    try:
        done = subprocess.run([python, "-c", _ARCH_SCRIPT], capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S, check=True)
        return arch_list_from_flags(json.loads(done.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        raise FetchError(url, f"torch.cuda.get_arch_list() failed in the venv: {exc}") from exc


def wheel_facts(wheels: tuple[DistFile, ...], facts: TorchFacts, *, arch: bool,
                scratch: Path | None = None) -> TorchFacts:
    """Download the first of `wheels` (one for this Python when `arch`), read it, drop it."""
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    if arch:
        wheels = tuple(w for w in wheels if any(i == python and a == python
                                                for i, a, _ in w.tags))
        if not wheels:
            raise FetchError(facts.source, f"no {python} Linux x86_64 wheel of torch "
                                           f"{facts.version} to install here")
    if not wheels:
        raise FetchError(facts.source, f"no Linux x86_64 wheel of torch {facts.version}")
    wheel = wheels[0]
    with tempfile.TemporaryDirectory(prefix="refresh-compat-", dir=scratch) as tmp:
        path = download(wheel, Path(tmp))
        facts = read_wheel(path, replace(facts, source=wheel.url, evidence="wheel metadata"))
        if arch:
            facts = replace(facts, arch_list=arch_list(path, wheel.url, Path(tmp)))
    return facts
