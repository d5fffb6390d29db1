"""The dynamic loader's failures (a library missing, two versions mixed, an extension's ABI,
Windows' DLLs) and the causes derived from them. The texts are the kinds users paste; the real
ones are in tests/fixtures/errors (test_explain_corpus.py)."""

from __future__ import annotations

import pytest

from gpudoctor.explain import explain
from tests.explain.explain_kit import TABLES, best, classes


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


def test_a_binary_built_for_a_newer_glibc_says_the_system_is_older() -> None:
    """Round 24's g66-027 (bitsandbytes' CUDA 12.6 library on Ubuntu 20.04's glibc 2.31):
    glibc is the system's one copy, so the cause is its age, not two copies mixed."""
    d = best("OSError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found "
             "(required by /venv/lib/python3.10/site-packages/bitsandbytes/"
             "libbitsandbytes_cuda126.so)")
    assert d.match.signature.id == "glibc-older-than-needed"
    assert d.match.signature.cause_class == "library-version-conflict"
    assert "2.34" in d.cause and "LD_LIBRARY_PATH" not in d.fix and "ldd --version" in d.fix



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


@pytest.mark.parametrize(("text", "cause_class", "family"), [
    ("RuntimeError: Failed to dlopen libcudart.so.12", "library-not-found", "the CUDA runtime"),
    ("nvrtc: error: failed to open libnvrtc-builtins.so.12.4.\n  Make sure that "
     "libnvrtc-builtins.so.12.4 is installed correctly.", "library-not-found", "NVRTC"),
    ("[12:00:01] compile log: nvrtc: error: failed to load builtins", "library-not-found",
     "NVRTC"),
    ("AssertionError: libcuda.so cannot found!", "library-not-found",
     "the NVIDIA driver's CUDA library"),
])
def test_the_loaders_callers_wordings(text: str, cause_class: str, family: str) -> None:
    d = explain(text, TABLES, probe=None).diagnoses[0]
    assert d.match.signature.cause_class == cause_class
    assert any(c.meaning.startswith(family) for c in d.match.captures)


def test_the_drivers_linker_name_missing_is_a_missing_link_its_runtime_name_no_driver() -> None:
    assert classes("OSError: libnvidia-ml.so: cannot open shared object file: No such file or "
                   "directory")[0] == "library-not-found"
    assert classes("OSError: libnvidia-ml.so.1: cannot open shared object file: No such file or "
                   "directory")[0] == "no-driver"


@pytest.mark.parametrize("text", [
    "FileNotFoundError: Could not find module 'libcudart.so' (or one of its dependencies). Try "
    "using the full path with constructor syntax.",
    'ERROR: could not load library "libcuda"\nThe specified module could not be found.',
])
def test_a_linux_library_asked_of_windows_is_the_programs(text: str) -> None:
    assert classes(text)[0] == "not-environment"


def test_a_windows_dll_missing_on_windows_is_still_a_missing_library() -> None:
    text = ("FileNotFoundError: Could not find module 'C:\\venv\\Lib\\site-packages\\torch\\lib\\"
            "cudnn_ops64_9.dll' (or one of its dependencies). Try using the full path with "
            "constructor syntax.")
    assert classes(text)[0] == "library-not-found"


def test_torchs_windows_loader_error_wrapped_by_the_terminal_is_read() -> None:
    # SD.Next (round 10, g34-020): the wrap took the path's opening quote with it
    text = ('OSError: [WinError 126] The specified module cannot be found. Error loading\n'
            '...stable\\automatic\\venv\\lib\\site-packages\\torch\\lib\\'
            'cudnn_cnn_infer64_8.dll" or\n'
            'one of its dependencies.\n')
    d = best(text)
    assert d.match.signature.cause_class == "library-not-found"
    assert "cudnn_cnn_infer64_8.dll" in d.match.signature.title


@pytest.mark.parametrize(("text", "lib"), [
    # CuPy's "DLL dependencies:" listing (round 10, g32-028): the runtime ranks first
    ("CUDA Path: None\nDLL dependencies:\nKERNEL32.dll -> C:\\Windows\\System32\\KERNEL32.DLL\n"
     "cublas64_11.dll -> not found\ncudart64_110.dll -> not found\n", "cudart64_110.dll"),
    # ldd's listing of a library's dependencies
    ("\tlibcudart.so.11.0 => not found\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6",
     "libcudart.so.11.0"),
])
def test_a_dependency_listings_not_found_is_the_library_missing(text: str, lib: str) -> None:
    d = best(text)
    assert d.match.signature.cause_class == "library-not-found"
    assert lib in d.match.signature.title


def test_a_plugin_gstreamers_scanner_skips_is_a_follow_on() -> None:
    """Round 22's g61-007 (a DeepStream container on a desktop GPU): "cuInit failed : 804"
    (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) above the plugin scanner's warnings that
    libtritonserver.so and librivermax.so.0 are not there: the scanner warns of every plugin
    it cannot load, the pipeline needs few of them; the driver's code is the cause. Alone, a
    plugin's missing library is still said."""
    warning = ("(gst-plugin-scanner:2886): GStreamer-WARNING **: 10:27:38.041: Failed to load "
               "plugin '/usr/lib/x86_64-linux-gnu/gstreamer-1.0/deepstream/"
               "libnvdsgst_inferserver.so': libtritonserver.so: cannot open shared object "
               "file: No such file or directory\n")
    text = "nvbufsurftransform:cuInit failed : 804 \n" * 3 + warning
    assert best(text).match.signature.id == "code-cuda-error-compat-not-supported-on-device"
    assert best(warning).match.signature.id == "library-missing-libtritonserver"


