"""Other tools' environment reports, pasted where collect_env's would be: the same facts in
other words.

- detectron2's `python -m detectron2.utils.collect_env`: a two-column table ("PyTorch
  1.8.0+cu111 @/path", "GPU available  Yes", "GPU 0,1  NVIDIA GeForce RTX 3090 (arch=8.6)",
  "Driver version  512.13", "NVCC  Cuda compilation tools, release 11.1, V11.1.105"), then
  torch's build configuration ("PyTorch built with: … - CUDA Runtime 11.1 - NVCC architecture
  flags: -gencode;arch=compute_86,code=sm_86 …");
- OpenMMLab's (mmcv, mmdet) `collect_env`: "sys.platform: linux", "CUDA available: True",
  "GPU 0,1,2,3: GeForce RTX 3090", "NVCC: Build cuda_11.1.TC455_06.29069683_0", "PyTorch:
  1.8.0+cu111", "PyTorch compiling details: PyTorch built with: …";
- SGLang's `check_env`: "CUDA available: True", "GPU 0,1: NVIDIA H200", "GPU 0,1 Compute
  Capability: 9.0", "CUDA Driver Version: 570.124.06" (the NVIDIA driver), "PyTorch: 2.9.1+cu129";
- Lightning's `collect_env_details`: "* CUDA: - GPU: - NVIDIA GeForce RTX 4090 … - available:
  True - version: 11.8", "* Lightning: … - torch: 2.6.0+cu118" (older: tab-indented "cuda:",
  "pyTorch_version:");
- nnDetection's environment dump: "PyTorch Version: 1.13.0", "PyTorch CUDA: 11.7", "PyTorch
  CUDA Arch List: ['sm_37', …]", "PyTorch Current Device Capability: (8, 6)";
- xFormers' `python -m xformers.info`: "xFormers 0.0.22", its operators' availability, then
  "pytorch.version: 2.0.1+cu118", "pytorch.cuda: available", "gpu.compute_capability: 6.0",
  "gpu.name: Tesla P100-PCIE" (one GPU: the current device);
- DeepSpeed's `ds_report`: "DeepSpeed general environment info:", then dot-leader rows
  ("torch version .... 2.3.0+cu121", "torch cuda version .... 12.1", "nvcc version .... 12.0");
- fastai's `show_install`: "=== Software ===", then padded "key : value" rows: fastai 1's
  "torch version : 1.0.0", "nvidia driver : 415.25", "torch cuda ver : 9.0.176", "torch cuda
  is : available", "torch cudnn ver : 7401", and under "=== Hardware ===" each GPU as "- gpu0
  : 7949MB | GeForce RTX 2080"; fastai 2 folds the availability into one row ("torch cuda :
  11.0 / is available") and names the GPU alone ("- gpu0 : GeForce RTX 2080 Ti");
- MONAI's `print_config()` (monai/config/deviceconfig.py), which its issue template asks for:
  "MONAI version: 1.3.0", "Pytorch version: 2.1.1+cu121", then under "Printing GPU config..."
  "Has CUDA: True" (torch.cuda.is_available()), "CUDA version: 12.1" (torch.version.cuda,
  printed only where CUDA is available), "cuDNN version: 8902"
  (torch.backends.cudnn.version()), "Library compiled for CUDA architectures: ['sm_50', …]"
  (torch.cuda.get_arch_list()), and each GPU as "GPU 0 Name: NVIDIA GeForce RTX 4090" and
  "GPU 0 CUDA capability (maj.min): 8.9";
- MinkowskiEngine's `ME.print_diagnostics()` (MinkowskiEngine/diagnostics.py): sections under
  "==========Pytorch==========" (torch.__version__ alone on its line, then
  "torch.cuda.is_available(): True") and "==========NVIDIA-SMI==========" (the path of
  nvidia-smi, then each `nvidia-smi -q` field whose key holds "version", colon dropped:
  "Driver Version 510.60.02", "CUDA Version 11.6": the driver answered), then nvcc's version.
  It names no GPU;
- faceswap's system information (lib/sysinfo.py), under "============ System Information
  ============": keys padded to 20 columns, "gpu_driver: 431.60" (NVML's), "gpu_devices: GPU_0:
  GeForce RTX 2060, GPU_1: …" (NVML's names), "gpu_cuda: 10.0" (the CUDA installed globally:
  nvcc, CUDA_PATH), "gpu_cudnn"; it names no torch.

What they state maps onto the collect_env facts: torch's version, its CUDA build (the version's
local tag, "CUDA Runtime", or the tool's own line), whether CUDA is available, the GPUs (names
from torch or nvidia-smi, with their compute capability where the tool prints it), the driver
when it is printed, the toolkit on PATH (nvcc's release), torch's arch list (from its build
flags) and the cuDNN torch runs (its build configuration's "- CuDNN 7.6.3" line). The rest
stays Unavailable(NOT_REPORTED).
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.model import (
    HostFacts,
    NvmlFacts,
    ToolkitFacts,
    ToolkitsFacts,
    TorchFacts,
    TorchRuntime,
    Unavailable,
    VersionReading,
)
from gpudoctor.reports.interface import (
    Partial,
    named_gpu,
    not_reported,
    release_left_open,
    stated_driver,
    stated_runtime,
    unreported_host,
)
from gpudoctor.versions import encode_cuda_version, encode_cudnn_version

# the first line of each tool's report (a paste cut at its top starts at a later line)
START = re.compile(
    r"^[ \t`]*(?:sys\.platform\s*:?\s+(?:linux|win32|darwin|cygwin)\b"  # detectron2, mmcv
    r"|\* CUDA:\s*$|cuda:\s*$"  # Lightning
    r"|-{3,} PyTorch Information -{3,}\s*$"  # nnDetection
    r"|xFormers \d+\.\d+\S*\s*$|DeepSpeed general environment info:\s*$"  # xformers, ds_report
    r"|=== Software ===\s*$"  # fastai
    r"|MONAI version:\s*\d+\.\d+\S*\s*$"  # MONAI's print_config
    r"|={5,}(?:System|Pytorch)={5,}\s*$"  # MinkowskiEngine's print_diagnostics
    r"|={5,} System Information ={5,}\s*$)"  # faceswap's system information
    r"|python3? -m sglang\.check_env\b")  # its command, maybe in a sentence before it
# a line these tools print that starts a report of theirs cut above it
START_CUT = re.compile(r"^[ \t`]*(?:Python:\s*\d+\.\d+\.\d+ \(|CUDA available:\s*(?:True|False)\s*$"
                       r"|PyTorch(?: version)?:\s*\d+\.\d+\S*\s*$"
                       # detectron2's first releases: no sys.platform row above its table
                       r"|Detectron2 Compiler[ \t]{2,}\S)")
# `nvcc --version` pasted on its own: the toolkit on PATH
# `nvcc --version`: its banner, or its version line alone where the paste kept only that
# ("Cuda compilation tools, release 10.0, V10.0.130": no other program prints it)
NVCC_START = re.compile(r"^[ \t`]*(?:nvcc: NVIDIA \(R\) Cuda compiler driver|"
                        r"Cuda compilation tools, release \d)")
LONGEST = 1000  # longer lines (compiler flags) hold no field that is read; no regex sees them
_KV = re.compile(r"^[*\-\s`]*([A-Za-z][\w .()/,-]*?)\s*:\s+(\S.*?)\s*$")  # "PyTorch: 1.8.0"
_TABLE = re.compile(r"^[`\s]*([A-Za-z][\w .()/,-]*?)\s{2,}(\S.*?)\s*$")  # detectron2's rows
# ds_report's rows; its keys hold no dot (a dot in the key made a line of dots quadratic)
_DOTS = re.compile(r"^[`\s]*([A-Za-z][\w ()/,-]*?) \.{3,} (\S.*?)\s*$")
_GPUS = re.compile(r"gpu ([\d,]+)( compute capability)?")  # a key, in lower case
# fastai's "- gpu0 : …" (elsewhere a key "gpu0" is a row of nvidia-smi topo's matrix)
_FASTAI_GPUS = re.compile(r"gpu(\d{1,2})()")
_NVCC = re.compile(r"release (\d+)\.(\d+), V(\d+(?:\.\d+)+)|Build cuda_(\d+)\.(\d+)")
_ARCH_FLAGS = re.compile(r"NVCC architecture flags:\s*(\S+)")
_ARCH_LIST = re.compile(r"(?:PyTorch CUDA Arch List|Library compiled for CUDA architectures):"
                        r"\s*\[([^\]]*)\]")
# MONAI's GPU rows: "GPU 0 Name: …", "GPU 0 CUDA capability (maj.min): 8.9"
_MONAI_GPU = re.compile(r"^[ \t]*GPU (\d{1,2}) (Name|CUDA capability \(maj\.min\)):[ \t]*"
                        r"([^\n]{1,80}?)[ \t]*$", re.MULTILINE)
# torch's build configuration (torch.__config__.show(), "PyTorch built with:"): "  - CuDNN 7.6.3"
# is cudnnGetVersion(), the cuDNN torch runs, in cuDNN 8's formula ("91.0.2" is 9.10.2: torch
# splits 91002 as MAJOR*1000 + MINOR*100 + PATCH) ("  (built against CUDA 11.1)" may follow; a
# different compile-time one is a separate "    - Built with CuDNN 8.0.5" line, not read)
_CONFIG_CUDNN = re.compile(r"^[ \t`>]*- CuDNN (\d{1,2})\.(\d{1,2})\.(\d{1,3})\b", re.MULTILINE)


# SGLang's keys, to re-cut a report pasted into one line (a Markdown paragraph joins lines)
_SGLANG_KEYS = re.compile(r"[ \t]+(?=(?:Python|CUDA available|GPU [\d,]+(?: Compute Capability)?|"
                          r"CUDA_HOME|NVCC|CUDA Driver Version|PyTorch|sglang|sgl_kernel|"
                          r"flashinfer\w*|triton|transformers|torchao|numpy|aiohttp|fastapi)"
                          r":[ \t])")


def _lines(text: str) -> str:
    """The report with one field a line: SGLang's pasted into a paragraph is split again."""
    if "sglang" not in text.lower():
        return text
    return "\n".join(_SGLANG_KEYS.sub("\n", line) if len(line) > 200 else line
                     for line in text[:50_000].splitlines())


