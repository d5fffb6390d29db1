"""What every report reader returns: the facts one block of a report states.

A reader fills the parts of the `Environment` its source covers and leaves the rest None ("this
block says nothing about it"); `gpudoctor.reports.read.read_reports` merges the blocks of every
input and turns what no block stated into `Unavailable(Reason.NOT_REPORTED)`. A fact a block
lacks is never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from gpudoctor.model import (
    CudnnFacts,
    GpuFacts,
    HostFacts,
    LibcudaFacts,
    NvmlFacts,
    Reason,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.views import PROSE


class ReportError(ValueError):
    """An input that holds no report gpudoctor can read; `str(e)` is one line naming it."""


def not_reported(message: str, detail: str | None = None) -> Unavailable:
    """A fact the report does not state: `message` says which, `detail` what it did say."""
    return Unavailable(Reason.NOT_REPORTED, message, detail)


@dataclass(frozen=True, slots=True)
class Partial:
    """The facts one block of a report states; None: the block says nothing about that part.

    `rank` orders blocks that state the same part: the driver's view from `nvidia-smi -q` (5)
    beats the table (4), an nvidia-smi error (3), collect_env's GPU names (2), and torch's
    messages quoted anywhere in the text (1).
    """

    kind: str  # "collect_env", "nvidia-smi", "nvidia-smi -q", "nvidia-smi -q -x", …
    rank: int
    complete: bool = True  # False: the block was cut off part-way
    nvml: NvmlFacts | Unavailable | None = None
    torch: TorchFacts | Unavailable | None = None
    host: HostFacts | Unavailable | None = None
    toolkits: ToolkitsFacts | Unavailable | None = None
    cudnn: CudnnFacts | Unavailable | None = None
    libcuda: LibcudaFacts | Unavailable | None = None  # torch's "found version 11040"


def named_gpu(index: int, name: str, why: str, *, uuid: str | None = None,
              compute_capability: str | None = None,
              mig_mode: bool | Unavailable | None = None) -> GpuFacts:
    """A GPU a report names (with its UUID or compute capability where it gives them); every
    other fact `not_reported("<fact> " + why)`, `why` saying what the report does state."""
    return GpuFacts(
        index=index, name=name,
        uuid=uuid or not_reported(f"the GPU's UUID {why}"),
        compute_capability=compute_capability or not_reported(f"the compute capability {why}"),
        memory_total=not_reported(f"the GPU's memory {why}"),
        memory_free=not_reported(f"the GPU's free memory {why}"),
        pci_bus_id=not_reported(f"the GPU's bus id {why}"),
        persistence_mode=not_reported(f"persistence mode {why}"),
        mig_mode=mig_mode if mig_mode is not None else not_reported(f"MIG mode {why}"),
    )


def unreported_host(absent: Callable[[str], Unavailable]) -> HostFacts:
    """Host facts of which a report states none, each `absent(what)`: a reader that states
    some `replace`s those (/dev/shm from ds_report, device nodes from `ls -l /dev/nvidia*`)."""
    return HostFacts(
        os_name=absent("the OS"),
        kernel=absent("the kernel"),
        machine=absent("the machine's architecture"),
        glibc=absent("glibc"),
        python_version=absent("the Python version"),
        python_executable=absent("the interpreter"),
        container=absent("whether this runs in a container"),
        wsl=absent("whether this is WSL"),
        env=absent("the environment variables"),
        ld_library_path_missing=absent("LD_LIBRARY_PATH"),
        dev_nodes=absent("the device nodes"),
        shm_bytes=absent("/dev/shm"),
        pci_gpus=absent("the PCI bus"),
        pci_gpu_drivers=(),
        nvidia_module=absent("the NVIDIA kernel module"),
        hostname=absent("the host name"),
    )


# GPU rows a reader takes from one block, at most: more is more than one machine's GPUs
MOST_GPUS = 64

# NvmlFacts.binding of GPUs a report states without NVML's view of every GPU: the one GPU
# torch named (reached through CUDA), the GPUs of sections of `nvidia-smi -q` pasted alone,
# the MIG-enabled GPUs `nvidia-smi mig` lists.
# GD102 ("every GPU answers NVML") does not judge them.
TORCH_NAMED = "torch.cuda.get_device_name()"
Q_SECTIONS = "nvidia-smi -q (sections of it)"
QUERY_SOME = "nvidia-smi --query-gpu -i (the GPUs chosen)"
MIG_LIST = "nvidia-smi mig -lgi/-lci (MIG-enabled GPUs only)"
NOT_EVERY_GPU = frozenset({TORCH_NAMED, Q_SECTIONS, QUERY_SOME, PROSE, MIG_LIST})

# nvidia-smi's (or the shell's) own words that nvidia-smi or libnvidia-ml.so is not there, as
# the nvidia-smi reader states them: in a container a report names, GD505's sign that the
# toolkit did not mount the driver (here, not in the reader: the check path does not import it)
SMI_MISSING = ("nvidia-smi or the driver's libnvidia-ml.so is missing: no NVIDIA driver is "
               "installed (or, in a container, GPU support was not requested)")
# the start-up check of NVIDIA's NGC images (CUDA, PyTorch, Triton …): it prints "WARNING: The
# NVIDIA Driver was not detected.  GPU functionality will not be available." where it finds no
# libcuda.so.1 outside the image's compat folder, or no /dev/nvidiactl. In a container it is
# one of NO_DRIVER_INSIDE: the toolkit did not give the container the driver and the GPUs
NGC_NO_DRIVER = ("an NVIDIA container image's start-up check found no driver in it ('The NVIDIA "
                 "Driver was not detected': no libcuda.so.1 or no /dev/nvidiactl)")
# torch's "Found no NVIDIA driver on your system" (cudaDriverGetVersion() gave 0: it cannot
# load libcuda.so.1); in a container one of NO_DRIVER_INSIDE
TORCH_NO_DRIVER = ("no NVIDIA driver: torch says 'Found no NVIDIA driver on your system' (it "
                   "cannot load libcuda.so.1, the driver's CUDA library)")
# the messages of a container's missing driver, each in its finder's words (GD505, GD101)
NO_DRIVER_INSIDE = frozenset({SMI_MISSING, NGC_NO_DRIVER, TORCH_NO_DRIVER})
# nvidia-smi's table with "CUDA Version: N/A": it found no libcuda.so.1 to ask (in a container,
# GD505's sign that the toolkit mounted the driver without its compute capability)
CUDA_NA = "nvidia-smi shows CUDA Version: N/A"
# torch's words for a driver older than its CUDA, which the checks read in a probe's error too
# (here, not in the torch messages' reader: the check path does not import it):
# cudaErrorInsufficientDriver (35) as torch raised it, and torch's own check with the driver's
# CUDA version, as pasted (wrapped)
INSUFFICIENT = "CUDA driver version is insufficient for CUDA runtime version"
DRIVER_TOO_OLD = re.compile(r"The NVIDIA driver on your\s{1,4}system\s{1,4}is too old\s{1,4}"
                            r"\(found\s{1,4}version\s{1,4}(\d{4,6})\)")
# the start of the nvidia-smi reader's message for "Failed to initialize NVML: <NVML's text>"
NVML_INIT_FAILED = "nvidia-smi could not initialise NVML"


def stated_driver(binding: str, why: str, gpus: tuple[GpuFacts | Unavailable, ...],
                  driver: str | None = None) -> NvmlFacts:
    """The driver as a report shows it: loaded (the report names its GPUs or their errors),
    its version where stated; its CUDA and NVML version `not_reported("<fact> " + why)`."""
    return NvmlFacts(
        driver_version=driver or not_reported(f"the driver's version {why}"),
        cuda_driver_version=not_reported(f"the highest CUDA the driver runs {why}"),
        nvml_version=not_reported(f"the NVML version {why}"),
        binding=binding,
        gpus=gpus,
    )


def tag_cuda(version: str) -> str | None:
    """The CUDA a torch version's local tag names ("2.1.0+cu118" → "11.8"), None without one.
    A version without a tag says nothing: its release's PyPI default differs by release."""
    tag = re.fullmatch(r"[^+]{1,40}\+cu(\d{1,2})(\d)", version)
    return f"{tag[1]}.{tag[2]}" if tag else None


