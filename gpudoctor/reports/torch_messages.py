"""torch's own messages, quoted in issues and logs: facts torch states about the machine.

- its warning about a GPU its build has no kernels for (torch/cuda/__init__.py,
  `_check_cubins`): "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with
  the current PyTorch installation. The current PyTorch install supports CUDA capabilities
  sm_37 sm_50 sm_60 sm_70." — the GPU's name and arch, and the build's arch list. torch prints
  it only for a CUDA build (it returns early when `torch.version.cuda` is None);
- its warning about a GPU too old for the build (`_check_capability`): "Found GPU0 NVIDIA
  GeForce GTX 1080 Ti which is of cuda capability 6.1. PyTorch no longer supports this GPU
  because it is too old." — the GPU's index, name and compute capability;
- its error when the driver is older than its CUDA (c10/cuda/CUDAFunctions.cpp): "The NVIDIA
  driver on your system is too old (found version 11040)" — `cudaDriverGetVersion()`, the
  highest CUDA the driver runs (11040 = 11.4), libcuda's view of the driver;
- its CUDA initialisation error 803, cudaErrorSystemDriverMismatch ("system has unsupported
  display driver / cuda driver combination"): the driver's user-space CUDA library and its
  kernel module are of different releases (GD101's mismatch);
- the other reasons c10/cuda/CUDAFunctions.cpp's `device_count_impl` and
  `device_count_ensure_non_zero` raise for torch.cuda.init() or a first CUDA tensor: "No CUDA
  GPUs are available" (no device counted), "CUDA driver initialization failed, you might not
  have a CUDA gpu." (cudaErrorInitializationError), "CUDA unknown error - this may be due to an
  incorrectly set up environment, …" (cudaErrorUnknown); each means is_available() is False;
- "Torch not compiled with CUDA enabled" (torch/cuda/__init__.py, `_lazy_init`, raised when
  torch._C has no CUDA bindings): a build without CUDA, whatever its version. A text that also
  holds the warnings only CUDA builds print is not read as one.

What they do not state (torch's version, its CUDA version, the driver's version, the other
GPUs) stays Unavailable(NOT_REPORTED). Python prints a warning once per text, so identical GPUs
give one warning: the GPUs named are some of the machine's, never the list of them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import LibcudaFacts, Reason, TorchFacts, TorchRuntime, Unavailable
from gpudoctor.reports.interface import (  # torch's words the checks read too
    DRIVER_TOO_OLD,
    TORCH_NO_DRIVER,
    Partial,
    not_reported,
    release_left_open,
    stated_runtime,
)
from gpudoctor.versions import encode_cudnn_version, normalize_cc

# a quote's ">", and the prefix Ray puts before each line a worker prints ("(Worker pid=369) ",
# "(RayWorkerWrapper pid=12, ip=10.0.0.2) ", "(pid=8) ")
_QUOTE = re.compile(r"^(?:(?:\s{0,3}>\s?)+|\((?:[A-Za-z_]\w{0,40} )?pid=\d{1,9}"
                    r"(?:, ip=[\d.:a-fA-F]{1,45})?\) )", re.MULTILINE)
_ARCHS = r"((?:[ \t]+(?:sm|compute)_\d+[a-z]?)+)"
# as printed, and as pasted: wrapped across lines, retyped in lower case, "capabilities", and
# cut off where the paste ends after "the current" ("… is not compatible with the current Py")
INCOMPATIBLE = re.compile(r"^[ \t]*(\S[^\n]*?) with CUDA capabilit(?:y|ies)\s{0,4}sm_(\d+)"
                          r"\s{1,4}is\s{1,4}not\s{1,4}compatible\s{1,4}with\s{1,4}the\s{1,4}"
                          r"current(?:\s{1,4}PyTorch\s{1,4}installation\b\.?"
                          r"|(?:[ \t]{1,4}P(?:y(?:T(?:o(?:r(?:ch?)?)?)?)?)?)?\s{0,8}"
                          r"(?:`{3}\s{0,8})?\Z)"
                          r"(?:\s*The\s{1,4}current\s{1,4}PyTorch\s{1,4}install\s{1,4}supports\s{1,4}"
                          r"CUDA\s{1,4}capabilities" + _ARCHS.replace("[ \\t]+", "\\s+") + r")?",
                          re.MULTILINE | re.IGNORECASE)
ARCH_LIST = re.compile(r"The\s{1,4}current\s{1,4}PyTorch\s{1,4}install\s{1,4}supports\s{1,4}"
                       r"CUDA\s{1,4}capabilities" + _ARCHS.replace("[ \\t]+", "\\s+"),
                       re.IGNORECASE)
# torch.cuda._lazy_init's AssertionError when torch._C has no CUDA bindings: a build without
# CUDA (a CPU build; ROCm builds have them)
NOT_COMPILED = re.compile(r"Torch not compiled with CUDA enabled")
# "… which is of cuda capability 6.1." (torch ≤ 2.7); "… of compute capability (CC) 7.0." (2.8+)
TOO_OLD_GPU = re.compile(r"Found GPU(\d+) ([^\n]+?) which is of (?:cuda|compute) capability "
                         r"(?:\(CC\) )?(\d+)\.(\d+)")
# torch 2.8+ (`_warn_unsupported_code`) lists its build's CCs, one a line, after the GPU:
# "The following list shows the CCs this version of PyTorch was built for and the hardware CCs
# it supports:" then "- 7.5 which supports hardware CC >=7.5,<8.0" (sm_XY and compute_XY
# entries both print as X.Y)
# (one a line as printed; a log that joined its lines has them on one)
CC_LIST = re.compile(r"The following list shows the CCs this version of PyTorch was built for"
                     r"[^\n:]{0,80}:((?:\s{0,8}[-•*] \d+\.\d+ which supports hardware CC[ \t]*"
                     r"[>=<\d.,]{0,40}(?:[ \t]*except[ \t]*\{[\d., ]{0,40}\})?)+)")
# torch's reason for torch.cuda.is_available() being False: its UserWarning ("CUDA
# initialization: <reason> (Triggered internally at …)"), or the error a CUDA call raised
INIT_ERROR = re.compile(
    r"CUDA initialization: ([^\n]+?)(?: \(Triggered internally at [^\n]*)?[ \t]*$"
    r"|(Found no NVIDIA driver on your system\.[^\n]*?)[ \t\"'_*`]*$"
    r"|(Unexpected error from cudaGetDeviceCount\(\)[^\n]*? Error \d+: [^\n]+?)[ \t\"'_*`]*$"
    r"|(The NVIDIA driver on your system is too old \(found version \d+\)[^\n]*?)[ \t\"'_*`]*$"
    # the rest of c10's device_count_impl / device_count_ensure_non_zero, raised as they are
    # (no "CUDA initialization:" before them) by torch.cuda.init() or a first CUDA tensor:
    # no device counted (cudaErrorNoDevice, or every GPU hidden), cudaErrorInitializationError,
    # cudaErrorUnknown
    r"|(?:RuntimeError: |^[ \t`'\"]*)(No CUDA GPUs are available)"
    r"|(CUDA driver initialization failed, you might not have a CUDA gpu\.?)"
    r"|(CUDA unknown error - this may be due to an incorrectly set up environment[^\n]*?)"
    r"[ \t\"'_*`]*$"
    # torch 0.4-1.x's THC wording of cudaErrorInsufficientDriver, raised in torch's own code
    r"|(cuda runtime error \(35\) : CUDA driver version is insufficient for CUDA runtime "
    r"version)(?= at [^\n]{0,200}(?:torch/csrc|THC))",
    re.MULTILINE)
# torch's check of the cuDNN it loads against the one it was compiled with (torch/backends/
# cudnn/__init__.py): both versions as tuples
CUDNN_MISMATCH = re.compile(r"cuDNN version incompatibility: PyTorch was compiled\s{1,4}against "
                            r"\((\d{1,2}), (\d{1,3}), (\d{1,3})\) but found runtime version "
                            r"\((\d{1,2}), (\d{1,3}), (\d{1,3})\)")
NO_DRIVER = "Found no NVIDIA driver on your system"
# torch's error on a kernel launch with no code for the GPU (C10_CUDA_CHECK's "CUDA error: …",
# the runtime's cudaErrorNoKernelImageForDevice message)
NO_KERNEL_IMAGE = re.compile(r"(?:CUDA error: |cudaErrorNoKernelImageForDevice: )"
                             r"(no kernel image is available for execution on the device)")
# a compiled extension the text names, whose kernel may be the one without code for the GPU
# (it launches through torch's error check too): PyG's, OpenMMLab's, attention and
# quantization kernels, 3D and splatting rasterisers, a package's own compiled "_C"/"_ext"
EXTENSION = re.compile(
    r"\b(?:torch_(?:scatter|sparse|cluster|spline_conv)|pyg_lib|flash_attn|xformers|mmcv|"
    r"apex|bitsandbytes|detectron2|pytorch3d|spconv|deepspeed|causal_conv1d|mamba_ssm|"
    r"tinycudann|tiny-cuda-nn|nvdiffrast|gsplat|diff_gaussian_rasteri[sz]ation|simple_knn|"
    r"auto_gptq|awq|exllama\w{0,4}|vllm|sageattention|triton|torchvision::\w+|"
    r"[A-Za-z]\w{0,40}(?:_cuda|_C|_ext)\.(?:cpython[\w-]{0,40}\.so|so|pyd))\b", re.I)
# cudaErrorSystemDriverMismatch (driver_types.h: "a mismatch between the versions of the
# display driver and the CUDA driver"): libcuda.so.1 of another release than the kernel module
MISMATCH = re.compile(r"\bError 803: system has unsupported display driver / cuda driver "
                      r"combination")
LONGEST = 200_000  # a paste longer than this is searched in its first part only


def arch_list(text: str) -> tuple[str, ...] | None:
    """torch's arch list from its warning, None when the text has none. The newer warning
    prints each entry as a compute capability ("- 8.6 which supports …"); those are given as
    sm_86: torch's own check counts each entry only for its major, PTX or not."""
    text = text[:LONGEST]
    m = ARCH_LIST.search(text) or CC_LIST.search(text)
    if m and not text[m.end():].strip():
        return None  # the paste ends in the list: it may be cut off
    if m and m.re is ARCH_LIST:
        return tuple(m[1].split())
    if m:
        ccs = re.findall(r"[-•*] (\d+)\.(\d+) which", m[1])
        return tuple(dict.fromkeys(f"sm_{major}{minor}" for major, minor in ccs))
    return None


