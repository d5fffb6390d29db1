"""The grammar: entities decoded (library files, symbols, codes, Xids, log lines, out-of-memory
numbers) and the causes derived from them. The texts are the kinds users paste; the real ones
are in tests/fixtures/errors (test_explain_corpus.py)."""

from __future__ import annotations

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain
from gpudoctor.explain.libraries import decode_file, symbol_owner

TABLES = load_tables()


def best(text: str):  # type: ignore[no-untyped-def]
    expl = explain(text, TABLES, probe=None)
    assert expl.found, text
    return expl.diagnoses[0]


@pytest.mark.parametrize(("name", "family", "version"), [
    ("libcudnn_ops_infer.so.8", "cuDNN", "cuDNN 8"),
    ("/usr/local/cuda/lib64/libcudart.so.11.0", "the CUDA runtime", "CUDA 11.0"),
    ("cudart64_110.dll", "the CUDA runtime", "CUDA 11.0"),
    ("cublasLt64_12.dll", "cuBLAS", "CUDA 12"),
    ("cudnn_ops_infer64_8.dll", "cuDNN", "cuDNN 8"),
    ("libnvidia-ml.so.1", "NVML (the NVIDIA driver's management library)", "1"),
    ("nvcuda.dll", "the NVIDIA driver's CUDA library", ""),
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


# ------------------------------------------------------------------------------ the loader


def test_the_drivers_own_library_missing_means_no_driver() -> None:
    d = best("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
             "dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object "
             "file: No such file or directory")
    assert d.match.signature.cause_class == "no-driver"


def test_a_missing_library_is_named_with_its_release_and_package() -> None:
    d = best("OSError: libcusparse.so.11: cannot open shared object file: No such file")
    assert d.match.signature.cause_class == "library-not-found"
    assert [c.meaning for c in d.match.captures] == ["cuSPARSE, 11"]
    assert "nvidia-cusparse" in d.fix


def test_a_found_library_lacking_a_symbol_is_two_versions_mixed_naming_both() -> None:
    d = best("Could not load library libcudnn_cnn_infer.so.8. Error: /opt/conda/lib/python3.10/"
             "site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: "
             "_ZN11nvrtcHelper4loadEb, version libcudnn_ops_infer.so.8")
    assert d.match.signature.cause_class == "library-version-conflict"
    assert "libcudnn_cnn_infer.so.8 needs" in d.cause and "cuDNN 8" in d.cause
    assert "not on the loader path" not in d.cause


def test_an_extensions_undefined_torch_symbol_is_an_abi_mismatch() -> None:
    d = best("ImportError: /home/u/.venv/lib/python3.11/site-packages/torchvision/_C.so: "
             "undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationERKSs")
    assert d.match.signature.cause_class == "extension-abi-mismatch"
    assert "torchvision" in d.cause


def test_windows_dlls() -> None:
    d = best("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library "
             "path!")
    assert d.match.signature.cause_class == "library-not-found" and "PATH" in d.fix
    d = best('OSError: [WinError 126] The specified module could not be found. Error loading '
             '"C:\\py\\lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its '
             'dependencies.')
    assert d.match.signature.cause_class == "library-not-found" and "depend" in d.cause


def test_an_old_libstdcxx_is_a_version_conflict() -> None:
    d = best("ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' "
             "not found (required by /venv/lib/python3.10/site-packages/torch/lib/libtorch.so)")
    assert d.match.signature.cause_class == "library-version-conflict"


# ------------------------------------------------------------------------------ error codes


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


# ------------------------------------------------------------------------------ logs


def test_xids_are_decoded_through_nvidias_catalog() -> None:
    d = best("NVRM: Xid (PCI:0000:44:00): 79, pid='<unknown>', GPU has fallen off the bus.")
    assert d.match.signature.cause_class == "hardware-fault" and "reboot" in d.fix
    d = best("kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python, MMU Fault")
    assert d.match.signature.cause_class == "not-environment"  # the catalog: the application
    d = best("NVRM: Xid (PCI:0000:3b:00): 250, something newer")
    assert "newer" in d.cause


def test_nvrm_api_mismatch_in_every_wrapping() -> None:
    for text in (
        "NVRM: API mismatch: the client has the version 535.54.03, but\nNVRM: this kernel "
        "module has the version 530.30.02.  Please\nNVRM: make sure that this kernel module "
        "and all NVIDIA driver\nNVRM: components have the same version.",
        "kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this "
        "kernel module has the version 530.30.02.  Please#012NVRM: make sure that this kernel "
        "module and all NVIDIA driver#012NVRM: components have the same version.",
    ):
        assert best(text).match.signature.cause_class == "driver-mismatch"


def test_nccl_warnings_by_their_source_messages() -> None:
    d = best("ncclInternalError: Internal check failed.\nLast error:\nBootstrap : no socket "
             "interface found")
    assert d.match.signature.cause_class == "nccl-setup"
    d = best("include/socket.h:344 WARN Socket creation failed : Address family not supported")
    assert d.match.signature.cause_class == "nccl-setup"


def test_the_container_cli_stage_and_its_requirement() -> None:
    d = best("stderr: nvidia-container-cli: requirement error: unsatisfied condition: "
             "cuda>=12.8, please update your driver to a newer version, or use an earlier cuda "
             "container")
    assert d.match.signature.cause_class == "driver-too-old" and "CUDA 12.8" in d.fix
    d = best("nvidia-container-cli: initialization error: nvml error: driver not loaded")
    assert d.match.signature.cause_class == "no-driver"


# ------------------------------------------------------------------------------ out of memory

OLD = ("CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} "
       "already allocated; {free} free; {reserved} reserved in total by PyTorch)")


def test_fragmentation_only_when_reserved_unallocated_memory_would_hold_the_request() -> None:
    tiny = best(OLD.format(req="20.00 GiB", total="23.69 GiB", alloc="2.50 MiB",
                           free="1.94 GiB", reserved="2.50 MiB"))
    assert tiny.match.signature.id != "cuda-oom-fragmentation"
    assert "expandable_segments" not in tiny.fix
    frag = best(OLD.format(req="2.87 GiB", total="14.76 GiB", alloc="8.77 GiB",
                           free="19.75 MiB", reserved="13.71 GiB"))
    assert frag.match.signature.id == "cuda-oom-fragmentation"
    assert "expandable_segments" in frag.fix


NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total "
       "capacity of {total} of which {free} is free. Including non-PyTorch memory, this process "
       "has {proc} memory in use. Of the allocated memory {alloc} is allocated by PyTorch, and "
       "{unalloc} is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
       "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
       "fragmentation.")


def test_pytorchs_fragmentation_hint_is_not_taken_for_the_cause() -> None:
    """The hint is in every message; 2.50 MiB reserved-unallocated cannot hold 20 GiB."""
    d = best(NEW.format(req="20.00 GiB", total="23.65 GiB", free="1.06 GiB", proc="22.50 GiB",
                        alloc="22.49 GiB", unalloc="2.50 MiB"))
    assert d.match.signature.id == "cuda-oom-gpu-capacity"
    assert "expandable_segments" not in d.fix
    d = best(NEW.format(req="22.00 MiB", total="23.65 GiB", free="11.06 MiB", proc="23.60 GiB",
                        alloc="22.90 GiB", unalloc="194.87 MiB"))
    assert d.match.signature.id == "cuda-oom-fragmentation"


def test_out_of_memory_names_other_processes_and_oversized_requests() -> None:
    others = best(OLD.format(req="1.69 GiB", total="14.56 GiB", alloc="649.97 MiB",
                             free="1.31 GiB", reserved="1.01 GiB"))
    assert others.match.signature.id == "cuda-oom-other-processes" and "nvidia-smi" in others.fix
    huge = best(OLD.format(req="40.00 GiB", total="23.69 GiB", alloc="1.00 GiB",
                           free="22.00 GiB", reserved="1.00 GiB"))
    assert "larger than the whole GPU" in huge.cause
    for d in (others, huge):
        assert d.match.signature.cause_class == "out-of-memory"


def test_a_bare_status_word_takes_only_a_cuda_message_no_other_program_prints() -> None:
    assert not explain("HTTP request status: unknown error", TABLES, probe=None).found
    d = best("Status: the provided PTX was compiled with an unsupported toolchain.")
    assert d.match.signature.cause_class == "driver-too-old"


def test_nccl_messages_as_the_frameworks_print_them() -> None:
    d = best("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, "
             "NCCL version 2.14.3")
    assert d.match.signature.id == "code-nccl-unhandled-cuda-error"


def test_a_windows_dll_that_exists_but_cannot_be_mapped_is_not_a_missing_library() -> None:
    d = best('OSError: [WinError 1455] The paging file is too small for this operation to '
             'complete. Error loading "C:\\x\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its '
             'dependencies.')
    assert d.match.signature.id == "windows-paging-file-too-small"


def test_cudnns_own_loader_naming_a_windows_sub_library() -> None:
    """cuDNN 8 loads its sub-libraries itself and says so without quotes."""
    d = best("Could not load library cudnn_adv_infer64_8.dll. Error code 126\nPlease make sure "
             "cudnn_adv_infer64_8.dll is in your library path!")
    assert d.match.signature.cause_class == "library-not-found"
    assert "cuDNN" in d.match.captures[0].meaning
