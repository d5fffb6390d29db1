"""Error codes as printed by other languages' bindings and by the C/C++ programs' own check
macros (gpudoctor/explain/bindings.py, errcodes.py). Each family is tested on texts worded as
other programs and releases print it, not on the text it was found in (explain-B)."""

from __future__ import annotations

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain

TABLES = load_tables()


def best(text: str) -> tuple[str, str]:
    """(signature id, cause class) of the best diagnosis, ("", "") for none."""
    expl = explain(text, TABLES, probe=None)
    if not expl.diagnoses:
        return "", ""
    sig = expl.diagnoses[0].match.signature
    return sig.id, sig.cause_class


@pytest.mark.parametrize(("text", "cls"), [
    # Rust: rustacuda / cust print the driver API's result as an enum variant
    ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: "
     "Cuda(InvalidImage)', src/main.rs:22:41", "arch-not-in-build"),
    ("Error: CudaError::UnknownError", "cuda-init-failure"),
    ("called `Result::unwrap()` on an `Err` value: CudaError::NoDevice", "no-gpu-visible"),
    # Go: gorgonia/cu panics with the result's name in package cu
    ("panic: NoDevice\n\ngoroutine 1 [running]:\ngorgonia.org/cu.init.0()\n"
     "\t/go/pkg/mod/gorgonia.org/cu@v0.9.4/cu.go:21 +0x91", "no-gpu-visible"),
    # Julia: CUDA.jl shows the code and the driver API's name without its CUDA_ prefix
    ("ERROR: LoadError: CUDA error (code 200, ERROR_INVALID_IMAGE)\nStacktrace:\n"
     " [1] throw_api_error(res::CUDA.cudaError_enum)", "arch-not-in-build"),
])
def test_a_binding_spelling_of_a_driver_result_is_decoded(text: str, cls: str) -> None:
    assert best(text)[1] == cls


def test_a_go_panic_outside_the_binding_is_no_driver_result() -> None:
    """`panic: Unknown` of any Go program is not CUDA's: only the cu package's is."""
    text = "panic: Unknown\n\ngoroutine 1 [running]:\nmain.parseConfig(0xc000010000)\n"
    assert best(text) == ("", "")


@pytest.mark.parametrize(("text", "code"), [
    # the CUDA samples: the number, then the message on the next line after "-> "; before CUDA
    # 10.1 the runtime numbered its codes otherwise (30 was "unknown error", 11 "invalid
    # argument"), so the message names the code
    ("cudaSetDevice returned 30\n-> unknown error\nResult = FAIL", "code-cuda-error-unknown"),
    ("cudaMemcpy returned 11\n-> invalid argument", "code-cuda-error-invalid-value"),
    ("cudaMalloc returned 2 (out of memory)", "code-cuda-error-memory-allocation"),
])
def test_a_calls_returned_number_is_read_with_the_message_after_it(text: str, code: str) -> None:
    assert best(text)[0] == code


@pytest.mark.parametrize(("text", "code"), [
    # glog's CHECK_EQ on a library status (Caffe's CUDA_CHECK, CUDNN_CHECK, CUBLAS_CHECK)
    ("F0412 10:01:02.5 common.cpp:131] Check failed: error == cudaSuccess (2 vs. 0)  out of "
     "memory", "code-cuda-error-memory-allocation"),
    ("F0412 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS (6 vs. 0)",
     "code-cudnn-status-arch-mismatch"),
    ("F0412 math_functions.cu:28] Check failed: status == CUBLAS_STATUS_SUCCESS (3 vs. 0)",
     "code-cublas-status-alloc-failed"),
    # the old numbering's 8 with its message: the message wins
    ("Check failed: error == cudaSuccess (8 vs. 0)  invalid device function",
     "code-cuda-error-invalid-device-function"),
])
def test_a_glog_check_of_a_status_names_the_code(text: str, code: str) -> None:
    assert best(text)[0] == code


