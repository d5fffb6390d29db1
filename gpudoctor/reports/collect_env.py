"""The output of `python -m torch.utils.collect_env`, as pasted into bug reports.

Every version of the script prints "Key: value" lines (torch/utils/collect_env.py,
`env_info_fmt`); a value it could not get is "Could not collect" (its `replace_nones`), and on a
machine where torch sees no CUDA and nvidia-smi / nvcc fail, the GPU fields say "No CUDA". What
the lines mean:

- "PyTorch version" is `torch.__version__`, "N/A" when `import torch` failed;
- "CUDA used to build PyTorch" is `torch.version.cuda`: "None" or "Could not collect" for a CPU
  build, "N/A" for a ROCm build ("ROCM used to build PyTorch" then has `torch.version.hip`);
- "Is CUDA available" is `torch.cuda.is_available()` ("True"/"False"; "Yes"/"No" in 1.x);
- "GPU models and configuration" is `nvidia-smi -L` with the UUIDs cut out ("GPU 0: NVIDIA
  GeForce RTX 4090"), so these are the driver's GPUs; on a ROCm build it is torch's device
  name instead, an AMD GPU, which is not read as an NVIDIA one;
- "Nvidia driver version" is read from `nvidia-smi`'s banner;
- "CUDA runtime version" is `nvcc --version`: the toolkit on PATH, not torch's runtime;
- "cuDNN version" lists the libcudnn files `ldconfig -p` finds on the system ("Probably one of
  the following:" and a list), not the cuDNN torch loads;
- "[pip3] name==version" / "[conda] name version build channel" follow "Versions of relevant
  libraries".

Mapped: torch's version, its CUDA / ROCm build and whether CUDA is available; the driver version
and the GPUs' names; torch's arch list and the GPUs it names when torch's warning about an
unsupported GPU ("… with CUDA capability sm_120 is not compatible … The current PyTorch install
supports CUDA capabilities sm_50 … sm_90.") is in the paste. torch's
devices and cuDNN, the GPUs' compute capability and memory, the process environment, the
toolkit's location and the cuDNN files stay Unavailable(NOT_REPORTED), with what the report
did say in the detail.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import (
    CudnnFacts,
    GpuFacts,
    HostFacts,
    NvmlFacts,
    Reason,
    ToolkitFacts,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    Unavailable,
    VersionReading,
)
from gpudoctor.reports import cudnn_list, torch_messages
from gpudoctor.reports.interface import (
    Partial,
    named_gpu,
    not_reported,
    tag_cuda,
    unreported_host,
)

# the script's first line, or its first field: "PyTorch version: 2.5.1" (also vLLM's copy,
# "PyTorch version              : 2.5.1", and hand-edited pastes, "PyTorch version 1.5.0")
START = re.compile(r"^\s*(?:Collecting environment information\.*\s*$|"
                   r"PyTorch version\s*:?\s*(?:\d|N/A))")
VERSION_LINE = re.compile(r"^\s*PyTorch version\s*:?\s*(\d\S*|N/A)", re.MULTILINE)
# a collect_env output whose top was cut off (a continuation chunk) still has these lines,
# which no other output prints: the interpreter line and torch's CUDA answer
START_CUT = re.compile(r"^\s*(?:Python version:\s*\d[^\n]*\(\d\d-bit runtime\)|"
                       r"Is CUDA available:\s*(?:True|False|Yes|No)\s*$)")
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9 ._()/-]*")
LONGEST = 1000  # longer lines (lscpu's flags) hold no field; the line regexes stay linear
_GPU = re.compile(r"^\s*GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?\s*$")
_MIG = re.compile(r"^\s+MIG\s+\d+g\.\d+gb\s+Device\s+\d+:")
_MISSING = ("could not collect", "no cuda", "n/a", "none", "")


def _fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.replace("：", ":").splitlines():  # fullwidth colons in hand-typed pastes
        key, colon, value = line.strip()[:LONGEST].partition(":")
        key = key.rstrip()
        if colon and _KEY.fullmatch(key) and key not in fields:
            fields[key] = value.strip()
    version = VERSION_LINE.search(text)
    if version and "PyTorch version" not in fields:  # "PyTorch version 1.5.0", no colon
        fields["PyTorch version"] = version[1]
    return fields


def _known(value: str | None) -> str | None:
    return None if value is None or value.lower() in _MISSING else value


def _flag(value: str | None) -> bool | None:
    return {"true": True, "yes": True, "false": False, "no": False}.get((value or "").lower())


def _packages(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if re.match(r"\s*\[(pip\d?|conda)\] ", line)]


def _pip_torch(packages: list[str]) -> str | None:
    for line in packages:
        m = re.match(r"\[pip\d?\] torch==(\S+)$", line)
        if m:
            return m[1]
    return None


def _gpus(text: str) -> tuple[GpuFacts, ...]:
    """The GPUs of `nvidia-smi -L` as collect_env lists them; a GPU in MIG mode is followed by
    its MIG devices ("  MIG 3g.20gb Device 0:"). In a paste cut off inside the list, its last
    line may end mid-name ("GPU 2: NVID"): it is left out when GPUs before it are listed."""
    why = "is not in the report: collect_env lists the GPUs' names only"
    lines = [re.sub(r"^\s*GPU models and configuration\s*:", "", line)
             for line in text.replace("：", ":").splitlines() if len(line) < LONGEST]
    found: list[tuple[int, str, bool]] = []
    for line in lines:
        if (m := _GPU.match(line)) is not None:
            found.append((int(m[1]), m[2].strip(), False))
        elif found and _MIG.match(line):
            found[-1] = (*found[-1][:2], True)
    listed = [line for line in lines if line.strip()]
    if len(found) > 1 and listed and _GPU.match(listed[-1]):
        found.pop()  # the paste ends on this line: it may be cut off
    return tuple(named_gpu(index, name, why, mig_mode=True if mig else not_reported(
        f"MIG mode {why} (a GPU in MIG mode lists its MIG devices under it)"))
        for index, name, mig in found)


def _nvml(fields: dict[str, str], text: str, rocm: bool) -> NvmlFacts | Unavailable:
    driver: str | Unavailable | None = _known(fields.get("Nvidia driver version"))
    said = f"Nvidia driver version: {fields.get('Nvidia driver version', '(line missing)')}"
    if driver is None and not rocm and _gpus(text):
        # `nvidia-smi -L` listed the GPUs, so the driver answered: the paste is cut off before
        # its version, or collect_env could not read it from nvidia-smi's banner
        driver = not_reported("the driver's version is not in the report (" + (
            "the collect_env output is cut off before 'Nvidia driver version')"
            if "Nvidia driver version" not in fields else
            f"collect_env's '{said}', though nvidia-smi listed the GPUs)"))
    if driver is None and (gone := _no_driver(fields, text)) is not None:
        return gone
    if driver is None and "Nvidia driver version" not in fields \
            and "GPU models and configuration" not in fields:
        return not_reported("the NVIDIA driver is not in the report (the collect_env output is "
                            "cut off before its GPU and driver lines)", said)
    if driver is None:
        return not_reported("the NVIDIA driver is not in the report: collect_env could not run "
                            "nvidia-smi (no driver, a driver that does not answer, or no "
                            "nvidia-smi on PATH)", said)
    gpus = () if rocm else _gpus(text)
    if not gpus:
        return not_reported(f"the GPU list is not in the report (collect_env shows driver "
                            f"{driver} but no NVIDIA GPU)", said)
    return NvmlFacts(
        driver_version=driver,
        cuda_driver_version=not_reported("the highest CUDA the driver runs is not in "
                                         "collect_env's report (nvidia-smi's banner shows it)"),
        nvml_version=not_reported("the NVML version is not in the report"),
        binding="nvidia-smi, as collect_env reported it",
        gpus=gpus,
    )


def _no_driver(fields: dict[str, str], text: str) -> Unavailable | None:
    """No working driver, as the report states it: torch is a CUDA build whose CUDA is not
    available, and collect_env could not run nvidia-smi (driver and GPUs "Could not collect" or
    "No CUDA") — unless torch names another cause (a driver too old for it: one is there)."""
    built = _known(fields.get("CUDA used to build PyTorch"))
    if (built is None or not built[:1].isdigit() or _hip(fields) is not None
            or _flag(fields.get("Is CUDA available")) is not False
            or not ("Nvidia driver version" in fields or _no_cuda(fields)) or _gpus(text)):
        return None
    why = torch_messages.init_error(text)
    if why is not None and not why.startswith(torch_messages.NO_DRIVER):
        return None
    said = (f"Nvidia driver version: {fields.get('Nvidia driver version') or '(empty)'}; "
            f"GPU models and configuration: "
            f"{fields.get('GPU models and configuration') or '(none)'}")
    return Unavailable(
        Reason.NOT_INSTALLED, f"no working NVIDIA driver (or no NVIDIA GPU): collect_env could "
        f"not run nvidia-smi (driver and GPUs 'Could not collect'), and torch, a CUDA {built} "
        "build, finds no CUDA device" + (f" (torch: '{why}')" if why else ""), said)


def _no_cuda(fields: dict[str, str]) -> bool:
    """collect_env's "No CUDA" in its GPU field: it writes it into every CUDA field at once, only
    where torch finds no CUDA and the toolkit's version, the GPUs and the driver's version were
    all missing (its `pretty_str`), so it stands for the driver line a paste cut off."""
    return (fields.get("GPU models and configuration") or "").strip() == "No CUDA"


def _hip(fields: dict[str, str]) -> str | None:
    """torch.version.hip for a ROCm build; a value cut off mid-way ("N/" of "N/A") is none."""
    value = _known(fields.get("ROCM used to build PyTorch"))
    return value if value is not None and value[:1].isdigit() else None


def _toolkit(fields: dict[str, str]) -> ToolkitsFacts | Unavailable:
    """The toolkit on PATH: collect_env's "CUDA runtime version" is `nvcc --version`'s."""
    said = fields.get("CUDA runtime version", "(line missing)")
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*", said.strip())
    if m is None:
        return not_reported("the CUDA toolkit is not in the report",
                            f"collect_env: CUDA runtime version (nvcc on PATH): {said}")
    return ToolkitsFacts(toolkits=(ToolkitFacts(
        root="(location not in the report)",
        found_by="nvcc on PATH (collect_env's 'CUDA runtime version')",
        version=f"{m[1]}.{m[2]}",
        readings=(VersionReading("nvcc", "nvcc --version, as collect_env ran it", said.strip()),),
        nvcc=None, pip_assembled=False, in_use=True),))


def _arch_list(text: str) -> tuple[str, ...] | Unavailable:
    """torch's own arch list, when its warning about an unsupported GPU is in the paste ("The
    current PyTorch install supports CUDA capabilities sm_50 sm_60 … sm_90.")."""
    archs = torch_messages.arch_list(text)
    if archs is not None:
        return archs
    return not_reported("torch's arch list (torch.cuda.get_arch_list()) is not in the report")