def init_error(text: str) -> str | None:
    """torch's reason for torch.cuda.is_available() being False, None when the text has none."""
    m = INIT_ERROR.search(_QUOTE.sub("", text[:LONGEST]))
    return next(g for g in m.groups() if g).strip()[:500] if m else None


def warned_gpus(text: str) -> tuple[tuple[str, str], ...]:
    """(name, compute capability) of every GPU torch's warnings name, in order, once each."""
    text = _QUOTE.sub("", text[:LONGEST])
    found: dict[str, str] = {}
    hits = [(m.start(), m[2].strip(), f"{m[3]}.{m[4]}") for m in TOO_OLD_GPU.finditer(text)]
    hits += _incompatible(text)
    for _, name, cc in sorted(hits):
        found.setdefault(_name(name), cc)
    return tuple(found.items())


def _incompatible(text: str) -> list[tuple[int, str, str]]:
    """(offset, name, compute capability) of each GPU `_check_cubins`' warning names in `text`
    (quote marks already taken off), the name without the prose around it."""
    return [(m.start(), _name(re.sub(r"^.*Warning:\s*", "", m[1])), normalize_cc(m[2]) or m[2])
            for m in INCOMPATIBLE.finditer(text)]


# where a GPU's name starts inside the reporter's sentence that quotes the warning ("we run
# on rtx 5080 and get NVIDIA GeForce RTX 5080 with CUDA capability …"): a brand torch prints
_BRAND = re.compile(r"\b(?:NVIDIA|GeForce|Quadro|Tesla|TITAN|Titan)\b")


