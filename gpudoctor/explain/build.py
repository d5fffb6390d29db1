"""The compiler chain, ahead of time (nvcc and the host compiler) and at run time (NVRTC,
Triton), read from what its messages name.

- *An architecture the compiler refuses* (nvcc's "Unsupported gpu architecture 'compute_86'",
  NVRTC's "invalid value for --gpu-architecture (-arch)" with the `-arch=` it was given): the
  compat tables say which toolkits compile for it. An architecture older than the tables
  (every toolkit they hold once compiled for it) that a later toolkit dropped (`last_cuda`) is
  refused because the GPU is older than the toolkit supports; any other is refused because
  the compiler is older than the architecture. clang compiling CUDA itself ("unsupported CUDA
  gpu architecture: sm_103") is an LLVM release older than the architecture.
- *A host header that nvcc's chain rejects*: an error located in the host's own C/C++ library
  headers (/usr/include, the compiler's include directory) while compiling CUDA, with no
  instantiation from the program's code in the text, is the toolkit not supporting the host
  compiler or C library (g++ 11's <functional> under nvcc 11.x, glibc 2.41's math declarations
  against CUDA 12.9's): the host toolchain, not the program.
- *A tool of the toolkit that is not there*: a line naming one of the compiler chain's own
  programs or libraries (nvcc's trajectory: nvcc, cicc and libNVVM, libdevice, ptxas, fatbinary,
  nvlink, cudafe++, bin2c; the binary utilities cuobjdump, nvdisasm, nvprune, cu++filt) as not
  found ("Cannot find ptxas.exe", "Failed to execute `nvcc`: … NotFound", "libNVVM cannot be
  found"): the CUDA toolkit is not installed, or not where the program looks. A line where the
  tool itself speaks ("nvcc fatal : Cannot find compiler 'cl.exe'") is not one.
- *A ptxas older than the GPU, as XLA reports it*: TensorFlow's and JAX's "Falling back to the
  CUDA driver for PTX compilation; ptxas does not support CC 8.9": the ptxas XLA found predates
  the GPU's architecture (the tables give the first CUDA that compiles for it); the kernels it
  then cannot build fail later ("CUDA_ERROR_NOT_FOUND: named symbol not found"), a symptom.
- *A JIT's kernel that does not load*: Triton compiles every kernel for the GPU it runs on, so
  its "device kernel image is invalid" (or another no-code-for-this-GPU error) cannot be an
  architecture missing from a build: the driver is older than the ptxas Triton bundles.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.explain.catalog import load_catalog
from gpudoctor.explain.decode import decode
from gpudoctor.explain.found import Match, anchored, derived, found, hits, line_span
from gpudoctor.versions import normalize_cc

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

# nvcc's two wordings: "Unsupported gpu architecture 'compute_89'" and, for a -arch sm_XY or
# -gencode code=sm_XY it does not know, "Value 'sm_61' is not defined for option
# 'gpu-architecture'" (ptxas's own says 'gpu-name': signatures.toml's ptxas-unknown-arch)
_NVCC = re.compile(r"Unsupported gpu architecture '(?P<arch>compute_\d{1,3}[af]?)'"
                   r"|Value '(?P<sm>sm_\d{1,3}[af]?)' is not defined for option 'gpu-architecture'")
_NVRTC = re.compile(r"invalid value for --gpu-architecture")
# clang compiling CUDA itself (its driver's err_drv_cuda_bad_gpu_arch): "clang: error:
# unsupported CUDA gpu architecture: sm_103"; each LLVM release adds the architectures of the
# CUDA releases it supports
_CLANG = re.compile(r"unsupported CUDA gpu architecture: (?P<arch>sm_\d{1,3}[af]?)")
_ARCH_OPTION = re.compile(r"(?:-arch|--gpu-architecture)[= ](?P<arch>(?:compute|sm)_\d{1,3}[af]?)")
_AROUND = 1500  # how far from NVRTC's message its options are looked for

# an error located in a host header: gcc's "file:line:col: error:", EDG's "file(line): error:"
_HOST_HEADER = re.compile(
    r"(?P<file>/usr/(?:local/)?(?:include|lib/gcc)/[^\s:()'\"]{1,200})"
    r"(?::\d{1,6}(?::\d{1,6})?:|\(\d{1,6}\):)[ \t]{0,8}(?:fatal )?error\b[: \t]{0,8}"
    r"(?P<msg>[^\n]{0,160})")
_CUDA_HEADER = re.compile(r"/crt/|/cuda[^/\s]*\.h|/cuda/|/targets/", re.I)
# evidence that CUDA is being compiled; libstdc++ 11's std_function.h "parameter packs not
# expanded" is such evidence by itself: g++ compiles that header, only CUDA 11's nvcc front end
# trips on it (https://github.com/ingonyama-zk/fast-danksharding/issues/24)
_COMPILING_CUDA = re.compile(r"\.cu\b|\bnvcc\b|Building CUDA object|/crt/|cudafe|\bcicc\b"
                             r"|std_function\.h:\d{1,5}:\d{1,5}: error: parameter packs not "
                             r"expanded", re.I)
# the program's code instantiating a template (its error, shown where the header expands it)
_INSTANTIATED = re.compile(r"required from here|In instantiation of|instantiated from|"
                           r"detected during instantiation", re.I)

_TRITON = re.compile(r"Triton Error \[CUDA\]:[ \t]{0,8}(?P<msg>[^\n]{3,160})")

# XLA's stream executor (asm_compiler.cc) when its ptxas is older than the GPU
_XLA_PTXAS = re.compile(r"ptxas does not support CC (?P<cc>\d{1,2}\.\d{1,2})")

# the compiler chain's programs and libraries (NVIDIA's nvcc documentation, "The CUDA
# Compilation Trajectory", and "CUDA Binary Utilities"; a toolkit's bin/ and nvvm/ hold them)
TOOLKIT_TOOLS = ("nvcc", "cicc", "libnvvm", "nvvm", "libdevice", "ptxas", "fatbinary", "nvlink",
                 "cudafe++", "bin2c", "cuobjdump", "nvdisasm", "nvprune", "cu++filt")
_TOOL = re.compile(r"(?<![\w./+-])(?P<tool>" + "|".join(re.escape(t) for t in TOOLKIT_TOOLS)
                   + r")(?:\.exe)?(?![\w+-])", re.I)
_MISSING = re.compile(r"\b(?:not found|NotFound|No such file or directory|cannot be found|"
                      r"can(?:no|')t find|could(?:n't| not) (?:find|locate)|unable to "
                      r"(?:find|locate|execute)|failed to execute|is not recognized as an "
                      r"internal or external command|does not exist)\b", re.I)
# the tool speaking: what follows is its own error ("nvcc fatal : Cannot find compiler 'cl.exe'")
_SPEAKER = re.compile(r"^[^\n]{0,40}?\b(?:nvcc|ptxas|nvlink|fatbinary|cicc|cudafe\+\+|nvdisasm|"
                      r"cuobjdump)(?:\.exe)?[ \t]{1,4}(?:fatal|error|warning|info)[ \t]{0,4}:",
                      re.I)
_LINE = 400  # a longer line is no such message


def build_matches(text: str, lowered: str, tables: Tables) -> list[Match]:
    """The compiler chain's failures the text names (see the module)."""
    out: list[Match] = []
    if "gpu architecture" in lowered or "gpu-architecture" in lowered:
        out += _archs(text, tables)
    if "/usr/" in lowered and "error" in lowered:
        out += _host_headers(text)
    if "triton error [cuda]" in lowered:
        out += _triton(text, lowered)
    out += _tool_missing(text)
    if "ptxas does not support cc" in lowered:
        out += _xla_ptxas(text, tables)
    return out


