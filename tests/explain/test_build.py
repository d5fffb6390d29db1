"""The compiler chain read from what its messages name (gpudoctor/explain/build.py), and other
programs' out-of-memory wordings (oom.py): each family tested on texts worded as other
releases and programs print them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain

TABLES = load_tables()


def best(text: str) -> tuple[str, str]:
    expl = explain(text, TABLES, probe=None)
    if not expl.diagnoses:
        return "", ""
    sig = expl.diagnoses[0].match.signature
    return sig.id, sig.cause_class


@pytest.mark.parametrize(("text", "cls"), [
    # an architecture every toolkit once compiled for and later toolkits dropped: the GPU
    ("nvcc fatal   : Unsupported gpu architecture 'compute_20'", "arch-not-in-build"),
    ("cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture "
     "(-arch)\n\nOptions: -I/opt/conda/lib/python3.7/site-packages/cupy/core/include "
     "-arch=compute_30 -ftz=true\n", "arch-not-in-build"),
    # an architecture newer than the compiler: the compiler
    ("nvcc fatal   : Unsupported gpu architecture 'compute_90'", "compiler-too-old-for-arch"),
    ("NVRTC compilation error: nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
     "Options: --gpu-architecture=compute_89 -default-device", "compiler-too-old-for-arch"),
])
def test_an_architecture_the_compiler_refuses_is_read_against_the_tables(text: str,
                                                                         cls: str) -> None:
    assert best(text)[1] == cls


@pytest.mark.parametrize("text", [
    # glibc's _Float128 declarations that nvcc 9's front end could not parse (gcc 7 headers)
    ("$ nvcc -c ops.cu -o ops.o\n/usr/include/x86_64-linux-gnu/bits/floatn.h(74): error: invalid "
     "argument to attribute \"__mode__\"\n\n/usr/include/x86_64-linux-gnu/bits/floatn.h(86): "
     "error: identifier \"__float128\" is undefined\n"),
    # libstdc++'s own header failing while CMake builds a CUDA object
    ("[ 12%] Building CUDA object CMakeFiles/ops.dir/src/scan.cu.o\n/usr/include/c++/12/bits/"
     "std_function.h:435:145: error: parameter packs not expanded with '...':\n"),
])
def test_host_headers_nvcc_cannot_compile_are_the_host_toolchain(text: str) -> None:
    assert best(text) == ("host-headers-rejected-by-nvcc", "host-compiler-unsupported")


@pytest.mark.parametrize("text", [
    # the program's template instantiated inside the standard library: its own error
    ("/usr/include/c++/11/bits/stl_algo.h:1950:22: error: no match for 'operator<' (operand "
     "types are 'Box' and 'Box')\nsrc/nms.cu:41:12:   required from here\n"),
    # a host header that is not there is not one that does not compile
    ("src/kernel.cu:3:10: fatal error: /usr/include/eigen3/Eigen/Dense: No such file or "
     "directory\n"),
    # a host header failing in a build that compiles no CUDA
    ("/usr/include/python3.10/pyport.h:12:2: error: #error \"unsupported platform\"\n"),
])
def test_a_host_header_error_of_the_programs_own_making_is_not_the_toolchain(text: str) -> None:
    assert best(text)[0] != "host-headers-rejected-by-nvcc"


def test_a_triton_kernel_the_driver_cannot_load_is_the_driver() -> None:
    """Triton compiles for the GPU it runs on: an invalid image is no missing architecture."""
    text = ("  File \"/opt/venv/lib/python3.11/site-packages/triton/backends/nvidia/driver.py\", "
            "line 48, in load_binary\n    return self.utils.load_binary(name, kernel, shared, "
            "device)\nRuntimeError: Triton Error [CUDA]: device kernel image is invalid\n")
    assert best(text)[1] == "driver-too-old"


@pytest.mark.parametrize("text", [
    ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 2,147,483,648 bytes "
     "(allocated so far: 21,474,836,480 bytes)."),
    ("cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 8388608 bytes (total "
     "11811160064 bytes)"),
])
def test_cupys_out_of_memory_is_out_of_memory(text: str) -> None:
    assert best(text) == ("cupy-out-of-memory", "out-of-memory")


def _host_configs() -> list[Path]:
    """The toolkits' crt/host_config.h on this machine (a CUDA toolkit, Triton's copy)."""
    found = sorted(Path("/usr/local").glob("cuda*/include/crt/host_config.h"))
    for entry in sys.path:
        found += sorted(Path(entry).glob("triton/backends/nvidia/include/crt/host_config.h"))
    return [p for p in found if p.is_file()]


def test_every_host_config_error_about_the_compiler_is_explained() -> None:
    """Complete against the source: each `#error` of host_config.h that refuses the host
    compiler (all but the one about a PowerPC platform) explains as host-compiler-unsupported,
    and also cut where a terminal wraps it."""
    headers = _host_configs()
    if not headers:
        pytest.skip("no CUDA toolkit's host_config.h on this machine")
    errors = {line.partition("#error")[2].strip(" -") for h in headers
              for line in h.read_text(encoding="utf-8", errors="replace").splitlines()
              if line.lstrip().startswith("#error")}
    about_compiler = [e for e in errors if "PPC platform" not in e]
    assert len(about_compiler) >= 10, errors
    for message in about_compiler:
        assert best(f"/usr/local/cuda/include/crt/host_config.h:151:2: error: #error -- "
                    f"{message}")[1] == "host-compiler-unsupported", message
        wrapped = message.replace(" version!", "\nversion!", 1).replace(" is not ", "\nis not ", 1)
        assert best(wrapped)[1] == "host-compiler-unsupported", wrapped


@pytest.mark.parametrize("text", [
    # an older toolkit's wording, wrapped by the terminal (cpyrit, CUDA 4.0)
    "/usr/local/cuda/bin/../include/host_config.h:82:2: error: #error -- unsupported \n"
    "GNU version! gcc 4.5 and up are not supported!",
    # nvcc's own check (Caffe on macOS)
    "nvcc fatal   : The version ('60100') of the host compiler ('Apple clang') is not supported",
])
def test_other_wordings_of_the_refused_host_compiler(text: str) -> None:
    assert best(text)[1] == "host-compiler-unsupported"


@pytest.mark.parametrize(("text", "tool"), [
    # ComfyUI's Triton on Windows (round 10, g33-034)
    ("2024-12-05 14:35:02,706- root:392- ERROR- !!! Exception during processing !!! Cannot "
     "find ptxas.exe", "ptxas"),
    # cudarc's build script in a container (round 10, g35-015)
    ("19.99   Failed to execute `nvcc`: Os { code: 2, kind: NotFound, message: \"No such file "
     "or directory\" }", "nvcc"),
    # Numba
    ("NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:", "libNVVM"),
])
def test_a_toolkit_tool_not_found_is_the_toolkit_missing(text: str, tool: str) -> None:
    expl = explain(text, TABLES, probe=None)
    sig = expl.diagnoses[0].match.signature
    assert sig.cause_class == "toolkit-missing" and tool in sig.title


def test_a_tool_speaking_of_another_missing_program_is_not_it_missing() -> None:
    # nvcc looks for the host compiler: nvcc itself is there
    assert best("nvcc fatal   : Cannot find compiler 'cl.exe' in PATH")[0] != \
        "toolkit-tool-missing"


def test_xlas_ptxas_older_than_the_gpu_outranks_the_symbol_not_found_it_causes() -> None:
    # jax-ml/jax#6046, #13570, #16546 (three rounds' sets): XLA's warning, then the kernel it
    # could not build missing
    text = ("2022-12-08 11:37:51.345475: W external/org_tensorflow/tensorflow/compiler/xla/"
            "stream_executor/gpu/asm_compiler.cc:231] Falling back to the CUDA driver for PTX "
            "compilation; ptxas does not support CC 8.9\n2022-12-08 11:37:51.5: E external/"
            "org_tensorflow/tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:625] "
            "failed to get PTX kernel \"compare_3\" from module: CUDA_ERROR_NOT_FOUND: named "
            "symbol not found")
    expl = explain(text, TABLES, probe=None)
    first = expl.diagnoses[0].match.signature
    assert (first.id, first.cause_class) == ("xla-ptxas-older-than-gpu",
                                             "compiler-too-old-for-arch")
    assert "CUDA 11.8 is the first toolkit" in first.cause
