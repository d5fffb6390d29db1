"""tools/refresh_arch.py: a wheel's arch list read from its libraries, offline.

The records are real bytes: excerpts of the PyPI wheels of torch 1.4.0 and 1.6.0 recorded under
tests/fixtures/registry/libraries/ (see its README), and the libraries of the torch installed
here. The wheels under test are zips of those bytes.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from tests.tools.refresh_kit import REGISTRY
from tools.refresh_arch import ELF, PTX, fatbin_entries, gencode_flags, read_arch, read_library
from tools.refresh_diff import arch_list_from_flags
from tools.refresh_registry import FetchError

LIBRARIES = REGISTRY / "libraries"
GENCODE_140 = LIBRARIES / "torch-1.4.0-libtorch.so.gencode.bin"
FATBIN_140 = LIBRARIES / "torch-1.4.0-libcaffe2_detectron_ops_gpu.so.fatbin.bin"
FLAGS_160 = LIBRARIES / "torch-1.6.0-libtorch_python.so.flags.bin"
GENCODE_160 = LIBRARIES / "torch-1.6.0-libtorch_cuda.so.gencode.bin"
FATBIN_160 = LIBRARIES / "torch-1.6.0-libtorch_cuda.so.fatbin.bin"
FLAGS_1X = ("sm_37", "sm_50", "sm_60", "sm_70", "sm_75")


def wheel(directory: Path, members: dict[str, list[Path]]) -> Path:
    """A wheel whose member NAME holds the concatenated bytes of its paths."""
    path = directory / "torch-1.6.0-cp38-cp38-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, parts in members.items():
            archive.writestr(name, b"".join(p.read_bytes() for p in parts))
    return path


def test_the_records_of_torch_1_4_0() -> None:
    build = read_library(GENCODE_140.read_bytes())
    assert build.flags == ()
    assert build.gencode == (("sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75",
                              "compute_37"),)
    assert arch_list_from_flags(build.gencode[0]) == ("3.7+PTX", "5.0", "6.0", "6.1", "7.0",
                                                      "7.5")
    assert fatbin_entries(FATBIN_140.read_bytes()) == Counter(
        {(PTX, 37): 1, **{(ELF, arch): 1 for arch in (37, 50, 60, 61, 70, 75)}})


def test_the_records_of_torch_1_6_0() -> None:
    assert read_library(FLAGS_160.read_bytes()).flags == (FLAGS_1X,)
    assert read_library(GENCODE_160.read_bytes()).gencode == (FLAGS_1X,)
    assert fatbin_entries(FATBIN_160.read_bytes()) == Counter(
        {(ELF, arch): 1 for arch in (37, 50, 60, 70, 75)})


def test_gencode_forms() -> None:
    text = b"-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_120,code=compute_120"
    assert gencode_flags(text) == ("sm_90a", "compute_120")
    assert gencode_flags(b"Error code=%s and/or %s.") == ()


def test_a_wheel_with_the_flag_string(tmp_path: Path) -> None:
    path = wheel(tmp_path, {"torch/lib/libtorch_python.so": [FLAGS_160],
                            "torch/lib/libtorch_cuda.so": [GENCODE_160, FATBIN_160]})
    read = read_arch(path, tmp_path)
    assert read.flags == FLAGS_1X
    assert read.how.startswith("the flag string torch.cuda.get_arch_list() returns, read in "
                               "torch/lib/libtorch_python.so (sm_37 sm_50 sm_60 sm_70 sm_75); "
                               "agreeing with the build's NVCC architecture flags")
    assert "ELF for sm_37, sm_50, sm_60, sm_70, sm_75 and no PTX" in read.how
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # libraries deleted


def test_a_wheel_without_it_gives_the_nvcc_flags(tmp_path: Path) -> None:
    path = wheel(tmp_path, {"torch/lib/libtorch.so": [GENCODE_140, FATBIN_140]})
    read = read_arch(path, tmp_path)
    assert arch_list_from_flags(read.flags) == ("3.7+PTX", "5.0", "6.0", "6.1", "7.0", "7.5")
    assert read.how.startswith("the build's NVCC architecture flags (torch.__config__.show()), "
                               "read in torch/lib/libtorch.so")
    assert "and PTX for compute_37" in read.how


def test_records_that_disagree_are_refused(tmp_path: Path) -> None:
    path = wheel(tmp_path, {"torch/lib/libtorch_python.so": [FLAGS_160],
                            "torch/lib/libtorch.so": [GENCODE_140, FATBIN_140]})
    with pytest.raises(FetchError, match=r"get_arch_list\(\)'s string \(sm_37 sm_50 sm_60 sm_70 "
                                         r"sm_75\) and the NVCC architecture flags .* disagree"):
        read_arch(path, tmp_path)


def test_an_arch_without_its_kernels_is_refused(tmp_path: Path) -> None:
    path = wheel(tmp_path, {"torch/lib/libtorch.so": [GENCODE_140, FATBIN_160]})
    with pytest.raises(FetchError, match="sm_61 is in the arch list, but no fatbin of "
                                         "torch's libraries holds ELF for it"):
        read_arch(path, tmp_path)


def test_vendored_libraries_are_not_torch_s(tmp_path: Path) -> None:
    path = wheel(tmp_path, {"torch/lib/libcudnn.so.7": [GENCODE_140, FATBIN_140],
                            "torch/lib/libnvrtc-5e8a26c9.so.10.1": [FLAGS_160]})
    with pytest.raises(FetchError, match="no arch flag string and no NVCC architecture flags"):
        read_arch(path, tmp_path)


def test_a_file_that_is_not_a_wheel(tmp_path: Path) -> None:
    path = tmp_path / "torch-1.6.0-cp38-cp38-linux_x86_64.whl"
    path.write_bytes(FATBIN_140.read_bytes())
    with pytest.raises(FetchError, match="not a readable wheel"):
        read_arch(path, tmp_path)


def test_a_cut_fatbin_lists_only_the_entries_it_holds() -> None:
    data = FATBIN_140.read_bytes()
    full = fatbin_entries(data)
    for cut in range(len(data)):
        part = fatbin_entries(data[:cut])
        assert part <= full and (part != full or cut == len(data)), cut
    assert fatbin_entries(data + data) == full + full


def _torch_lib() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed in this environment")
    return Path(spec.origin).parent / "lib"


@pytest.mark.needs_torch
@pytest.mark.slow
def test_the_flag_string_of_the_installed_torch() -> None:
    code = "import torch; print(torch._C._cuda_getArchFlags() or '')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=True)
    flags = tuple(done.stdout.strip().splitlines()[-1].split()) if done.stdout.strip() else ()
    if not flags:
        pytest.skip("the installed torch is a CPU build")
    assert read_library((_torch_lib() / "libtorch_python.so").read_bytes()).flags == (flags,)


@pytest.mark.slow
def test_fatbin_entries_agree_with_cuobjdump() -> None:
    lib = _torch_lib()
    cuobjdump = shutil.which("cuobjdump") or next(
        (str(p) for p in lib.parents[1].glob("triton/backends/nvidia/bin/cuobjdump")), None)
    library = next((p for p in sorted(lib.glob("libtorch_cuda*.so"), key=lambda p: p.stat().st_size)
                    if fatbin_entries(p.read_bytes())), None)
    if cuobjdump is None or library is None:
        pytest.skip("no cuobjdump, or no torch library with device code here")
    done = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", str(library)],
                          capture_output=True, text=True, timeout=300, check=False)
    listed = Counter(((ELF if kind == "cubin" else PTX), int(arch)) for arch, kind in
                     re.findall(r"\.(?:sm|compute)_(\d+)[a-z]?\.(cubin|ptx)\b", done.stdout))
    assert listed
    assert fatbin_entries(library.read_bytes()) == listed