def _name(written: str) -> str:
    """A GPU's name as torch printed it, without the list marker, backtick or quote of the
    prose it was pasted in ("- `NVIDIA GeForce RTX 5090" → "NVIDIA GeForce RTX 5090"), nor the
    sentence before it (from its first brand word on, where prose precedes it: a name is a
    few words, "NVIDIA GeForce GTX 1060 with Max-Q Design" among the longest)."""
    name = written.strip().lstrip("-*`'\" \t").strip()
    brands = list(_BRAND.finditer(name))
    if len(name.split()) > 7 and brands:
        # the last run of brand words: "… like NVIDIA GeForce RTX 5080" → its "NVIDIA"
        start = brands[-1].start()
        for b in reversed(brands[:-1]):
            if name[b.end():start].strip():
                break
            start = b.start()
        name = name[start:]
    return name


def incompatible_gpus(text: str) -> tuple[tuple[str, str], ...]:
    """(name, compute capability) of each GPU torch's `_check_cubins` warning names ("… with
    CUDA capability sm_120 is not compatible with the current PyTorch installation"), once
    each."""
    found: dict[str, str] = {}
    for _, name, cc in _incompatible(_QUOTE.sub("", text[:LONGEST])):
        found.setdefault(name, cc)
    return tuple(found.items())