def test_a_library_without_static_tls_left_is_the_loading_order() -> None:
    """Round 22's g61-023 (toolboc/Intelligent-Video-Analytics-with-NVIDIA-Jetson-and-
    Microsoft-Azure#22): glibc's "cannot allocate memory in static TLS block" on a Jetson:
    nothing missing or mixed; the fix preloads the library it names."""
    text = ("(gst-plugin-scanner:6): GStreamer-WARNING **: 01:59:48.077: Failed to load plugin "
            "'/usr/lib/aarch64-linux-gnu/gstreamer-1.0/libgstnvjpeg.so': /usr/lib/aarch64-linux"
            "-gnu/libGLdispatch.so.0: cannot allocate memory in static TLS block\n")
    found = explain(text, TABLES, probe=None)
    top = found.diagnoses[0]
    assert top.match.signature.id == "static-tls-exhausted"
    assert top.match.signature.cause_class == "other-environment"
    assert "LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libGLdispatch.so.0" in top.fix


def test_a_function_every_libcuda_exports_not_found_is_no_driver() -> None:
    """Round 22's g62-001 (JuliaGPU/CUDA.jl#1318, a GitHub-hosted runner): "julia: undefined symbol:
    cuDriverGetVersion": every driver's libcuda exports it, so none was loaded (no driver);
    a newer function missing is still a driver older than the program needs."""
    text = ('ERROR: LoadError: could not load symbol "cuDriverGetVersion":\n'
            "/opt/hostedtoolcache/julia/1.6.5/x64/bin/julia: undefined symbol: "
            "cuDriverGetVersion\n")
    d = best(text)
    assert (d.match.signature.id, d.match.signature.cause_class) == (
        "driver-library-not-loaded", "no-driver")
    newer = text.replace("cuDriverGetVersion", "cuStreamBeginCaptureToGraph")
    assert best(newer).match.signature.cause_class == "driver-too-old"


def test_cudajl_warning_of_a_library_from_the_system() -> None:
    """Round 22's g62-017 (JuliaGPU/CUDA.jl#3045): CUDA.jl's own warning that
    libcublasLt.so.13 came from /usr/local/cuda/lib64 rather than its artifacts: two CUDA
    installations mixed; the fix takes the system's directory off the library path."""
    text = ("┌ Warning: CUDA runtime library `libcublasLt.so.13` was loaded from a system path, "
            "`/usr/local/cuda/lib64/libcublasLt.so.13`.\n│ This may cause errors.\n")
    d = best(text)
    assert (d.match.signature.id, d.match.signature.cause_class) == (
        "cudajl-library-from-system-path", "library-version-conflict")
    assert "LD_LIBRARY_PATH" in d.fix and "libcublasLt.so.13" in d.cause


def test_an_import_killed_by_an_illegal_instruction() -> None:
    """Round 22's g61-024 (Qengineering/Jetson-Nano-Ubuntu-20-image#13): ">>> import torch",
    then "Illegal instruction (core dumped)": a CPU instruction the processor lacks (numpy's
    OpenBLAS on a Jetson, numpy/numpy#18131), not the program; an NCCL failure followed by the
    same words is not read so (the import is what it names)."""
    text = ">>> import torch\nIllegal instruction (core dumped)\n"
    d = best(text)
    assert (d.match.signature.id, d.match.signature.cause_class) == (
        "illegal-instruction-on-import", "other-environment")
    assert "OPENBLAS_CORETYPE=ARMV8" in d.fix
    assert "illegal-instruction-on-import" not in [
        x.match.signature.id for x in explain("NCCL error\nIllegal instruction (core dumped)\n",
                                               TABLES, probe=None).diagnoses]


@pytest.mark.parametrize(("text", "sid", "cause_class"), [
    # round 24's g66-018 (exllamav2's extension built for another torch) and g65-027 (a
    # package's own _C, Windows' message in Japanese): ERROR_PROC_NOT_FOUND
    ("ImportError: DLL load failed while importing exllamav2_ext: The specified procedure "
     "could not be found.", "extension-dll-load-exllamav2-ext", "extension-abi-mismatch"),
    ('  File "C:\\env\\lib\\site-packages\\diff_gaussian_rasterization\\__init__.py", line 15\n'
     "    from . import _C\nImportError: DLL load failed while importing _C: "
     "指定されたプロシージャが見つかりません。", "extension-dll-load-diff-gaussian-rasterization-c",
     "extension-abi-mismatch"),
    # torch's own _C: a DLL it links found, lacking a function (another copy first on PATH)
    ('  File "C:\\py\\lib\\site-packages\\torch\\__init__.py", line 128\n    from torch._C '
     "import *\nImportError: DLL load failed while importing _C: Die angegebene Prozedur wurde "
     "nicht gefunden.", "dll-procedure-not-found", "library-version-conflict"),
    ('  File "C:\\py\\lib\\site-packages\\torch\\__init__.py", line 128\n    from torch._C '
     "import *\nImportError: DLL load failed while importing _C: The specified module could "
     "not be found.", "dll-load-failed", "library-not-found"),
])
def test_windows_dll_load_failures_by_their_error(text: str, sid: str, cause_class: str) -> None:
    d = best(text)
    assert (d.match.signature.id, d.match.signature.cause_class) == (sid, cause_class)