# OpenMMLab's collect_env() dict as Python prints it (mmengine's, which opencompass prints
# whole): pprint's item a line, or print's one line, a long string split into adjacent
# literals: "{'CUDA available': True, 'GPU 0,1': 'NVIDIA A100-SXM4-80GB', 'PyTorch': '2.0.1'}"
# (in Markdown's inline code too: "`{'sys.platform': 'linux', …}`")
_DICT_START = re.compile(r"""^[ \t]*`{0,3}[ \t]*\{[ \t]*'(?:sys\.platform|CUDA available)':""")
_LITERAL = r"""'(?:[^'\\\n]|\\.){0,4000}'"""
_DICT_ITEM = re.compile(rf"""'([A-Za-z][\w .()/,-]{{0,60}})':[ \t]*((?:{_LITERAL}\s{{0,40}})+"""
                        r"""|True|False|None|-?\d[\w.]{0,40})(?=\s*[,}])""")


def undict(lines: list[str]) -> list[str]:
    """OpenMMLab's environment printed as a Python dict, as the "key: value" lines its
    text form prints; the lines around it as they are."""
    start = next((i for i, line in enumerate(lines[:200]) if _DICT_START.match(line)), None)
    if start is None:
        return lines
    end = next((i for i in range(start, min(len(lines), start + 2000))
                if lines[i].rstrip().rstrip("`").endswith("}")), len(lines) - 1)
    out: list[str] = []
    for key, value in _DICT_ITEM.findall("\n".join(lines[start:end + 1])):
        if value.startswith("'"):  # one string's adjacent literals joined, escapes undone
            value = "".join(literal[1:-1] for literal in re.findall(_LITERAL, value))
            value = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), value)
        out += f"{key}: {value}".split("\n")
    return lines[:start] + out + lines[end + 1:] if out else lines


