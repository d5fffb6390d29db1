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
    # round 23's g64-028 (GPUMD's CHECK: the number under its "CUDA Error:" header, the
    # message cut off) and g64-003 (RELION: the number on a line naming its .cuh file)
    ("> CUDA Error:\n> \n>     File:       main_nep/dataset.cu\n> \n>     Line:       266\n"
     "> \n>     Error code: 209\n> \n>    Error text: no", "cudaErrorNoKernelImageForDevice",
     "arch-not-in-build"),
    ("ERROR: out of memory in /opt/relion/src/acc/cuda/custom_allocator.cuh at line 435 "
     "(error-code 2)", "cudaErrorMemoryAllocation", "out-of-memory"),
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


def _codes(text: str) -> list[tuple[str, str]]:
    """(code, cause class) of every code diagnosed, best first."""
    expl = explain(text, TABLES, probe=None)
    return [(c.raw, d.match.signature.cause_class) for d in expl.diagnoses
            for c in d.match.captures if c.kind == "code"]


@pytest.mark.parametrize(("text", "name", "cause_class"), [
    # FFmpeg's nvenc.c: "<what>: <its description> (<number>): <details>"
    # https://github.com/m1k1o/go-transcode/issues/42
    ("2022/12/08 14:32:09 [h264_nvenc @ 00000273a548f1c0] OpenEncodeSessionEx failed: out of "
     "memory (10): (no details)\n2022/12/08 14:32:09 [h264_nvenc @ 00000273a548f1c0] No "
     "capable devices found", "NV_ENC_ERR_OUT_OF_MEMORY", "out-of-memory"),
    # https://github.com/joinhive-ai/transcoder/pull/9 (quoted without FFmpeg's prefix)
    ("OpenEncodeSessionEx failed: out of memory (10): (no details)", "NV_ENC_ERR_OUT_OF_MEMORY",
     "out-of-memory"),
    # the same table's other entries, in FFmpeg's other error strings
    ("[hevc_nvenc @ 0x55d0c8e4a2c0] InitializeEncoder failed: invalid param (8): Invalid "
     "Level.", "NV_ENC_ERR_INVALID_PARAM", "not-environment"),
    ("[h264_nvenc @ 0x7f3a1c00] Cannot get the preset configuration: invalid version (15)",
     "NV_ENC_ERR_INVALID_VERSION", "driver-too-old"),
    ("[av1_nvenc @ 000001c2] OpenEncodeSessionEx failed: no encode device (1): (no details)",
     "NV_ENC_ERR_NO_ENCODE_DEVICE", "no-gpu-visible"),
    # NVEncC: "Error on nvEnc<Call>: <number> (<the header's doc comment>)"
    # https://github.com/rigaya/NVEnc/issues/439
    ("nvenc : Error on nvEncOpenEncodeSessionEx: 10 (NVENC indicates that the API call failed "
     "because it was unable to allocate enough memory to perform the requested operation.)",
     "NV_ENC_ERR_OUT_OF_MEMORY", "out-of-memory"),
    # https://github.com/rigaya/NVEnc/issues/173 (the call with its argument)
    ("Error on NvEncOpenEncodeSessionEx(device_type=NV_ENC_DEVICE_TYPE_CUDA): 10 (NVENC "
     "indicates that the API call failed because it was unable to allocate enough memory to "
     "perform the requested operation.)", "NV_ENC_ERR_OUT_OF_MEMORY", "out-of-memory"),
    # https://github.com/rigaya/NVEnc/issues/74 (driver 388 under NVEncC's API 9)
    ("Error on nvEncGetEncodePresetConfig: 15 (NVENC indicates that an invalid struct version "
     "was used by the client)", "NV_ENC_ERR_INVALID_VERSION", "driver-too-old"),
    # the Video Codec SDK's NvEncoder (VPF, NvPipe, the SDK's samples):
    # https://github.com/NVIDIA/VideoProcessingFramework/issues/501
    ("RuntimeError: NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, "
     "&hEncoder) returned error 10\nDescription: EncodeAPI Internal Error.\n at "
     "/tmp/pip-req-build-u1jnj07w/src/TC/src/NvEncoder.cpp:82", "NV_ENC_ERR_OUT_OF_MEMORY",
     "out-of-memory"),
    # https://github.com/NVIDIA/nvidia-docker/issues/1514
    ("NvEncoder : m_nvenc.nvEncOpenEncodeSessionEx(&encodeSessionExParams, &hEncoder) returned "
     "error 2 at ../../NvCodec/NvEncoder/NvEncoder.cpp:55", "NV_ENC_ERR_UNSUPPORTED_DEVICE",
     "other-environment"),
    # OptiX: OWL / NVISII's "Optix call (<call>) failed with code <number>"
    # https://github.com/owl-project/NVISII/issues/40 (a driver older than 450)
    ("Optix call (optixInit()) failed with code 7801 (line 150)\nterminate called without an "
     "active exception\nAborted (core dumped)", "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION",
     "driver-too-old"),
    # https://github.com/NVIDIA/OWL/issues/12, https://github.com/owl-project/NVISII/issues/107
    ("Optix call (optixInit()) failed with code 7804 (line 157)",
     "OPTIX_ERROR_LIBRARY_NOT_FOUND", "library-not-found"),
    # https://github.com/owl-project/owl/issues/108 (the call's arguments wrapped in the paste)
    ("Optix call (optixModuleCreateFromPTX(device->optixContext, &device->moduleCompileOptions, "
     "\n&device->pipelineCompileOptions, parent->ptxCode.c_str(), strlen(parent->ptxCode.c_str()"
     "), log, \n&sizeof_log, &module )) failed with code 7001", "OPTIX_ERROR_INVALID_VALUE",
     "not-environment"),
    # pbrt-v4's "OptiX call optix<Fn>() failed with code <number>: <text>"
    # https://github.com/mmp/pbrt-v4/issues/198
    ('[ tid 1234 @ 0.012s gpu/optix/aggregate.cpp:123 ] FATAL OptiX call optixInit() failed '
     'with code 7804: "Library not found"', "OPTIX_ERROR_LIBRARY_NOT_FOUND",
     "library-not-found"),
    ("optixDeviceContextCreate(cuCtx, &options, &context) failed (error code 7802)",
     "OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH", "driver-too-old"),
    # by name: https://github.com/jbikker/lighthouse2/issues/3
    ("Error at line 124 of c:\\lighthouse2\\lib\\rendercore_optix7\\rendercore.cpp:\n"
     "optixInit()\nOPTIX_ERROR_UNSUPPORTED_ABI_VERSION (7801)",
     "OPTIX_ERROR_UNSUPPORTED_ABI_VERSION", "driver-too-old"),
    # an OptiX 7.0-7.6 name: https://github.com/rnd-team-dev/plotoptix/issues/15 prints
    # OPTIX_ERROR_INTERNAL_COMPILER_ERROR the same way
    ("OPTIX_ERROR_INVALID_PTX: Optix call 'optixModuleCreateFromPTX( m_context, ... )' failed: "
     "modules.cpp:23)", "OPTIX_ERROR_INVALID_INPUT", "not-environment"),
    ("NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY returned by nvEncOpenEncodeSessionEx",
     "NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY", "other-environment"),
])
def test_nvenc_and_optix_codes_as_their_callers_print_them(text: str, name: str,
                                                           cause_class: str) -> None:
    assert _codes(text)[0] == (name, cause_class)