# torch's own is_available() and its answer, in either order ("torch.cuda.is_available()
# returns True", "returns true when calling torch.cuda.is_available()")
TORCH_SAYS_AVAILABLE = re.compile(
    r"\btorch\.cuda\.is_available\(\)[`'\"]?[ \t]{0,4}(?:=+|:|->|→|(?:still[ \t]+)?"
    r"(?:returns?|returned|is|gives|gave|prints|printed)[ \t]{1,4})[ \t]{0,4}[`'\"]?"
    r"(?P<v>True|False|true|false)\b"
    r"|\b(?:returns?|returned|gives|gave|prints|printed)[ \t]{1,4}[`'\"]?(?P<w>True|False|true|"
    r"false)[`'\"]?[ \t]{1,4}(?:when[ \t]{1,4})?(?:calling|for|from|on)[ \t]{1,4}[`'\"]?"
    r"torch\.cuda\.is_available\(\)")


def torch_says_available(text: str) -> bool | None:
    """Whether the words quote torch.cuda.is_available()'s answer: True, False, or None where
    they quote none, or both."""
    said = {(m["v"] or m["w"]).lower() for m in TORCH_SAYS_AVAILABLE.finditer(text)}
    return said.pop() == "true" if len(said) == 1 else None


# torch's errors from a kernel launch (its own kernel's or an extension's): it is a CUDA build
# whose CUDA initialised and reached a GPU
KERNEL_ERROR = re.compile(r"(?:CUDA error: |cudaError\w{0,40}: )no kernel image is available|"
                          r"CUDA error: (?:an illegal memory access|device-side assert|"
                          r"invalid device function)")