FASTAI = "fastai's show_install"
FACESWAP = "faceswap's system information"
MONAI = "MONAI's print_config"
MINKOWSKI = "MinkowskiEngine's print_diagnostics"
# its sections' headers; under "Pytorch" torch's version alone, under "NVIDIA-SMI" nvidia-smi -q's
# "<key> <value>" pairs
_ME_SECTION = re.compile(r"^={5,}(?P<name>[\w-]{1,30})={5,}[ \t]*$", re.MULTILINE)
_ME_TORCH = re.compile(r"\s{0,4}(\d{1,2}\.\d{1,3}\.\d{1,3}\S{0,40})[ \t]*$", re.MULTILINE)
_ME_VERSION = re.compile(r"^(Driver|CUDA) Version[ \t]+(\d{1,4}\.\d{1,3}(?:\.\d{1,3})?)[ \t]*$",
                         re.MULTILINE)


def _tool(text: str) -> str:
    low = text.lower()
    if "=====pytorch=====" in low or "=====minkowskiengine=====" in low:
        return MINKOWSKI
    if "detectron2" in low:
        return "detectron2's collect_env"
    if "sglang" in low or "cuda driver version" in low:
        return "SGLang's check_env"
    if "nndetection" in low or "pytorch information" in low:
        return "nnDetection's environment report"
    if "xformers" in low and "pytorch.version" in low:
        return "xFormers' info"
    if "deepspeed general environment info" in low:
        return "DeepSpeed's ds_report"
    if "=== software ===" in low:
        return FASTAI
    if "gpu_devices:" in low and "gpu_driver:" in low:
        return FACESWAP
    if "monai version:" in low:
        return MONAI
    if "sys.platform" in low or "pytorch compiling details" in low or re.search(
            r"^(?:mmengine|mmcv):", low, re.MULTILINE):
        return "OpenMMLab's collect_env"
    return "Lightning's collect_env_details"