# what torch says after "Found GPU0 … which is of cuda capability 6.1.": the older wording's
# verdict, the minimum it states, or the range of torch 2.7's wording
_NO_LONGER = re.compile(r"\A[.\s]{0,8}PyTorch no longer supports this GPU because it is too old")
_MINIMUM = re.compile(r"\A[^\n]{0,4}\s{0,40}(?:PyTorch no longer supports this GPU because it is "
                      r"too old\.?\s{0,40})?(?:The minimum cuda capability supported by this "
                      r"library is|Minimum and Maximum cuda capability supported by this version "
                      r"of PyTorch is"
                      # torch 2.8+: its list of CCs, lowest first (PTX runs only forward, so a
                      # GPU below the first has no code whatever follows, a cut list too)
                      r"|The following list shows the CCs this version of PyTorch was built for"
                      r"[^\n:]{0,80}:\s{0,8}[-•*])\s{0,8}\(?(\d{1,2})\.(\d{1,2})")


def too_old_gpus(text: str) -> tuple[tuple[str, str], ...]:
    """(name, compute capability) of each GPU torch's warning calls older than its build
    supports, once each: "… which is of cuda capability 3.5. PyTorch no longer supports this
    GPU because it is too old", or a minimum ("The minimum cuda capability supported by this
    library is 3.7", "Minimum and Maximum … is (7.0) - (12.0)") the GPU is below."""
    text = _QUOTE.sub("", text[:LONGEST])
    found: dict[str, str] = {}
    for m in TOO_OLD_GPU.finditer(text):
        after = text[m.end():m.end() + 400]
        cc = (int(m[3]), int(m[4]))
        least = _MINIMUM.match(after)
        if _NO_LONGER.match(after) or (least and cc < (int(least[1]), int(least[2]))):
            found.setdefault(m[2].strip(), f"{cc[0]}.{cc[1]}")
    return tuple(found.items())


def libcuda(found: int) -> LibcudaFacts:
    """libcuda's view of the driver, as torch's "found version" states it."""
    return LibcudaFacts(
        path="(not in the report: torch's error gives cudaDriverGetVersion() only)",
        cuda_driver_version=found,
        driver_version=not_reported("the driver's version is not in the report (torch's "
                                    "error states only the highest CUDA it runs)"),
    )