def _xla_ptxas(text: str, tables: Tables) -> list[Match]:
    """XLA's ptxas older than the GPU (see the module)."""
    for m in hits(_XLA_PTXAS, text):
        row = tables.gpu_arch(m["cc"])
        first = (f"; CUDA {row.first_cuda} is the first toolkit that compiles for it"
                 if row is not None and row.first_cuda else "")
        sig = derived(
            "xla-ptxas-older-than-gpu", "XLA's ptxas is older than the GPU", "arch",
            "compiler-too-old-for-arch",
            f"TensorFlow's / JAX's XLA compiles its kernels with a ptxas, and the one it found "
            f"does not know compute capability {m['cc']}{first}. XLA falls back to the "
            "driver's PTX compiler, and kernels it cannot build then fail ('named symbol not "
            "found', CUDA_ERROR_NOT_FOUND).",
            "give XLA a ptxas new enough for the GPU: install the framework's CUDA pip packages "
            "(pip install \"tensorflow[and-cuda]\" / \"jax[cuda12]\") or a CUDA toolkit that "
            "supports the GPU, with its bin on PATH (XLA_FLAGS=--xla_gpu_cuda_data_dir=<toolkit> "
            "points XLA at it)",
            ("https://github.com/tensorflow/tensorflow/blob/r2.11/tensorflow/compiler/xla/"
             "stream_executor/gpu/asm_compiler.cc", "https://github.com/jax-ml/jax/issues/6046",
             "https://github.com/jax-ml/jax/issues/13570"), priority=1,
            confirm=("GD201", "GD204"))
        return [found(sig, m)]
    return []