def _fields(text: str) -> dict[str, str]:
    """Every "key: value" or detectron2 "key   value" line, keys in lower case; the first
    wins (a tool prints each once; a Lightning package list repeats no key of interest)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if len(line) > LONGEST or line.lstrip().startswith("-----"):
            continue
        m = _DOTS.match(line) or _KV.match(line) or _TABLE.match(line)
        if m:
            found.setdefault(m[1].strip().lower(), m[2].strip().strip("`"))
    return found


def _flag(value: str | None) -> bool | None:
    return {"true": True, "yes": True, "available": True, "false": False, "no": False,
            "not available": False, "unavailable": False}.get((value or "").lower())


_NO_GPU = {"none", "n/a", "na", "false", "true", "yes", "no", "not available", "unavailable"}


def _gpus(text: str, fields: dict[str, str], tool: str) -> list[tuple[int, str, str | None]]:
    """(index, name, compute capability or None) of the GPUs the report lists."""
    if tool == MONAI:
        return _monai_gpus(text)
    if tool == FACESWAP:  # "gpu_devices: GPU_0: GeForce RTX 2060, GPU_1: …" (NVML's names)
        listed: list[tuple[int, str, str | None]] = [
            (int(m[1]), str(m[2]).strip(), None)
            for m in re.finditer(r"GPU_(\d{1,2}): ([^,\n]{2,80})", fields.get("gpu_devices", ""))]
        return listed[:64]
    keys = _FASTAI_GPUS if tool == FASTAI else _GPUS
    caps: dict[int, str] = {}
    found: dict[int, tuple[str, str | None]] = {}
    for key, value in fields.items():
        m = keys.fullmatch(key)
        if m is None:
            continue
        indices = [int(i) for i in m[1].split(",") if i.isdigit()][:64]
        if m[2]:
            caps.update(dict.fromkeys(indices, value))
            continue
        arch = re.search(r"\s*\(arch=(\d+\.\d+)\)$", value)
        name = value[:arch.start()] if arch else value
        name = re.sub(r"^\d+ ?Mi?B \| ", "", name)  # fastai 1: "7949MB | GeForce RTX 2080"
        for i in indices:
            found[i] = (name.strip(), arch[1] if arch else None)
    if not found:  # Lightning: the names under "GPU:", one a line
        block = re.search(r"^[ \t*-]*GPU:[ \t]*\n((?:[ \t]+[^\n:]+(?:\n|$))+)", text,
                          re.MULTILINE)
        names = [n.strip(" \t-") for n in block[1].splitlines()] if block else []
        found = {i: (n, None) for i, n in enumerate(n for n in names if n and n != "None")}
    one = fields.get("gpu", "")
    if not found and re.search(r"[A-Za-z]{2}", one) and one.lower() not in _NO_GPU:
        found = {0: (one, None)}  # OpenMMLab's line, its index trimmed: "GPU: Tesla V100-…"
    current_name = fields.get("gpu.name")
    if not found and current_name:  # xformers.info: the current device
        cap = fields.get("gpu.compute_capability", "")
        found = {0: (current_name, cap if re.fullmatch(r"\d{1,2}\.\d", cap) else None)}
    current = re.search(r"PyTorch Current Device Capability:\s*\((\d+),\s*(\d+)\)", text)
    if not found and current:  # nnDetection: the current device's capability, no name
        found = {0: ("(current device; its name is not in the report)", None)}
        caps[0] = f"{current[1]}.{current[2]}"
    return [(i, name, cap or caps.get(i)) for i, (name, cap) in sorted(found.items())]


def _monai_gpus(text: str) -> list[tuple[int, str, str | None]]:
    """(index, name, compute capability or None) of the GPUs MONAI's print_config lists."""
    names: dict[int, str] = {}
    caps: dict[int, str] = {}
    for m in _MONAI_GPU.finditer(text):
        i, key, value = int(m[1]), m[2], m[3]
        if key == "Name":
            names.setdefault(i, value)
        elif re.fullmatch(r"\d{1,2}\.\d", value):
            caps.setdefault(i, value)
    return [(i, names[i], caps.get(i)) for i in sorted(names)][:64]