@pytest.mark.parametrize(("text", "cls"), [
    ("Cuda failure: 2 out of memory\n/src/layer.cu:81\nAborting...", "out-of-memory"),
    ("CUDA failure 999: unknown error", "cuda-init-failure"),
])
def test_a_failure_with_its_number_then_its_message_is_read(text: str, cls: str) -> None:
    assert best(text)[1] == cls


def test_a_driver_version_code_outranks_what_fails_after_it() -> None:
    """The PTX the driver cannot JIT leaves no module: the invalid handle after it follows."""
    text = ("E0101 runtime.cc:40] cuModuleLoadDataEx(&module, image) failed: "
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
            "E0101 runtime.cc:52] cuModuleGetFunction(&function, module, \"fused_kernel_42\") "
            "failed: CUDA_ERROR_INVALID_HANDLE (a longer line than the one before it)\n")
    assert best(text)[1] == "driver-too-old"


@pytest.mark.parametrize(("text", "cls"), [
    # numba names the code, or gives its number where it has no name for it
    ("numba.cuda.cudadrv.driver.CudaAPIError: [999] Call to cuInit results in "
     "UNKNOWN_CUDA_ERROR", "cuda-init-failure"),
    ("numba.cuda.cudadrv.driver.CudaAPIError: [209] Call to cuLaunchKernel results in "
     "CUDA_ERROR_NO_BINARY_FOR_GPU", "arch-not-in-build"),
    # TensorRT's logger: the runtime's number after its own words
    ("[W] [TRT] CUDA initialization failure with error: 35. Please check your CUDA "
     "installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
     "driver-too-old"),
])
def test_numbas_and_tensorrts_numbers(text: str, cls: str) -> None:
    assert best(text)[1] == cls


@pytest.mark.parametrize(("text", "code"), [
    # NVML's message anywhere on a line that names NVML, without a colon before it (round 5's
    # g6-022, https://github.com/coraxx/netdata_nv_plugin/issues/1), and as others print it
    ("python.d ERROR: nv pynvml could not be initialized Insufficient Permissions",
     "code-nvml-error-no-permission"),
    ("[exporter] nvml init failed with Driver Not Loaded, retrying in 5s",
     "code-nvml-error-driver-not-loaded"),
    # NVML's message with its own number after it, NVML unnamed (a miner's log: g10-027,
    # https://github.com/trexminer/T-Rex/issues/642)
    ("hwmc GPU2: unable to get fan speed - GPU is lost (15)", "code-nvml-error-gpu-is-lost"),
    ("GPU1: cannot read temperature - Insufficient Permissions (4)",
     "code-nvml-error-no-permission"),
])
def test_nvml_messages_as_monitors_print_them(text: str, code: str) -> None:
    assert best(text)[0] == code


@pytest.mark.parametrize("text", [
    "GPU is lost (2)",  # the number is not GPU_IS_LOST's: no code
    "Insufficient Permissions to write /var/log/app.log",  # no NVML, no number
])
def test_an_nvml_phrase_alone_names_no_code(text: str) -> None:
    assert not best(text)[0].startswith("code-nvml")


@pytest.mark.parametrize(("text", "sid"), [
    # nvitop (round 10, g31-028): the code's CamelCase name on one line, NVML on the next
    ("ERROR: Some FunctionNotFound errors occurred while calling:\n"
     "    nvmlQuery('nvmlDeviceGetGraphicsRunningProcesses', *args, **kwargs)",
     "code-nvml-error-function-not-found"),
    # NiceHashMiner's .NET wrapper (round 9's r20-027)
    ("[ERROR] [NVML] System.Exception: NVML power get failed with status: GPUIsLost",
     "code-nvml-error-gpu-is-lost"),
])
def test_nvmls_camel_case_names_near_nvml_are_its_codes(text: str, sid: str) -> None:
    assert best(text)[0] == sid


def test_a_one_word_camel_case_near_nvml_is_no_code() -> None:
    # "Unknown" is NVML_ERROR_UNKNOWN's one word: prose, not a code name
    assert best("nvml returned something Unknownish; Uninitialized variable")[0] == ""
