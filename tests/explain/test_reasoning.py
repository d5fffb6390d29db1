"""The reasoning rules of round 3: who is to blame when a text names a symptom, and how the
grammar reads the forms programs print. Each text here is of a family the development set A
showed (tests/fixtures/heldout/round3/explain-A), worded as another program or release prints
it, so a rule is tested on the family, not on the one text it was found in."""

from __future__ import annotations

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain
from gpudoctor.explain.catalog import load_catalog
from gpudoctor.explain.focus import WHOLE
from tests.explain.explain_kit import classes

TABLES = load_tables()
CAT = load_catalog()


def best_id(text: str) -> str:
    expl = explain(text, TABLES, probe=None)
    assert expl.found, text
    return expl.diagnoses[0].match.signature.id


# ------------------------------------------------------------------ honesty: symptoms


WATCHDOG = ("[rank2]:[E1012 10:01:02.123 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=5120, OpType=ALLGATHER, NumelIn=16, "
            "NumelOut=64, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.")


def test_a_bare_collective_timeout_is_not_blamed_on_the_machine() -> None:
    """The timeout says some rank did not reach the collective; ranks doing different work is
    the commonest reason and the text shows no fault of the machine."""
    assert classes(WATCHDOG)[0] == "not-environment"


def test_a_collective_timeout_beside_a_network_warning_is_the_network() -> None:
    text = ("node7:311:402 [2] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
            "10.0.0.3<41523> failed : Software caused connection abort\n" + WATCHDOG)
    assert classes(text)[0] == "nccl-setup"


def test_an_unspecified_launch_failure_is_the_kernels_unless_an_xid_says_otherwise() -> None:
    text = "RuntimeError: CUDA error: unspecified launch failure\nCompile with TORCH_USE_CUDA_DSA"
    assert classes(text)[0] == "not-environment"
    xid = "kernel: NVRM: Xid (PCI:0000:65:00): 79, pid=2211, GPU has fallen off the bus.\n"
    assert classes(xid + text)[0] == "hardware-fault"


def test_compute_sanitizers_report_is_the_programs_kernel() -> None:
    text = ("========= Invalid __global__ write of size 4 bytes\n"
            "=========     at scatter_kernel(float *, const int *, int)+0x1c0\n"
            "=========     by thread (31,0,0) in block (1023,0,0)\n"
            "CUDA error: an illegal memory access was encountered\n"
            "========= ERROR SUMMARY: 12 errors")
    assert best_id(text) == "compute-sanitizer-invalid-access"


def test_an_error_inside_a_stream_capture_is_the_captures() -> None:
    text = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
            "`cublasCreate(handle)`\n...\nRuntimeError: CUDA error: operation not permitted when "
            "stream is capturing")
    assert classes(text)[0] == "not-environment"
    assert CAT.codes["cudaErrorStreamCaptureInvalidated"].strong


def test_an_out_of_memory_with_its_numbers_still_wins_inside_a_capture() -> None:
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.00 GiB. GPU 0 has "
            "a total capacity of 23.65 GiB of which 1.06 GiB is free. Including non-PyTorch "
            "memory, this process has 22.50 GiB memory in use. Of the allocated memory 22.49 GiB "
            "is allocated by PyTorch, and 2.50 MiB is reserved by PyTorch but unallocated.\n"
            "RuntimeError: CUDA error: operation failed due to a previous error during capture")
    assert classes(text)[0] == "out-of-memory"


@pytest.mark.parametrize("warn", [
    "misc/argcheck.cc:30 NCCL WARN AllReduce : invalid type 12",
    "misc/argcheck.cc:52 NCCL WARN Broadcast : invalid root 3 (root should be in the 0..1 range)",
    "init.cc:1570 NCCL WARN comm 0x55d0e2c0 has already been destroyed",
    "enqueue.cc:1022 NCCL WARN Trying to send to self without a matching recv",
])
def test_ncclS_own_invalid_argument_or_usage_is_the_callers(warn: str) -> None:
    """NCCL returns ncclInvalidArgument / ncclInvalidUsage after these (its source says so)."""
    text = f"host:1:1 [0] {warn}\nhost:1:1 [0] NCCL INFO group.cc:184 -> 4\n"
    assert classes(text)[0] == "not-environment"


def test_ncclS_network_warnings_stay_the_networks() -> None:
    text = "host:1:1 [0] bootstrap.cc:96 NCCL WARN Bootstrap : no socket interface found"
    assert classes(text)[0] == "nccl-setup"


def test_two_ranks_on_one_gpu_is_the_launch() -> None:
    text = ("init.cc:521 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA "
            "device 41000")
    assert classes(text)[0] == "not-environment"


# ------------------------------------------------------------------ the grammar of codes


@pytest.mark.parametrize(("text", "cause_class"), [
    # a program's own error context before a library's message
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  Error "
     "(burn.cpp:77): system not yet initialized", "fabric-manager"),
    ("CUDA Error:\n    File: infer.cu\n    Line: 12\n    Error code: 98\n    Error text: invalid "
     "device function", "arch-not-in-build"),
    ("[E] error: device kernel image is invalid", "arch-not-in-build"),
    # the numbering before CUDA 10.1 (8 was invalid device function, 30 unknown error)
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=70 error=30 : unknown "
     "error", "cuda-init-failure"),
    ("THCudaCheck FAIL file=THCTensorMath.cu line=26 error=8 : invalid device function",
     "arch-not-in-build"),
    # a call and its number: "err"
    ("cudaMalloc err: 2", "out-of-memory"),
    ("cuInit err: 999", "cuda-init-failure"),
])
def test_a_cuda_message_or_number_in_any_error_context(text: str, cause_class: str) -> None:
    assert classes(text)[0] == cause_class