def _torch_version(fields: dict[str, str]) -> str | None:
    for key in ("pytorch", "pytorch version", "pytorch_version", "torch", "pytorch.version",
                "torch version"):
        value = fields.get(key, "").split(" @")[0].split()
        if value and re.match(r"\d+\.\d+", value[0]):
            return value[0]
    return None


def _torch_cuda(version: str, fields: dict[str, str], text: str, tool: str) -> str | None:
    """torch's CUDA: the tool's line, torch's build configuration, or the version's tag."""
    told = fields.get("pytorch cuda") or fields.get("torch cuda version") or fields.get(
        "torch cuda ver") or fields.get("torch cuda", "").split(" /")[0] or (
        fields.get("version") if "GPU:" in text else None) or (
        fields.get("cuda version") if tool == MONAI else None)
    runtime = re.search(r"CUDA Runtime (\d+\.\d+)", text)
    tag = re.search(r"\+cu(\d+)(\d)$", version)
    for value in (told, runtime[1] if runtime else None,
                  f"{tag[1]}.{tag[2]}" if tag else None):
        if value and re.fullmatch(r"\d+\.\d+(?:\.\d+)*", value):
            return value
    return None


def _arch_list(text: str) -> tuple[str, ...] | None:
    """torch's arch list: its build flags ("-gencode;arch=compute_86,code=sm_86", PTX as
    code=compute_XY), or nnDetection's copy of torch.cuda.get_arch_list()."""
    m = _ARCH_FLAGS.search(text)
    if m and not text[m.end():].strip():
        return None  # the paste ends in the flags: the list may be cut off
    if m:
        codes = re.findall(r"code=\[?((?:sm|compute)_\d+[a-z]?(?:,(?:sm|compute)_\d+[a-z]?)*)",
                           m[1])
        archs = [a for group in codes for a in group.split(",")]
        return tuple(dict.fromkeys(archs)) or None
    m = _ARCH_LIST.search(text)
    if m:
        return tuple(re.findall(r"(?:sm|compute)_\d+[a-z]?", m[1])) or None
    return None