def _init_error(text: str) -> str | Unavailable:
    """torch's reason for is_available() being False, when its warning is in the paste
    ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old …")."""
    m = re.search(r"CUDA initialization: (.+?)(?: \(Triggered internally at .*)?$", text,
                  re.MULTILINE)
    if m:
        return m[1].strip()
    return not_reported("torch's reason for torch.cuda.is_available() being False is not in "
                        "the report")


def _runtime(fields: dict[str, str], version: str, text: str) -> TorchRuntime | Unavailable:
    flag = _flag(fields.get("Is CUDA available"))
    available: bool | Unavailable = flag if flag is not None else not_reported(
        "torch.cuda.is_available() is not in the report (the collect_env output is cut off "
        "before 'Is CUDA available')")
    built = fields.get("CUDA used to build PyTorch")
    if built is None and (tag_cuda(version) or version.endswith("+cpu")):
        # cut off before its CUDA line (or an app's copy of the first lines): the version's
        # local tag states the build ("2.7.1+cu128", "2.1.0+cpu")
        built = tag_cuda(version) or "None"
    if built is None or (built == "N/A" and "ROCM used to build PyTorch" not in fields):
        return not_reported("torch's CUDA (or ROCm) build is not in the report (the collect_env "
                            "output is cut off before it)")
    cuda = _known(built)
    hip = _hip(fields)
    return TorchRuntime(
        version=version,
        cuda=cuda if hip is None else None,
        hip=hip,
        cudnn_version=not_reported(
            "torch's own cuDNN version is not in the report (collect_env's 'cuDNN version' "
            "lists the libcudnn files on the system, not the one torch loads)"),
        cuda_available=available,
        cuda_init_error=None if available is True else _init_error(text),
        device_count=not_reported("torch's device count is not in the report"),
        arch_list=_arch_list(text),
        devices=not_reported("torch's devices are not in the report"),
        cudnn_conv=not_reported("no convolution was run: the report is collect_env's text"),
        mapped_libraries=not_reported("the libraries torch loaded are not in the report"),
        file=not_reported("where torch was imported from is not in the report"),
        warned_gpus=torch_messages.warned_gpus(text),
        too_old_gpus=torch_messages.too_old_gpus(text),
        incompatible_gpus=torch_messages.incompatible_gpus(text),
    )


