"""`--wheels` and `--arch-lists`: facts that only the torch wheel itself holds.

`--wheels` downloads a release's Linux x86_64 wheel with `pip download --no-deps` (0.5–2.5 GB a
release) and reads `torch/version.py` and the wheel's own `*.dist-info/METADATA` from the zip.
`--arch-lists` also reads the arch list, by one of two routes (`--arch-from`):
- `import`: install the wheel built for the interpreter `--arch-python` names (default: this
  one), with its dependencies (several GB more from 1.13 on: the CUDA and cuDNN wheels), into a
  throwaway venv and run `torch.cuda.get_arch_list()` (or `torch._C._cuda_getArchFlags()`)
  there; no GPU is needed. Needs a wheel for that Python and a release that has the call (1.7+);
- `libraries`: read the records in the wheel's own libraries, one at a time, nothing installed
  or imported (tools/refresh_arch.py): works for every CUDA wheel on PyPI, for any Python.
`auto` (the default) imports where the release has a wheel for that interpreter, else reads the
libraries. pip runs with `PIP_CONFIG_FILE=/dev/null` so a local constraints file or extra index
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

from tools.refresh_arch import read_arch
from tools.refresh_diff import arch_list_from_flags
from tools.refresh_registry import DistFile, FetchError, TorchFacts, read_pins

DOWNLOAD_TIMEOUT_S = 3600
INSTALL_TIMEOUT_S = 3600
RUN_TIMEOUT_S = 300

# get_arch_list() is [] where no GPU is seen; the flag string it splits is there all the same.
# Before 1.6 torch has neither: the script prints null.
_ARCH_SCRIPT = (
    "import json, torch\n"
    "get = getattr(torch.cuda, 'get_arch_list', None)\n"
    "flags = getattr(torch._C, '_cuda_getArchFlags', None)\n"
    "arch = (get() if get else []) or ((flags() or '').split() if flags else None)\n"
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


def arch_list(path: Path, url: str, workdir: Path, python: str = sys.executable
              ) -> tuple[str, ...] | None:
    """Install the wheel with its dependencies into a venv of `python`; its arch list.

    None when the release has no `get_arch_list()` and no flag string (before 1.6).
    """
    venv = workdir / "venv"
    try:
        subprocess.run([python, "-m", "venv", str(venv)], check=True,
                       capture_output=True, timeout=RUN_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise FetchError(url, f"cannot make a venv in {venv}: {exc}") from exc
    inside = str(venv / "bin" / "python")
    _pip(["install", "--index-url", "https://pypi.org/simple/", str(path)], url,
         INSTALL_TIMEOUT_S, inside)
    try:
        done = subprocess.run([inside, "-c", _ARCH_SCRIPT], capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S, check=True)
        flags = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        raise FetchError(url, f"torch.cuda.get_arch_list() failed in the venv: {exc}") from exc
    if flags is not None and not (isinstance(flags, list)
                                  and all(isinstance(f, str) for f in flags)):
        raise FetchError(url, f"torch.cuda.get_arch_list() in the venv gave {flags!r}")
    return None if flags is None else arch_list_from_flags(flags)


def python_tag(python: str) -> str:
    """"cp38" for the interpreter at `python` (a FetchError if it does not run)."""
    if python == sys.executable:
        return f"cp{sys.version_info.major}{sys.version_info.minor}"
    try:
        done = subprocess.run([python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise FetchError(python, f"cannot run this Python: {exc}") from exc
    return done.stdout.strip()


def _for_python(wheels: tuple[DistFile, ...], tag: str) -> tuple[DistFile, ...]:
    return tuple(w for w in wheels if any(i == tag and a in (tag, f"{tag}m")
                                          for i, a, _ in w.tags))


def wheel_facts(wheels: tuple[DistFile, ...], facts: TorchFacts, *, arch: bool,
                scratch: Path | None = None, route: str = "auto",
                python: str = sys.executable) -> TorchFacts:
    """Download one of `wheels`, read it (and its arch list if `arch`, by `route`), drop it.

    `route` is "import" (install the wheel for `python` and ask torch), "libraries" (read the
    wheel's libraries) or "auto" (import where a wheel for `python` exists and the release has
    `get_arch_list()`, else read the libraries).
    """
    if not wheels:
        raise FetchError(facts.source, f"no Linux x86_64 wheel of torch {facts.version}")
    auto = route == "auto"
    if arch and route != "libraries":
        tag = python_tag(python)
        mine = _for_python(wheels, tag)
        if mine:
            wheels, route = mine, "import"
        elif route == "import":
            raise FetchError(facts.source, f"no {tag} Linux x86_64 wheel of torch "
                                           f"{facts.version} to install here")
        else:
            route = "libraries"
    wheel = wheels[0]
    with tempfile.TemporaryDirectory(prefix="refresh-compat-", dir=scratch) as tmp:
        path = download(wheel, Path(tmp))
        facts = read_wheel(path, replace(facts, source=wheel.url, evidence="wheel metadata"))
        found = None
        if arch and route == "import":
            found = arch_list(path, wheel.url, Path(tmp), python)
            if found is None and not auto:
                raise FetchError(wheel.url, f"torch {facts.version} has no get_arch_list() "
                                            "(before 1.6): --arch-from libraries reads it")
        if found is not None:
            facts = replace(facts, arch_list=found, arch_evidence=(
                f"arch list: torch.cuda.get_arch_list()'s flag string, in a venv of "
                f"{python_tag(python)}"))
        elif arch and facts.version_py_cuda:
            read = read_arch(path, Path(tmp))
            facts = replace(facts, arch_list=arch_list_from_flags(read.flags),
                            arch_evidence=f"arch list: {read.how}")
    return facts