def _cudnn(text: str, fields: dict[str, str], tool: str) -> int | None:
    """The cuDNN torch runs, from its build configuration's "- CuDNN X.Y.Z" line, or the
    integer torch.backends.cudnn.version() returned (fastai's "torch cudnn ver : 7401")."""
    m = _CONFIG_CUDNN.search(text)
    if m:
        # torch writes cudnnGetVersion() with cuDNN 8's formula (MAJOR*1000 + MINOR*100 +
        # PATCH), so cuDNN 9.10.2 (91002) shows as "91.0.2": the integer it printed is read
        return int(m[1]) * 1000 + int(m[2]) * 100 + int(m[3]) if int(m[1]) >= 10 else \
            encode_cudnn_version(int(m[1]), int(m[2]), int(m[3]))
    said = re.match(r"(\d{4,6})\b", fields.get("torch cudnn ver") or fields.get("torch cudnn", "")
                    or (fields.get("cudnn version", "") if tool == MONAI else ""))
    return int(said[1]) if said and int(said[1]) >= 1000 else None


def _available(fields: dict[str, str]) -> bool | None:
    """torch.cuda.is_available() as the tool writes it; None where it does not."""
    # fastai 2 writes "11.0 / is available" (or "is **Not available**")
    folded = fields.get("torch cuda", "").partition("/ is ")[2].strip("* ") or None
    return next((f for k in ("cuda available", "gpu available", "pytorch cuda available",
                             "available", "pytorch.cuda", "torch cuda is", "has cuda")
                 if (f := _flag(fields.get(k))) is not None), _flag(folded))


def _runtime(version: str, fields: dict[str, str], text: str,
             tool: str) -> TorchRuntime | Unavailable:
    available = _available(fields)
    hip = re.search(r"\+rocm(\d+(?:\.\d+)*)$", version)
    return stated_runtime(
        version, _torch_cuda(version, fields, text, tool), available, hip[1] if hip else None,
        why="is not in the report (the tool's report does not state it)",
        source="a tool's text", archs=_arch_list(text), cudnn=_cudnn(text, fields, tool))


def _python(fields: dict[str, str]) -> str | Unavailable:
    for key in ("python", "python version"):
        m = re.match(r"(\d+\.\d+(?:\.\d+)?)\b", fields.get(key, ""))
        if m:
            return m[1]
    return not_reported("the interpreter's Python version is not in the report")


def _toolkit(text: str, fields: dict[str, str], who: str = "the tool's report"
             ) -> ToolkitsFacts | Unavailable:
    """The toolkit the tool ran nvcc from (its "NVCC" line, or nvcc's own output)."""
    said = next((v for k in ("nvcc", "system nvcc", "cuda compiler") if (v := fields.get(k))
                 and _NVCC.search(v)), None)
    m = _NVCC.search(said or text)
    # ds_report's "nvcc version"; faceswap's "gpu_cuda", the CUDA installed globally (nvcc,
    # CUDA_PATH), not the framework's
    bare = re.fullmatch(r"(\d{1,2})\.(\d{1,2})", fields.get("nvcc version", "")
                        or fields.get("gpu_cuda", ""))
    if m is None and bare is None:
        return not_reported("the CUDA toolkit is not in the report")
    if m is None:
        assert bare is not None
        major, minor, full = bare[1], bare[2], None
    else:
        major, minor = (m[1], m[2]) if m[1] else (m[4], m[5])
        full = m[3]
    return ToolkitsFacts(toolkits=(ToolkitFacts(
        root="(location not in the report)", found_by=f"nvcc, as {who} ran it",
        version=f"{major}.{minor}",
        readings=(VersionReading("nvcc", f"nvcc, as {who} ran it", full or f"{major}.{minor}"),),
        nvcc=None, pip_assembled=False, in_use=True),))


def parse_nvcc(text: str) -> Partial | None:
    """`nvcc --version` pasted on its own ("Cuda compilation tools, release 10.1, V10.1.243")."""
    cuda = _toolkit(text[:2000], {}, "the paste")
    return None if isinstance(cuda, Unavailable) else Partial(kind="nvcc --version", rank=3,
                                                              toolkits=cuda)


