"""The library names a text holds (files, Python extensions, symbols) decoded to the library
family and release they belong to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain.core import explain
from gpudoctor.explain.libraries import decode_file, symbol_owner


@pytest.mark.parametrize(("name", "family", "version"), [
    ("libcudnn_ops_infer.so.8", "cuDNN", "cuDNN 8"),
    ("/usr/local/cuda/lib64/libcudart.so.11.0", "the CUDA runtime", "CUDA 11.0"),
    ("cudart64_110.dll", "the CUDA runtime", "CUDA 11.0"),
    ("cublasLt64_12.dll", "cuBLAS", "CUDA 12"),
    ("cudnn_ops_infer64_8.dll", "cuDNN", "cuDNN 8"),
    ("libnvidia-ml.so.1", "NVML (the NVIDIA driver's management library)", "1"),
    ("nvcuda.dll", "the NVIDIA driver's CUDA library", ""),
    # macOS's names: the version before the extension
    ("@rpath/libcudart.10.0.dylib", "the CUDA runtime", "CUDA 10.0"),
    ("libcuda.dylib", "the NVIDIA driver's CUDA library", ""),
])
def test_library_files_decode_to_their_family_and_release(name: str, family: str,
                                                          version: str) -> None:
    lib = decode_file(name)
    assert lib.family is not None and lib.family.name == family
    assert lib.version == version


def test_python_extensions_are_told_from_libraries() -> None:
    ext = decode_file("/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-"
                      "x86_64-linux-gnu.so")
    assert ext.family is None and ext.extension == "flash_attn_2_cuda"
    tv = decode_file("/venv/lib/python3.7/site-packages/torchvision/_C.so")
    assert tv.extension == "_C" and tv.package == "torchvision"


@pytest.mark.parametrize(("symbol", "family"), [
    ("cublasLtMatmulAlgoGetHeuristic", "cuBLAS"), ("cudnnCreate", "cuDNN"),
    ("_ZN3c104cuda9SetDeviceEi", "PyTorch's own libraries"),
    ("__nvJitLinkAddData_12_1", "nvJitLink"), ("cuInit", "the NVIDIA driver's CUDA library"),
])
def test_symbols_decode_to_the_library_that_exports_them(symbol: str, family: str) -> None:
    owner = symbol_owner(symbol)
    assert owner is not None and owner.name == family


def test_every_driver_api_function_of_the_header_here_is_libcudas() -> None:
    """The CUDA driver API's functions, as cuda.h declares them (`CUresult CUDAAPI cuX(`), each
    decode to the driver's library: the family's prefixes are the first words of those names,
    so the enumeration is checked against the header's count (499 in CUDA 13.0)."""
    header = Path("/usr/local/cuda/include/cuda.h")
    if not header.is_file():
        pytest.skip("no CUDA toolkit here")
    names = sorted(set(re.findall(r"CUresult CUDAAPI (cu[A-Za-z0-9_]+)\(",
                                  header.read_text(encoding="utf-8", errors="replace"))))
    assert len(names) > 400
    owners = {n: symbol_owner(n) for n in names}
    missed = [n for n, f in owners.items() if f is None or f.conflict != "driver-too-old"]
    assert missed == []


def test_a_driver_api_function_missing_is_a_driver_older_than_the_program() -> None:
    """sgl-kernel's common_ops needing cuGreenCtxDestroy (round 15's g48-005, sgl-project's
    issue in its index): green contexts arrived in a later driver, so the libcuda found is
    older than the CUDA the extension was built with (before: read as an extension built for
    another torch)."""
    text = ("ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so"
            ": undefined symbol: cuGreenCtxDestroy")
    best = explain(text, load_tables(), probe=None).diagnoses[0].match.signature
    assert best.cause_class == "driver-too-old"
    assert "older than the CUDA the program was built with" in best.cause