def _torch(fields: dict[str, str], packages: list[str], text: str
           ) -> TorchFacts | Unavailable:
    version = fields.get("PyTorch version", "")
    pip = _pip_torch(packages)
    listed = "; ".join(packages) or "no [pip]/[conda] lines"
    if "PyTorch version" not in fields:  # the paste starts below it (its top is cut off)
        return _torch_cut(fields, text)
    if _known(version) is None:
        if pip or any(re.match(r"\[conda\] (pytorch|torch) ", p) for p in packages):
            return Unavailable(
                Reason.ERROR, f"collect_env could not import torch ('PyTorch version: "
                f"{version or 'N/A'}'), though it is installed ({pip and 'torch==' + pip})",
                listed)
        return Unavailable(Reason.NOT_INSTALLED, "torch is not installed in the interpreter "
                           "collect_env ran ('PyTorch version: N/A')", listed)
    return TorchFacts(
        python=not_reported("the interpreter's path is not in the report",
                            f"Python version: {fields.get('Python version', '?')}"),
        static=not_reported("torch's package metadata is not in the report", listed),
        runtime=_runtime(fields, version, text),
        seconds=not_reported("no probe ran: the facts are collect_env's"),
        python_version=_python_version(fields.get("Python version", "")),
    )


def _torch_cut(fields: dict[str, str], text: str) -> TorchFacts | Unavailable:
    """torch as a collect_env whose top is cut off states it: "Is CUDA available: True" beside
    NVIDIA GPUs is a CUDA build of a version not in the report; anything less says nothing."""
    cut = "is not in the report (the collect_env output starts below 'PyTorch version')"
    if _flag(fields.get("Is CUDA available")) is not True or _hip(fields) or not _gpus(text):
        return not_reported(f"torch {cut}")
    return TorchFacts(
        python=not_reported("the interpreter's path is not in the report"),
        static=not_reported("torch's package metadata is not in the report"),
        runtime=TorchRuntime(
            version=not_reported(f"torch's version {cut}"),
            cuda=not_reported(f"torch's CUDA version {cut}; CUDA is available with NVIDIA GPUs, "
                              "so it is a CUDA build"),
            hip=None,
            cudnn_version=not_reported(f"torch's cuDNN {cut}"),
            cuda_available=True, cuda_init_error=None,
            device_count=not_reported("torch's device count is not in the report"),
            arch_list=_arch_list(text),
            devices=not_reported("torch's devices are not in the report"),
            cudnn_conv=not_reported("no convolution was run: the report is collect_env's text"),
            mapped_libraries=not_reported("the libraries torch loaded are not in the report"),
            file=not_reported("where torch was imported from is not in the report"),
            warned_gpus=torch_messages.warned_gpus(text),
            too_old_gpus=torch_messages.too_old_gpus(text),
            incompatible_gpus=torch_messages.incompatible_gpus(text)),
        seconds=not_reported("no probe ran: the facts are collect_env's"),
        python_version=_python_version(fields.get("Python version", "")),
    )