def _tool_missing(text: str) -> list[Match]:
    """The first line that says a toolkit tool is not found (see the module)."""
    for i, m in enumerate(hits(_MISSING, text)):
        if i >= 64:
            return []
        start, end = line_span(text, m.start())
        line = text[start:end]
        if len(line) > _LINE or _SPEAKER.match(line):
            continue
        tool = _TOOL.search(line)
        if tool is None:
            continue
        name = tool["tool"]
        sig = derived(
            "toolkit-tool-missing", f"the CUDA toolkit's {name} is not found", "toolkit",
            "toolkit-missing",
            f"The program needs {name}, part of the CUDA toolkit's compiler chain, and finds "
            "none: the toolkit is not installed (a driver, or CUDA runtime wheels from pip, "
            "have no compiler), or it is not where the program looks (PATH, CUDA_HOME / "
            "CUDA_PATH).",
            "install the CUDA toolkit (or the framework's own toolkit packages, e.g. "
            "nvidia-cuda-nvcc) for the CUDA the program uses, and point the program at it: "
            "PATH=$CUDA_HOME/bin:$PATH with CUDA_HOME (CUDA_PATH on Windows) set",
            ("https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html"
             "#the-cuda-compilation-trajectory",
             "https://docs.nvidia.com/cuda/cuda-binary-utilities/index.html"),
            confirm=("GD201",))
        return [found(sig, (start, start + len(line), line))]
    return []


def _archs(text: str, tables: Tables) -> list[Match]:
    seen: dict[str, Match] = {}
    for m in hits(_NVCC, text):
        arch = m["arch"] or m["sm"]
        seen.setdefault(arch, _refused("nvcc", arch, m, tables))
    for m in hits(_CLANG, text):
        seen.setdefault(m["arch"], _clang_refused(m["arch"], m, tables))
    for m in hits(_NVRTC, text):
        around = text[max(0, m.start() - _AROUND):m.end() + _AROUND]
        option = _ARCH_OPTION.search(around)
        if option is not None:
            seen.setdefault(option["arch"], _refused("NVRTC", option["arch"], m, tables))
        else:  # the options are not in the text: the common case is an NVRTC older than the GPU
            seen.setdefault("", _refused_unnamed(m))
    return list(seen.values())


def _clang_refused(arch: str, m: re.Match[str], tables: Tables) -> Match:
    """clang, compiling CUDA itself, does not know the architecture: the LLVM release is older
    than it (the toolkit clang uses may know it)."""
    capture = decode("arch", "arch", arch, tables)
    sig = derived(
        "clang-unsupported-cuda-arch", "clang does not know this GPU architecture", "arch",
        "compiler-too-old-for-arch",
        f"clang compiles the CUDA code here (not nvcc), and this clang does not know {arch} "
        f"({capture.meaning or arch}): each LLVM release adds the GPU architectures of the CUDA "
        "releases it supports, so the clang is older than the architecture (its warning "
        "'CUDA version is newer than the latest partially supported version' says the same of "
        "the toolkit).",
        f"build with a clang/LLVM release that supports {arch} (clang's 'Compiling CUDA with "
        f"clang' page lists them), compile the CUDA code with nvcc instead, or leave {arch} out "
        "of the build's target architectures",
        ("https://llvm.org/docs/CompileCudaWithLLVM.html",), confirm=())
    return found(sig, m, (capture,))


def _refused_unnamed(m: re.Match[str]) -> Match:
    """NVRTC refused the GPU's architecture, which the text does not name."""
    sig = derived(
        "nvrtc-unsupported-arch", "NVRTC does not know this GPU architecture", "arch",
        "compiler-too-old-for-arch",
        "NVRTC (the CUDA runtime compiler a framework loads to build kernels at run time: "
        "TorchScript's fuser, CuPy, a library's generated kernels) refuses the architecture it "
        "was asked for, which the text does not show. Most often the NVRTC's CUDA release is "
        "older than the GPU (sm_89 and sm_90 need CUDA 11.8, sm_100 and sm_120 CUDA 12.8); a "
        "GPU older than that release supports is the other case.",
        "use the framework's build for a CUDA release that supports the GPU, with that "
        "release's NVRTC (the nvidia-cuda-nvrtc wheel or the toolkit's); `gpudoctor check` "
        "shows the GPU's architecture",
        ("https://docs.nvidia.com/cuda/nvrtc/index.html",), confirm=("GD404",))
    return found(sig, m, ())