@pytest.mark.parametrize("text", [
    "PermissionError: [Errno 1] error: operation not permitted",
    "error: operation not supported",
    "subprocess error: invalid argument",
])
def test_the_c_librarys_messages_after_a_bare_error_are_not_cuda_codes(text: str) -> None:
    assert classes(text) == []


def test_an_os_call_failure_is_detail_beside_a_named_cause() -> None:
    text = ("what():  Error (drv.cpp:9): system not yet initialized\n"
            "what():  Error (drv.cpp:9): OS call failed or operation not supported on this OS\n"
            "what():  Error (drv.cpp:9): OS call failed or operation not supported on this OS")
    assert classes(text)[0] == "fabric-manager"


def test_cuffts_internal_error_is_not_the_callers() -> None:
    """cuFFT documents it as "a driver or internal cuFFT library error"."""
    assert CAT.codes["CUFFT_INTERNAL_ERROR"].cause_class != "not-environment"


# ------------------------------------------------------------------ the kernel module's statuses


def test_an_nvrm_status_that_names_a_fault_outranks_the_symptom() -> None:
    text = ("cudaErrorDevicesUnavailable: CUDA-capable device(s) is/are busy or unavailable\n"
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus "
            "[NV_ERR_GPU_IS_LOST] (0x0000000F) returned from status @ kernel_channel.c:100")
    assert classes(text)[0] == "hardware-fault"


def test_an_nvrm_status_that_is_detail_ranks_below_everything() -> None:
    text = ("RuntimeError: CUDA error: out of memory\n"
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: Invalid argument to call "
            "[NV_ERR_INVALID_ARGUMENT] (0x0000001F) returned from status @ mem.c:7")
    found = classes(text)
    assert found[0] == "out-of-memory" and len(found) == 2
    assert len(CAT.nv_status) == CAT.counts["nvstatus.toml"][0]


def test_ncclS_kernel_lookup_failing_means_no_kernels_for_this_gpu() -> None:
    text = ("node:9:9 [0] NCCL INFO cudaDriverVersion 12090\n"
            "node:9:9 [0] enqueue.cc:100 NCCL WARN Cuda failure 'invalid device function'\n"
            "node:9:9 [0] NCCL INFO init.cc:1189 -> 1")
    assert best_id(text) == "nccl-kernels-not-for-this-gpu"


# ------------------------------------------------------------------ large logs


@pytest.mark.slow
def test_lines_without_an_error_word_are_kept_in_a_large_log() -> None:
    """TensorFlow's and XLA's lines say 'minimum required' and 'older than', not 'error'."""
    noise = "".join(f"I0101 step {i} loss 0.{i % 97:02d}\n" for i in range(WHOLE // 24 + 1))
    for line, cause_class in (
        ("I gpu_device.cc:1283] Ignoring visible gpu device (device: 0, name: Quadro K600, pci "
         "bus id: 0000:01:00.0, compute capability: 3.0) with Cuda compute capability 3.0. The "
         "minimum required Cuda capability is 3.5.", "arch-not-in-build"),
        ("W nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is 12.0 which is older than "
         "the ptxas CUDA version (12.4.131).", "driver-too-old"),
    ):
        half = len(noise) // 2
        assert classes(noise[:half] + line + "\n" + noise[half:])[0] == cause_class


# ------------------------------------------------------------------ NVML's codes


@pytest.mark.parametrize(("text", "cause_class"), [
    ("pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "no-driver"),
    ("pynvml.NVMLError_GpuIsLost: GPU is lost", "hardware-fault"),
    ("level=error msg=\"nvml.Init() failed: ERROR_DRIVER_NOT_LOADED\"", "no-driver"),
    ("nvmlDeviceGetHandleByIndex returned NVML_ERROR_NO_PERMISSION", "cuda-init-failure"),
    ("nvtop: NVML error: Insufficient Permissions", "cuda-init-failure"),
    ("NVMLError_FunctionNotFound: Function Not Found", "driver-too-old"),
])
def test_nvml_codes_as_its_bindings_print_them(text: str, cause_class: str) -> None:
    assert classes(text)[0] == cause_class


def test_nvmls_enumeration_is_the_headers() -> None:
    nvml = [c for c in CAT.codes.values() if c.stem == "nvml"]
    assert len(nvml) == CAT.counts["codes/nvml.toml"][0] == 32
    assert CAT.codes["NVML_ERROR_LIB_RM_VERSION_MISMATCH"].number == 18
    assert CAT.codes["NVML_ERROR_UNKNOWN"].weak


def test_a_failed_cublas_kernel_is_a_symptom_of_the_programs_fault_beside_it() -> None:
    """A kernel of the program faults and the next cuBLAS call fails: the fault is named."""
    for fault in ("RuntimeError: CUDA error: misaligned address",
                  "Failed to launch CUDA kernel: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory "
                  "access was encountered"):
        text = ("E cuda_blas.cc:426] failed to run cuBLAS routine: "
                f"CUBLAS_STATUS_EXECUTION_FAILED\n{fault}")
        assert classes(text)[0] == "not-environment"


def test_a_confirmed_symptom_does_not_outrank_the_cause_the_text_names() -> None:
    """torch's warning is read as a report whose GD403 fails (CUDA does not initialise): that
    confirms the symptom, not that the error code beside it is wrong."""
    text = ("/usr/lib/python3/site-packages/torch/cuda/__init__.py:138: UserWarning: CUDA "
            "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? "
            "Error 804: forward compatibility was attempted on non supported HW (Triggered "
            "internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"
            "  return torch._C._cuda_getDeviceCount() > 0\nCUDA available: False\n")
    assert classes(text)[0] == "forward-compat"