def _python_version(value: str) -> str | Unavailable:
    """collect_env's "3.10.12 (main, ...) [GCC 11.4.0] (64-bit runtime)" -> "3.10.12"."""
    m = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)\b", value)
    return m[1] if m else not_reported("the interpreter's Python version is not in the report")


def _host_detail(fields: dict[str, str]) -> str:
    platform = fields.get("Python platform", "")
    kernel = re.match(r"Linux-(.+?)-(?:x86_64|aarch64|ppc64le|arm64)", platform)
    parts = [f"OS: {fields.get('OS', '?')}"]
    if kernel:
        wsl = " (WSL)" if "microsoft" in kernel[1].lower() else ""
        parts.append(f"kernel {kernel[1]}{wsl}")
    parts.append(f"libc: {fields.get('Libc version', '?')}")
    parts.append(f"Python {fields.get('Python version', '?')}")
    return "; ".join(parts)


# the machine's architecture as Python's platform string ends it ("Linux-6.8.12-tegra-aarch64-with-
# glibc2.39") or the OS line's parenthesis ("Ubuntu 24.04.4 LTS (aarch64)")
_MACHINE = re.compile(r"-(x86_64|aarch64|ppc64le|arm64|s390x)-with-|"
                      r"\((x86_64|aarch64|ppc64le|arm64)\)\s*$")