def parse(text: str) -> Partial | None:
    """The facts torch's messages state in `text` (a whole paste), None when it has none."""
    gpus = warned_gpus(text)
    archs = arch_list(_QUOTE.sub("", text[:LONGEST]))
    too_old = DRIVER_TOO_OLD.search(text[:LONGEST])
    found = int(too_old[1]) if too_old else None  # the driver's CUDA, 1000*major + 10*minor
    init = init_error(text)
    if init is not None and too_old is not None and DRIVER_TOO_OLD.search(init) is None:
        init = " ".join(too_old[0].split())  # the reason wrapped across lines, as pasted
    cudnn = CUDNN_MISMATCH.search(text[:LONGEST])
    cpu = NOT_COMPILED.search(text[:LONGEST]) is not None and not gpus and archs is None
    launch = NO_KERNEL_IMAGE.search(text[:LONGEST]) if not cpu and init is None \
        and not EXTENSION.search(text[:LONGEST]) else None
    if not gpus and archs is None and found is None and init is None and cudnn is None \
            and not cpu and launch is None:
        return None
    torch = None
    if gpus or archs is not None or init is not None or cudnn is not None or cpu or launch:
        rt = runtime(archs, gpus, init, too_old_gpus(text), incompatible_gpus(text))
        if launch is not None:  # a kernel was launched: CUDA initialised, on a GPU
            rt = replace(rt, cuda_available=True, launch_error=launch[1])
        if cpu:
            rt = replace(rt, cuda=None, cuda_available=False,
                         cuda_init_error=NOT_COMPILED.pattern)
        if cudnn is not None:
            major, minor, patch = (int(g) for g in cudnn.groups()[3:])
            rt = replace(rt, cudnn_built=".".join(cudnn.groups()[:3]),
                         cudnn_version=encode_cudnn_version(major, minor, patch))
        torch = TorchFacts(
            python=not_reported("the interpreter's path is not in the report"),
            static=not_reported("torch's package metadata is not in the report"),
            runtime=rt,
            seconds=not_reported("no probe ran: the facts are torch's own messages"),
        )
    nvml = None
    if init is not None and MISMATCH.search(init):
        nvml = Unavailable(Reason.VERSION_MISMATCH, "the driver's CUDA library and its kernel "
                           "module are of different versions: torch's CUDA initialisation "
                           "failed with error 803 (cudaErrorSystemDriverMismatch)", init)
    if init is not None and init.startswith(NO_DRIVER):
        # cudaDriverGetVersion() gave 0: libcuda.so.1, the driver's CUDA library, is not there
        nvml = Unavailable(Reason.NOT_INSTALLED, TORCH_NO_DRIVER, init)
    return Partial(kind="torch's messages", rank=1, torch=torch, nvml=nvml,
                   libcuda=libcuda(found) if found is not None else None)


def stated_torch(version: str, cuda: str | None, available: bool | None, text: str, *,
                 source: str, cudnn: int | None = None) -> TorchFacts:
    """torch as an app's own report of it states it (its version, CUDA, whether CUDA is
    available, cuDNN), with the arch list and GPUs torch's warnings in `text` name and the ROCm
    version a "+rocmX" tag gives; every other fact not in the report (`source` names it)."""
    why = f"is not in the report ({source} does not state it)"
    hip = re.search(r"\+rocm(\d{1,2}(?:\.\d{1,3}){0,3})$", version)
    runtime = stated_runtime(
        version, cuda, available, hip[1] if hip else None, why=why, source=source,
        archs=arch_list(text), warned_gpus=warned_gpus(text), too_old_gpus=too_old_gpus(text),
        incompatible_gpus=incompatible_gpus(text), cudnn=cudnn)
    return TorchFacts(
        python=not_reported("the interpreter's path is not in the report"),
        static=not_reported("torch's package metadata is not in the report"),
        runtime=runtime,
        seconds=not_reported(f"no probe ran: the facts are {source}"),
        stated_version=release_left_open(runtime, version),
    )


def runtime(archs: tuple[str, ...] | None, gpus: tuple[tuple[str, str], ...],
            init: str | None = None, too_old: tuple[tuple[str, str], ...] = (),
            incompatible: tuple[tuple[str, str], ...] = ()) -> TorchRuntime:
    """A CUDA build of unknown version (torch warns about arches, and fails to initialise CUDA,
    only in a CUDA build) that named these GPUs and this arch list, or gave this reason for
    torch.cuda.is_available() being False."""
    why = "is not in the report (only torch's messages are)"
    return TorchRuntime(
        version=not_reported(f"torch's version {why}"),
        cuda=not_reported(f"torch's CUDA version {why}: its messages say it is a CUDA build"),
        hip=None,
        cudnn_version=not_reported(f"torch's cuDNN {why}"),
        cuda_available=False if init is not None else not_reported(
            f"torch.cuda.is_available() {why}"),
        cuda_init_error=init if init is not None else not_reported(
            f"torch's CUDA initialisation error {why}"),
        device_count=not_reported(f"torch's device count {why}"),
        arch_list=archs if archs is not None else not_reported(
            f"torch's arch list (torch.cuda.get_arch_list()) {why}"),
        devices=not_reported(f"torch's device list {why}"),
        cudnn_conv=not_reported("no convolution was run: the report is torch's messages"),
        mapped_libraries=not_reported(f"the libraries torch loaded {why}"),
        file=not_reported(f"where torch was imported from {why}"),
        warned_gpus=gpus,
        too_old_gpus=too_old,
        incompatible_gpus=incompatible,
    )