def _nvml(tool: str, fields: dict[str, str], gpus: list[tuple[int, str, str | None]]
          ) -> NvmlFacts | Unavailable:
    driver = next((v.split()[0] for k in ("driver version", "cuda driver version",
                                          "nvidia driver version", "nvidia driver", "gpu_driver")
                   if (v := fields.get(k))
                   and re.match(r"\d+\.\d+", v)), None)
    if not gpus and driver is None:
        return not_reported(f"the NVIDIA driver and the GPUs are not in {tool}'s report")
    why = f"is not in {tool}'s report"
    nvml = stated_driver(f"{tool}, as it listed the GPUs", why,
                         tuple(named_gpu(i, name, why, compute_capability=cap)
                               for i, name, cap in gpus), driver)
    said = encode_cuda_version(fields.get("nvidia-smi cuda version", ""))  # MinkowskiEngine's
    return replace(nvml, cuda_driver_version=said) if said else nvml


def parse(text: str) -> Partial | None:
    """The facts of one tool's report; None when it states no torch and no GPU."""
    text = _lines(text)
    tool = _tool(text)
    fields = _fields(text)
    if tool == MINKOWSKI:
        fields.update(_minkowski(text))
    gpus = _gpus(text, fields, tool)
    version = _torch_version(fields)
    if version is None and not gpus:
        return None
    runtime = _runtime(version or "", fields, text, tool) if version or _available(fields) else \
        not_reported(f"torch's version is not in {tool}'s report")
    if not version and isinstance(runtime, TorchRuntime):
        # cut off before torch's line, but "CUDA available: True" is torch's own answer: a
        # CUDA build of a version the report does not show
        runtime = replace(runtime, version=not_reported(
            f"torch's version is not in {tool}'s report"))
    torch = TorchFacts(
        python=not_reported("the interpreter's path is not in the report"),
        static=not_reported("torch's package metadata is not in the report"),
        runtime=runtime,
        seconds=not_reported(f"no probe ran: the facts are {tool}'s"),
        python_version=_python(fields),
        stated_version=release_left_open(runtime, version),
    )
    return Partial(kind=tool, rank=2, nvml=_nvml(tool, fields, gpus), torch=torch,
                   toolkits=_toolkit(text, fields), host=_host(tool, fields))


def _minkowski(text: str) -> dict[str, str]:
    """MinkowskiEngine's sections as the fields the other tools name: torch's version (the
    Pytorch section's first line), its availability, and nvidia-smi's driver and CUDA."""
    sections: dict[str, str] = {}
    heads = list(_ME_SECTION.finditer(text))
    for head, after in zip(heads, [*heads[1:], None], strict=True):
        end = after.start() if after else len(text)
        sections.setdefault(head["name"].lower(), text[head.end():end])
    out: dict[str, str] = {}
    torch = _ME_TORCH.match(sections.get("pytorch", ""))
    if torch:
        out["pytorch"] = torch[1]
    said = re.search(r"^torch\.cuda\.is_available\(\): (True|False)[ \t]*$",
                     sections.get("pytorch", ""), re.MULTILINE)
    if said:
        out["cuda available"] = said[1]
    for m in _ME_VERSION.finditer(sections.get("nvidia-smi", "")):
        out.setdefault("driver version" if m[1] == "Driver" else "nvidia-smi cuda version", m[2])
    return out


def _host(tool: str, fields: dict[str, str]) -> HostFacts | None:
    """ds_report's "shared memory (/dev/shm) size .... 125.77 GB": /dev/shm, and no other
    host fact; None for a tool that prints none."""
    m = re.fullmatch(r"(\d{1,7}(?:\.\d{1,3})?) ?([KMGT])i?B",
                     fields.get("shared memory (/dev/shm) size", ""))
    if m is None:
        return None

    def absent(what: str) -> Unavailable:
        return not_reported(f"{what}: not in {tool}'s report (it shows /dev/shm only)")

    size = int(float(m[1]) * 1024 ** "KMGT".index(m[2]) * 1024)  # DeepSpeed's units are 1024s
    return replace(unreported_host(absent), shm_bytes=size)