def _host(fields: dict[str, str]) -> HostFacts | Unavailable:
    """The host facts collect_env states: only the machine's architecture (the tables' wheel
    rows are x86_64's), where its platform or OS line names it; the rest is not in it."""
    why = "the process environment, device nodes and /dev/shm are not in the report"
    m = _MACHINE.search(fields.get("Python platform", "")) or _MACHINE.search(fields.get("OS", ""))
    if m is None:
        return not_reported(why, _host_detail(fields))
    return replace(unreported_host(lambda what: not_reported(f"{what}: {why}",
                                                              _host_detail(fields))),
                   machine=m[1] or m[2])


def _cudnn(text: str, fields: dict[str, str]) -> CudnnFacts | Unavailable:
    """The cuDNN copies the "cuDNN version" section lists (`gpudoctor.reports.cudnn_list`)."""
    found = cudnn_list.copies(text)
    if isinstance(found, CudnnFacts):
        return found
    return not_reported("cuDNN's files, headers and versions are not in the report",
                        f"collect_env found: {fields.get('cuDNN version', '(line missing)')}")


# collect_env's fields after its first: a block holding none of them is another program's
# "PyTorch version 1.10.0+cu113" (Isaac Gym's start-up, a test script's), not collect_env cut
# off after one line
FIELDS = ("Is debug build", "CUDA used to build PyTorch", "ROCM used to build PyTorch", "OS",
          "GCC version", "Clang version", "CMake version", "Libc version", "Python version",
          "Python platform", "Is CUDA available", "CUDA runtime version",
          "GPU models and configuration", "Nvidia driver version", "cuDNN version",
          "HIP runtime version", "MIOpen runtime version", "Is XNNPACK available")


def parse(text: str) -> Partial | None:
    """The facts of one collect_env block (possibly cut off); None for a block that holds
    none of collect_env's fields past its first, nor its first line ("Collecting environment
    information...") nor its package lines: another program's print (`FIELDS`)."""
    fields = _fields(text)
    packages = _packages(text)
    if not ("Collecting environment information" in text or packages
            or any(f in fields for f in FIELDS)):
        return None
    if "Collecting environment information" not in text and _PROMPT.search(text):
        return None  # an interpreter session's prints ("PyTorch version:", "cuDNN version:")
    return _parsed(text, fields, packages)


# the interactive interpreter's prompt, or a print() call it echoes (under a quote's marks, or
# with the prompt taken off): collect_env runs as a module and prints neither, so a block
# holding one is a session's own prints
_PROMPT = re.compile(r"(?m)^[ \t>]{0,12}(?:>>>[ \t]|print\()")


def _parsed(text: str, fields: dict[str, str], packages: list[str]) -> Partial:
    complete = "Versions of relevant libraries" in text or bool(packages)
    rocm = _hip(fields) is not None
    return Partial(
        kind="collect_env",
        rank=2,
        complete=complete,
        nvml=_nvml(fields, text, rocm),
        torch=_torch(fields, packages, text),
        host=_host(fields),
        toolkits=_toolkit(fields),
        cudnn=_cudnn(text, fields),
    )