# a release with PyTorch's CUDA or CPU tag ("2.6.0+cu124", "2.9.1+cpu"): no other package tags
# its versions so (torchvision's and torchaudio's are 0.x); where a text names no package
TORCH_TAGGED = r"[1-9]\.\d{1,2}\.\d{1,2}\+(?:cpu|cu\d{2,3})"
# torch's full version as its own code prints it (torch.__version__): release, pre-release,
# nightly date and local tag ("2.8.0.dev20250331+cu128"); the apps' readers share it
TORCH_VERSION = (r"\d{1,2}\.\d{1,3}\.\d{1,3}(?:(?:a|b|rc)\d{1,3})?(?:\.dev\d{8})?"
                 r"(?:\+[a-z0-9.]{1,40})?")


def conda_pinned_cuda(line: str, version: str | None) -> str | None:
    """The CUDA a conda command line pins for this very torch from PyTorch's channel
    ("pytorch==1.7.1 … cudatoolkit=11.0 -c pytorch", "pytorch-cuda=12.1"), or with `version`
    None for torch installed without a pinned version ("conda install pytorch torchvision
    cudatoolkit=10.2 -c pytorch": the channel's build for that CUDA); None where the line takes
    torch from another channel, installs the CPU build (cpuonly), pins another torch (or,
    for None, any), or no single CUDA."""
    if "cpuonly" in line or not re.search(r"(?:-c|--channel)[ \t]{1,4}pytorch(?:\s|$)", line):
        return None
    pins = re.findall(r"(?:^|\s)pytorch={1,2}(\S{1,40})", line)
    if version is None and (pins or not re.search(r"(?:^|\s)pytorch(?:\s|$)", line)):
        return None
    cudas = re.findall(r"(?:^|\s)(?:cudatoolkit|pytorch-cuda)={1,2}(\d{1,2}\.\d{1,2})(?:\s|$)",
                       line)
    return cudas[0] if pins == ([version] if version else []) and len(cudas) == 1 else None


def stated_torch(runtime: TorchRuntime | Unavailable, whose: str, *,
                 python_version: str | Unavailable | None = None,
                 stated_version: str | None = None) -> TorchFacts:
    """torch's facts as a report states them (`whose`: "ESPnet's check", "torch's own
    prints"): its run time, and nothing a report never shows (its interpreter's path, its
    package metadata, a probe's time); the interpreter's Python version where it gives it."""
    facts = TorchFacts(
        python=not_reported("the interpreter's path is not in the report"),
        static=not_reported("torch's package metadata is not in the report"),
        runtime=runtime,
        seconds=not_reported(f"no probe ran: the facts are {whose}"),
        stated_version=stated_version,
    )
    return facts if python_version is None else replace(facts, python_version=python_version)


def release_left_open(runtime: TorchRuntime | Unavailable, version: str | None) -> str | None:
    """`version` where `stated_runtime` left open which build of it the report shows (its
    runtime Unavailable), for `TorchFacts.stated_version`; None otherwise."""
    return version if isinstance(runtime, Unavailable) else None


def stated_runtime(version: str | Unavailable, cuda: str | None, available: bool | None,
                   hip: str | None, *,
                   why: str, source: str, archs: tuple[str, ...] | None,
                   warned_gpus: tuple[tuple[str, str], ...] = (),
                   too_old_gpus: tuple[tuple[str, str], ...] = (),
                   incompatible_gpus: tuple[tuple[str, str], ...] = (),
                   cudnn: int | None = None) -> TorchRuntime | Unavailable:
    """torch at run time as a report that states versions gives it (a tool's report, an
    environment list): its version, the CUDA it was built with (None: not stated), whether CUDA
    is available, its ROCm version from the "+rocmX" tag (`hip`), the arch list and the cuDNN it
    runs (`cudnn`, as cudnnGetVersion() encodes it) if the text shows them; every other fact
    `not_reported(... why)`. A version that is neither "+cpu", ROCm,
    nor stated or shown to be a CUDA build leaves whether it is one unknown; a version the
    text does not state is passed as its Unavailable."""
    cpu = isinstance(version, str) and version.endswith("+cpu")
    if cuda is None and not cpu and not hip and available is not True:
        named = f"torch {version}" if isinstance(version, str) else "torch"
        return not_reported(f"whether {named} is a CUDA build {why}")
    return TorchRuntime(
        version=version,
        cuda=None if cpu or hip else cuda or not_reported(
            f"torch's CUDA version {why}; CUDA is available, so it is a CUDA build"),
        hip=hip,
        cudnn_version=cudnn if cudnn is not None else not_reported(
            f"torch's cuDNN at run time {why}"),
        cuda_available=available if available is not None else not_reported(
            f"torch.cuda.is_available() {why}"),
        cuda_init_error=None if available else not_reported(f"torch's reason {why}"),
        device_count=not_reported(f"torch's device count {why}"),
        arch_list=archs if archs is not None else not_reported(f"torch's arch list {why}"),
        devices=not_reported(f"torch's device list {why}"),
        cudnn_conv=not_reported(f"no convolution was run: the report is {source}"),
        mapped_libraries=not_reported(f"the libraries torch loaded {why}"),
        file=not_reported(f"where torch was imported from {why}"),
        warned_gpus=warned_gpus,
        too_old_gpus=too_old_gpus,
        incompatible_gpus=incompatible_gpus,
    )