@pytest.mark.parametrize("text", [
    "the job exited with code 7801",  # no OptiX context: a bare number names nothing
    "Optix call (optixInit()) failed with code 42 (line 150)",  # no OptixResult 42
    "worker failed with code 7804",
    "cannot allocate the frame buffer: out of memory (10)",  # no NVENC context or "failed: "
    "read failed: (10)",
    "Error on nvEncOpenEncodeSessionEx: 99 (unknown)",  # no NVENCSTATUS 99
    "write failed: invalid param (9)",  # FFmpeg's description, another code's number
])
def test_a_number_without_its_nvenc_or_optix_context_names_nothing(text: str) -> None:
    assert not [n for n, _ in _codes(text) if n.startswith(("NV_ENC_", "OPTIX_"))]


@pytest.mark.parametrize("text", [
    # gpu-burn's checkError (round 5's g10-001, https://github.com/wilicc/gpu-burn/issues/101):
    # the place in parentheses before the colon has a colon of its own
    "Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:238): a PTX JIT "
    "compilation failed",
    "ERROR (kernels.cu:88): a PTX JIT compilation failed",
])
def test_an_error_line_with_its_place_in_parentheses_is_read(text: str) -> None:
    d = best(text)
    assert d.match.signature.id == "code-cuda-error-invalid-ptx"
    # its doc comment: no binary suited to this GPU, and its PTX not compilable for it
    assert d.match.signature.cause_class == "arch-not-in-build"


@pytest.mark.parametrize("text", [
    "Error code: 209\n",  # no CUDA error header above it, no CUDA source named
    "CUDA Error:\n" + "x\n" * 12 + "Error code: 209\n",  # the header too far above
    "loading model.py (error-code 2)\n",  # a Python file, not a CUDA one
])
def test_a_number_without_its_cuda_context_names_no_code(text: str) -> None:
    expl = explain(text, TABLES, probe=None)
    assert not any(c.kind == "code" for d in expl.diagnoses for c in d.match.captures)
