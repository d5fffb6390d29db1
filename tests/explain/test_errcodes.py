"""Error codes decoded by name, by number in a CUDA context and by the message the library
prints, with their meaning and the checks that confirm them."""

from __future__ import annotations

import pytest

from gpudoctor.explain import explain
from tests.explain.explain_kit import TABLES, best


@pytest.mark.parametrize(("text", "name", "cause_class"), [
    ("failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
     "CUDA_ERROR_NO_DEVICE", "no-gpu-visible"),
    ("CUDA error 209 at ggml-cuda.cu:6701", "cudaErrorNoKernelImageForDevice",
     "arch-not-in-build"),
    ("RuntimeError: CUDA error: invalid device function", "cudaErrorInvalidDeviceFunction",
     "arch-not-in-build"),
    ("cudaGetDeviceCount returned 35", "cudaErrorInsufficientDriver", "driver-too-old"),
    ("libcudnn.cudnnStatusArchMismatch", "CUDNN_STATUS_ARCH_MISMATCH", "arch-not-in-build"),
    ("code=222( cudaErrorUnsupportedPtxVersion ) cudaStreamCreate(&s)",
     "cudaErrorUnsupportedPtxVersion", "driver-too-old"),
    ("what():  cuDNN error: CUDNN_STATUS_BAD_PARAM", "CUDNN_STATUS_BAD_PARAM",
     "not-environment"),
])
def test_a_code_is_decoded_by_name_number_or_message(text: str, name: str,
                                                     cause_class: str) -> None:
    expl = explain(text, TABLES, probe=None)
    assert expl.diagnoses[0].match.signature.cause_class == cause_class
    # the code is decoded even where a wording signature of the same cause explains it first
    codes = [c.raw for d in expl.diagnoses for c in d.match.captures if c.kind == "code"]
    assert name in codes or any(name in d.cause for d in expl.diagnoses)


def test_a_known_code_in_no_known_wording_gets_its_meaning_and_confirming_checks() -> None:
    d = best("panicked: DriverError(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, \"system has "
             "unsupported display driver / cuda driver combination\")")
    sig = d.match.signature
    assert sig.cause_class == "driver-mismatch"
    # a wording signature and the code agree; the code alone is decoded too
    explained = explain("status = CUDA_ERROR_SYSTEM_NOT_READY", TABLES, probe=None)
    code = explained.diagnoses[0]
    assert code.match.signature.cause_class == "fabric-manager"
    assert "not yet initialized" in code.cause and code.match.signature.confirm



def test_a_bare_status_word_takes_only_a_cuda_message_no_other_program_prints() -> None:
    assert not explain("HTTP request status: unknown error", TABLES, probe=None).found
    d = best("Status: the provided PTX was compiled with an unsupported toolchain.")
    assert d.match.signature.cause_class == "driver-too-old"


def test_nccl_messages_as_the_frameworks_print_them() -> None:
    d = best("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, "
             "NCCL version 2.14.3")
    assert d.match.signature.id == "code-nccl-unhandled-cuda-error"