def _refused(compiler: str, arch: str, m: re.Match[str], tables: Tables) -> Match:
    capture = decode("arch", "arch", arch, tables)
    meaning = capture.meaning or arch
    cc = normalize_cc(arch)
    row = tables.gpu_arch(cc) if cc else None
    if row is not None and row.first_cuda is None and row.last_cuda is not None:
        sig = derived(
            "gpu-older-than-toolkit", f"{compiler} no longer compiles for {arch}", "arch",
            "arch-not-in-build",
            f"{compiler} refuses {arch} ({meaning}): CUDA {row.last_cuda} was the last toolkit "
            f"to compile for it, and every toolkit gpudoctor knows of before that did. The GPU "
            "is older than this toolkit supports: no build of the program made with it has "
            "code for the GPU.",
            f"use CUDA {row.last_cuda} or older (and a framework or library built with it) for "
            "this GPU, or run on a newer GPU", (row.source,), priority=1)
        return found(sig, m, (capture,))
    sid = "nvcc-unsupported-arch" if compiler == "nvcc" else "nvrtc-unsupported-arch"
    sig = derived(
        sid, f"{compiler} does not know this GPU architecture", "arch",
        "compiler-too-old-for-arch",
        f"The CUDA toolkit's {compiler} is older than {arch} ({meaning}): it cannot compile "
        "for that GPU.",
        f"install a CUDA toolkit that supports {arch} and point the build at it (CUDA_HOME), or "
        f"leave {arch} out of TORCH_CUDA_ARCH_LIST / -gencode",
        ("https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html"
         "#gpu-feature-list",), confirm=("GD204", "GD201"))
    return found(sig, m, (capture,))


def _host_headers(text: str) -> list[Match]:
    if not _COMPILING_CUDA.search(text) or _INSTANTIATED.search(text):
        return []
    for m in anchored(_HOST_HEADER, text, text.lower(), "/usr/"):
        if _CUDA_HEADER.search(m["file"]) or "no such file" in m["msg"].lower():
            continue
        sig = derived(
            "host-headers-rejected-by-nvcc", "the host's C/C++ headers do not compile under "
            "nvcc", "toolkit", "host-compiler-unsupported",
            f"Compiling CUDA fails inside the host's own headers ({m['file']}), not in the "
            "program's code: the CUDA toolkit does not support this host compiler or C library "
            "version (a newer g++ or glibc than the toolkit was released for).",
            "build with a host compiler the toolkit supports (nvcc -ccbin g++-N, or "
            "CUDAHOSTCXX / CMAKE_CUDA_HOST_COMPILER), or install a CUDA toolkit released for "
            "this compiler and C library (NVIDIA's release notes list them)",
            ("https://docs.nvidia.com/cuda/cuda-installation-guide-linux/"
             "#host-compiler-support-policy",), priority=1)
        return [found(sig, m)]
    return []


def _triton(text: str, lowered: str) -> list[Match]:
    cat = load_catalog()
    for m in anchored(_TRITON, text, lowered, "triton error [cuda]"):
        code = cat.by_message.get(m["msg"].strip().rstrip(".").lower())
        if code is None or code.cause_class != "arch-not-in-build":
            continue
        sig = derived(
            "triton-kernel-driver-too-old", "Triton's kernel does not load: the driver is too "
            "old", "arch", "driver-too-old",
            f"Triton compiled the kernel for this very GPU, and the driver cannot load it "
            f"(\"{m['msg'].strip()}\", {code.name}): the cubin comes from the ptxas Triton "
            "bundles, newer than the CUDA this driver runs.",
            "update the NVIDIA driver to one that runs the CUDA of Triton's ptxas (nvidia-smi "
            "shows the CUDA the driver runs), or use the Triton release that matches the driver",
            ("https://github.com/triton-lang/triton/blob/main/third_party/nvidia/backend/"
             "driver.c",), priority=1)
        return [found(sig, m)]
    return []
