"""`--wheels` offline: a real `pip download` of a wheel served from a file:// URL.

The wheel is built here from the installed torch's real torch/version.py (its `cuda` value set to
13.0, so the expected variant does not depend on which torch build pip resolved) and the
recorded METADATA of torch 2.11.0. `--arch-lists` by import needs the CUDA wheels from the
registry (several GB), so only its conversion of a real `get_arch_list()` is tested here; by
the wheel's libraries it is tested on a cp38 wheel of torch 1.6.0's real files and library
excerpts (tests/fixtures/registry/README.md), which this newer Python cannot import.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.tools.refresh_kit import (
    REGISTRY,
    Recorded,
    plant_variant_cudnn,
    recorded,
    row_span,
    tables_copy,
)
from tools.refresh_compat import main
from tools.refresh_diff import arch_list_from_flags
from tools.refresh_wheels import version_py_cuda

__all__ = ["recorded", "tables_copy"]  # fixtures

METADATA = REGISTRY / "metadata" / "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl.metadata"


def _torch_file(name: str) -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed in this environment")
    return Path(spec.origin).parent / name


def _torch_says(expr: str) -> object:
    done = subprocess.run([sys.executable, "-c", f"import json, torch; print(json.dumps({expr}))"],
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_version_py_of_the_installed_torch() -> None:
    source = _torch_file("version.py").read_text(encoding="utf-8")
    assert version_py_cuda(source) == _torch_says("torch.version.cuda")


@pytest.mark.needs_torch
@pytest.mark.slow
def test_arch_list_forms() -> None:
    assert arch_list_from_flags(["sm_120", "sm_75", "compute_120", "sm_90a"]) == (
        "7.5", "9.0a", "12.0+PTX")
    flags = _torch_says("torch.cuda.get_arch_list()")
    assert isinstance(flags, list)
    converted = arch_list_from_flags(flags)
    assert len(converted) == len({re.sub(r"^(sm|compute)_", "", f) for f in flags})
    assert all(re.fullmatch(r"\d+\.\d[a-z]?(\+PTX)?", cc) for cc in converted)


def _wheel(directory: Path, version: str, metadata: Path, cuda: str) -> Path:
    version_py = re.sub(r"^(cuda\b[^=]*=\s*).*$", rf"\1'{cuda}'",
                        _torch_file("version.py").read_text(encoding="utf-8"), flags=re.M)
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    path = directory / f"torch-{version}-{tag}-{tag}-linux_x86_64.whl"
    info = f"torch-{version}.dist-info"
    files = {"torch/version.py": version_py.encode(),
             f"{info}/METADATA": metadata.read_bytes(),
             f"{info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: gpudoctor-tests\n"
                               f"Root-Is-Purelib: false\nTag: {tag}-{tag}-linux_x86_64\n"
                               ).encode()}
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", record)
    return path


def _serve(recorded: Recorded, wheel: Path, version: str) -> str:
    url = wheel.as_uri()
    recorded.override["https://pypi.org/simple/torch/"] = json.dumps({
        "meta": {"api-version": "1.1"}, "name": "torch", "versions": [version],
        "files": [{"filename": wheel.name, "url": url, "yanked": False,
                   "hashes": {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}}],
    }).encode()
    recorded.answers[url + ".metadata"] = (404, None)
    recorded.answers[f"https://pypi.org/pypi/torch/{version}/json"] = (404, None)
    return url


def _run(recorded: Recorded, tables: Path, version: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--tables", str(tables), "--only", "torch", "--torch", version, "--wheels"],
                fetch=recorded.fetch, out=out, err=err)
    return code, out.getvalue().splitlines(), err.getvalue()


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the wheel is tagged linux_x86_64")
def test_wheels_mode_reads_the_downloaded_metadata(recorded: Recorded, tables_copy: Path,
                                                   tmp_path: Path) -> None:
    url = _serve(recorded, _wheel(tmp_path, "2.11.0", METADATA, "13.0"), "2.11.0")
    plant_variant_cudnn(tables_copy, "2.11.0", "cu130", "9.17.1.4")

    code, lines, err = _run(recorded, tables_copy, "2.11.0")

    assert code == 1, err
    assert ("torch 2.11.0 cu130: cudnn tables 9.17.1.4, wheel metadata 9.19.0.56 "
            "(Requires-Dist: nvidia-cudnn-cu13==9.19.0.56)") in lines
    assert f"    {url}" in lines


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the wheel is tagged linux_x86_64")
def test_wheels_mode_reads_torch_version_py(recorded: Recorded, tables_copy: Path,
                                            tmp_path: Path) -> None:
    metadata = REGISTRY / "metadata" / "torch-1.10.0-cp39-cp39-manylinux1_x86_64.whl.metadata"
    _serve(recorded, _wheel(tmp_path, "1.10.0", metadata, "10.2"), "1.10.0")
    path = tables_copy / "torch.toml"
    lines = path.read_text(encoding="utf-8").split("\n")
    span = row_span(lines, "torch.toml", "1.10.0")
    assert span is not None
    at = next(i for i in range(*span) if lines[i].startswith("pypi_default"))
    lines[at] = 'pypi_default = "cu111"'
    path.write_text("\n".join(lines), encoding="utf-8")

    code, out, err = _run(recorded, tables_copy, "1.10.0")

    assert code == 1, err
    assert ("torch 1.10.0: pypi_default tables cu111, wheel cu102 "
            "(torch/version.py: cuda = '10.2')") in out


LIBRARIES = REGISTRY / "libraries"


def _cp38_wheel(directory: Path) -> Path:
    """torch 1.6.0's cp38 wheel as far as the tool reads it: real files and library excerpts."""
    path = directory / "torch-1.6.0-cp38-cp38-manylinux1_x86_64.whl"
    info = "torch-1.6.0.dist-info"
    excerpt = {name: (LIBRARIES / f"torch-1.6.0-{name}").read_bytes() for name in (
        "libtorch_python.so.flags.bin", "libtorch_cuda.so.gencode.bin",
        "libtorch_cuda.so.fatbin.bin", "torch-version.py")}
    files = {
        "torch/version.py": excerpt["torch-version.py"],
        "torch/lib/libtorch_python.so": excerpt["libtorch_python.so.flags.bin"],
        "torch/lib/libtorch_cuda.so": excerpt["libtorch_cuda.so.gencode.bin"]
        + excerpt["libtorch_cuda.so.fatbin.bin"],
        f"{info}/METADATA": (REGISTRY / "metadata" / f"{path.name}.metadata").read_bytes(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                         b"Tag: cp38-cp38-linux_x86_64\n",
    }
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        record = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
        archive.writestr(f"{info}/RECORD", record)
    return path


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the wheel is tagged manylinux1_x86_64")
def test_arch_lists_of_a_wheel_for_another_python_are_read_in_its_libraries(
        recorded: Recorded, tables_copy: Path, tmp_path: Path) -> None:
    _serve(recorded, _cp38_wheel(tmp_path), "1.6.0")
    path = tables_copy / "torch.toml"
    text = path.read_text(encoding="utf-8")
    planted = text.replace('{ tag = "cu102", arch_list = ["3.7", "5.0", "6.0", "7.0", "7.5"] },',
                           '{ tag = "cu102" },', 1)
    assert planted != text
    path.write_text(planted, encoding="utf-8")
    argv = ["--tables", str(tables_copy), "--only", "torch", "--torch", "1.6.0", "--wheels",
            "--arch-lists"]

    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--write"], fetch=recorded.fetch, out=out, err=err)

    assert code == 1, err.getvalue()
    assert ("torch 1.6.0 cu102: arch_list tables [(none)], wheel get_arch_list "
            "[3.7, 5.0, 6.0, 7.0, 7.5]") in out.getvalue().splitlines()
    written = path.read_text(encoding="utf-8")
    assert '{ tag = "cu102", arch_list = ["3.7", "5.0", "6.0", "7.0", "7.5"] },' in written
    assert ("cu102 arch list (torch.cuda.get_arch_list()) VERIFIED from the PyPI wheel itself "
            "(its METADATA, torch/version.py; arch list: the flag string "
            "torch.cuda.get_arch_list() returns, read in torch/lib/libtorch_python.so (sm_37 "
            "sm_50 sm_60 sm_70 sm_75); agreeing with the build's NVCC architecture flags"
            ) in written

    again = io.StringIO()
    assert main(argv, fetch=recorded.fetch, out=again, err=err) == 0, err.getvalue()
    assert "No differences." in again.getvalue().splitlines()


def test_the_import_route_needs_a_wheel_for_its_python(recorded: Recorded, tables_copy: Path,
                                                       tmp_path: Path) -> None:
    _serve(recorded, _cp38_wheel(tmp_path), "1.6.0")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--tables", str(tables_copy), "--only", "torch", "--torch", "1.6.0", "--wheels",
                 "--arch-lists", "--arch-from", "import"], fetch=recorded.fetch, out=out, err=err)
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert (code, out.getvalue()) == (2, "")
    assert f"no {tag} Linux x86_64 wheel of torch 1.6.0 to install here" in err.getvalue()


@pytest.mark.parametrize("option", [["--arch-from", "libraries"], ["--arch-python", "python3"]])
def test_arch_options_need_arch_lists(recorded: Recorded, option: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--wheels", *option], fetch=recorded.fetch)
    assert exc.value.code == 2
    assert "--arch-from and --arch-python need --arch-lists" in capsys.readouterr().err
