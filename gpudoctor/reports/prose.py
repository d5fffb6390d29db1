"""What an issue body states in words, where it pastes no tool's output: "My GPU is GeForce GT
740M … installed pytorch by `pip install torch==1.3.1+cu92`", "torch.cuda.is_available()
returns False", an app's own dump ("torch_version: 1.13.1+cpu").

Read only where nothing else in the text is recognised (`read.read_reports`), and only what
the words state:

- torch's version, where the text names one ("torch==1.3.1+cu92", "PyTorch 1.10.1", "pytorch
  (1.3.1)", "torch_version: 1.13.1+cpu"); a text naming two (an upgrade told as a story) states
  none (one written in part, "PyTorch 1.13" beside "torch==1.13.1+cu117", is the same
  release), also run together ("pytorch1.4"), or a version with torch's tag alone on its line
  or quoted ("- 2.8.0+cu128", "2.0.0+cpu Autocast half"). Its local tag says the build ("+cpu",
  "+cu92"), else a conda line installing it from PyTorch's channel ("pytorch==1.7.0
  cudatoolkit=10.1 -c pytorch"); without either, whether it is a CUDA build is left open,
  unless torch raised a CUDA error from a kernel (it reached a GPU, so it is one);
- `torch.cuda.is_available()`'s value, told in words ("returns False", "is True"), once;
  torch's own call said True is a report alone: a CUDA build, version unknown, whose CUDA
  initialised;
- the GPUs: each product of NVIDIA's CUDA GPUs pages the text names (matched by the rules of
  `gpudoctor.compat.gpu_names`, so "K40c", "GTX 1080 Ti", "RTX 5090 D" are placed and "M.2" or
  "2019" are not), and torch's printed device properties (`_CudaDeviceProperties(name='GeForce
  GT 740', major=3, minor=0, …)`) with their compute capability;
- the driver's version where the text names it ("driver 535.54.03", "Driver Version: 410.78"),
  with or without a GPU: torch's CUDA is judged against it (GD103);
- nvidia-smi's "CUDA Version" field quoted with the tool named just before it ("nvidia-smi：
  CUDA Version: 12.4", "nvidia-smi version" above a fence holding "CUDA Version: 11.3"): the
  highest CUDA the driver runs (`smi_cuda`), read beside tools' output too (GD103, GD104). A
  "CUDA Version" the words do not tie to nvidia-smi is anyone's (a script's print of
  torch's) and is not read.

Naming a GPU is no sign that a driver runs it: the GPUs are stated under the binding `PROSE`,
whose driver's state stays unknown (GD101 skips, GD102 does not judge; `views.driver_present`
is False). A text must state torch's version with one other fact (or a GPU and a driver's
version) to be read at all — a version with its local tag ("2.3.0+rocm6.0", "2.9.1+cpu")
states the build besides the release and is read alone: a GPU's name alone is no report.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.compat import Tables
from gpudoctor.model import GpuFacts, TorchFacts
from gpudoctor.reports.interface import (
    KERNEL_ERROR,
    TORCH_SAYS_AVAILABLE,
    TORCH_TAGGED,
    Partial,
    conda_pinned_cuda,
    named_gpu,
    not_reported,
    release_left_open,
    stated_driver,
    stated_runtime,
    stated_torch,
    tag_cuda,
)
from gpudoctor.reports.torch_prints import PROPERTIES
from gpudoctor.versions import encode_cuda_version
from gpudoctor.views import PROSE

LIMIT = 100_000  # a longer text is read in its first part only
_WHY = "is not in the report (the reporter's words state only some facts)"
_WORDS = "the reporter's words"
MAX_GPUS = 16  # a text naming more products than this is a list of products, not a machine
# the local tag as pip prints it, with its "+" left out ("1.8.2cu111") or spaced ("2.8.0 +
# cu129"): `_version` writes it as pip does
_VERSION = (r"\d\.\d{1,2}(?:\.\d{1,2})?(?:\.dev\d{8})?"
            r"(?:(?:[ \t]\+[ \t]|\+?)(?:cpu|cu\d{2,3})(?![\w.])|\+rocm[\d.]{1,8})?")
# torch's version as people write it: pip's requirement, "PyTorch 1.10.1", "pytorch (1.3.1)",
# "torch version: 2.1.0", "torch_version: 1.13.1+cpu", "torch v2.0.1", "torch shows 2.8.0+cpu",
# a JSON dump's '"torch" : "2.6.0+cu124"'
TORCH = re.compile(
    rf"(?<![\w.-])(?:py)?torch(?:==|['\"]?[ \t]*(?:_version|\.__version__|[ \t]version)?[ \t]*"
    rf"(?:[:=][ \t]*|(?:is|shows|says|prints|reports)[ \t]+|\(|[ \t]v?)|(?=\d\.\d))"
    rf"[ \t]{{0,4}}['\"]?(?P<v>{_VERSION})(?![\w.])", re.I)
# a version with PyTorch's CUDA or CPU tag, alone on its line or quoted ("- 2.8.0+cu128", a web
# UI's "2.0.0+cpu Autocast half"): no other package tags its versions so (torchaudio's and
# torchvision's say their own release); read where it is a release of torch in the tables
TAGGED = re.compile(r"(?:^[ \t]{0,8}(?:[-*+][ \t]{1,4})?|[\"'`][ \t]{0,2})"
                    rf"(?P<v>{TORCH_TAGGED})(?![\w.])", re.M)
# torch's version in a file's name: a wheel's, a dist-info's or a build folder's
# ("torch-2.5.0+cu124", "/tmp/build-via-sdist-…/torch-2.2.1+cu121/aten/…"); read where no other
# form names one (a list of what was tried, "Installing torch-2.5.1+cu121", is weaker than
# "torch shows 2.8.0+cpu")
FILE_NAME = re.compile(rf"(?<![\w.-])torch-(?P<v>{_VERSION})(?![\w+]|\.\d)")
# a line of conda's that takes torch from PyTorch's channel ("-c pytorch"), with its CUDA
# pinned beside it ("pytorch==1.7.0 cudatoolkit=10.1", "pytorch-cuda=12.1")
CONDA_CHANNEL = re.compile(r"(?m:^[^\n]{0,300}(?:-c|--channel)[ \t]{1,4}pytorch(?:[ \t][^\n]*)?$)")
# torch's own call named with the value (not CuPy's or another library's is_available())
TORCH_AVAILABLE = re.compile(r"\btorch\.cuda\.is_available\(\)[`'\"]?[ \t]{0,4}(?:=+|:|->|→|"
                             r"(?:returns?|returned|is|gives|prints)[ \t]{1,4})[ \t]{0,4}"
                             r"[`'\"]?True\b")
AVAILABLE = re.compile(
    r"is_available\(\)[`'\"]?[ \t]{0,4}(?:(?:still[ \t]+)?(?:returns?|returned|returning|is|"
    r"was|gives?|gave|prints?|printed|outputs?|shows?|says|=+|:|->|→)[ \t]{0,4})?[`'\"]?"
    r"(?P<v>True|False|true|false|TRUE|FALSE)\b")
# "NVIDIA-SMI 555.42.02", nvidia-smi's header quoted alone: its tools ship with the driver
DRIVER = re.compile(r"(?:\bdriver(?:[ \t]+version)?|\bNVIDIA-SMI)[ \t]*[:=]?[ \t]*(?:is[ \t]+)?v?"
                    r"(?P<v>[2-9]\d\d\.\d{1,3}(?:\.\d{1,3})?)(?![\w]|\.\w)", re.I)
# nvidia-smi named, then its "CUDA Version" field within a short stretch: the rest of the line
# (a colon, "shows", "version") and at most two lines holding only a fence or a word; what
# lies between may not name another program's CUDA (`_OTHER_CUDA`)
SMI_CUDA = re.compile(r"(?i:nvidia-smi)(?P<between>[^\n]{0,40}?(?:\n[ \t>]{0,8}(?:```|~~~)?"
                      r"[\w-]{0,12}[ \t]{0,4}){0,2}?)(?<![\w.])[*`-]{0,2}[ \t]{0,2}"
                      r"CUDA[ \t]Version[ \t]{0,4}[:：=]?[ \t]{0,4}"
                      r"(?P<v>\d{1,2}\.\d{1,2})(?![\d.])")
_OTHER_CUDA = re.compile(r"(?i:torch|nvcc|toolkit|runtime|conda|pip|\bcompil)")
# a candidate GPU name: a brand or line word before a model, or a data-centre or workstation
# model ("K40c", "A100", "A6000", "K5000", "GB10") alone; the catalogue decides which are
# products
GPU = re.compile(
    r"(?<![\w.-])(?:NVIDIA[ \t]+)?(?:(?:GeForce|Tesla|Quadro|TITAN|Titan|Jetson)[ \t]+)?"
    r"(?:(?:(?i:RTX|GTX|GT|MX)|TITAN|Titan)[ \t]?[A-Z]?\d{2,4}[A-Za-z]{0,2}"
    r"|NVS[ \t]\d{3,4}[A-Za-z]?|TITAN[ \t](?:V|Xp?|RTX|Z|Black)(?![\w.-])"
    r"|(?<=Tesla )[A-Z]\d{1,3}[a-zA-Z]{0,2}|[AHLBVPKM]\d{2,4}[a-zA-Z]{0,2}|G[BH]\d{2,3}"
    # the datacenter boards as people type them on a cluster ("v100/h100 GPUs", "3090/a100"):
    # lower case with three digits only, which the catalogue must then place
    r"|[ahvbp]\d{3}"
    # a Jetson module by its family word ("Jetson AGX Thor", "Jetson Orin Nano", "Jetson TX2")
    r"|(?<=Jetson[ \t])(?:AGX[ \t])?(?:Thor|Orin|Xavier|Nano|TX[12])(?:[ \t](?:NX|Nano))?)"
    # its end: no word, hyphen or decimal part follows; a sentence's full stop may ("… and
    # RTX 5080.")
    r"(?:[ \t]+(?:(?i:Ti|SUPER)|D|Ada|Laptop[ \t]GPU|Max-Q))*(?![\w-]|\.\w)")

# a bare model number where the words say it is the GPU ("my gpu is 4070ti", "GPU: 1080 Ti"):
# alone a number is no name ("2019", "1080p"), after those words the catalogue places it
BARE = re.compile(r"(?i:\b(?:gpu|graphics card|video card)(?:\b|(?=\d))[ \t]{0,3}(?:is|:|=|-)?"
                  r"[ \t]{0,3}"
                  r"(?:an?[ \t]+|my[ \t]+)?)(?P<m>\d{3,4}(?:[ \t]?(?i:ti|super))?)(?!\w|\.\w)")
# a four-digit model after the brand alone ("NVIDIA: 5090", "nvidia 4090 Ti"): three digits
# after it may be a driver branch ("NVIDIA 590", "nvidia 610": R590, R610), four never are
BRAND_BARE = re.compile(r"(?i:\bnvidia)[ \t]{0,3}[:=-]?[ \t]{0,3}"
                        r"(?P<m>\d{4}(?:[ \t]?(?i:ti|super))?)(?!\w|\.\w)")
# a four-digit model with GeForce's "Ti" or "SUPER" ("I have 4060ti.", "a 2070 Super"): no year,
# resolution or count is written so; the catalogue places it
SUFFIXED = re.compile(r"(?<![\w.-])(?P<m>\d{4}[ \t]?(?i:ti|super))(?!\w|\.\w)")


def parse(text: str, tables: Tables) -> Partial | None:
    """The facts `text` states in words; None where it states too few to be a report."""
    text = _plain(text)
    version, available = _torch_said(text)
    launched = KERNEL_ERROR.search(text) is not None
    gpus = _gpus(text, tables)
    drivers = {m["v"] for m in DRIVER.finditer(text)}
    driver = drivers.pop() if len(drivers) == 1 else None
    cuda = smi_cuda(text)
    others = bool(gpus) + (available is not None) + launched + (driver is not None or
                                                                   cuda is not None)
    # a version with its local tag ("2.3.0+rocm6.0", "2.9.1+cpu") states the build as well as
    # the release: two facts
    # torch's own availability said True ("torch.cuda.is_available() = True"): a CUDA build
    # whose CUDA initialised on a working driver, whatever its version; a fact on its own
    works = available is True and TORCH_AVAILABLE.search(text) is not None
    if not ((version and (others or "+" in version)) or (gpus and (driver or cuda)) or works):
        return None
    if available is None and launched:  # torch reached a GPU: CUDA was available
        available = True
    torch = _torch(version, available, text) if version is not None else (
        _unversioned(None, True, f"torch's version {_WHY}") if works else None)
    # a driver named without a GPU is stated too (torch's CUDA is judged against it); the
    # GPUs stay unlisted, as ever under PROSE
    nvml = stated_driver(PROSE, _WHY, tuple(gpus), driver) if gpus or driver or cuda else None
    if nvml is not None and cuda is not None:
        nvml = replace(nvml, cuda_driver_version=cuda)
    return Partial(kind="the reporter's words", rank=0, nvml=nvml, torch=torch)


def smi_cuda(text: str) -> int | None:
    """The highest CUDA the driver runs, as nvidia-smi's "CUDA Version" field the words quote
    after naming the tool (encoded, 12040); None where they quote none, or two."""
    said = {m["v"] for m in SMI_CUDA.finditer(_plain(text))
            if not _OTHER_CUDA.search(m["between"])}
    return encode_cuda_version(said.pop()) if len(said) == 1 else None


def driver_cuda_said(text: str) -> Partial | None:
    """`smi_cuda` as a report of its own (beside tools' output that states no driver):
    the driver's CUDA, its version and GPUs left to the other blocks."""
    cuda = smi_cuda(text)
    return None if cuda is None else Partial(
        kind="the reporter's words", rank=0,
        nvml=replace(stated_driver(PROSE, _WHY, ()), cuda_driver_version=cuda))


def torch_named(text: str) -> Partial | None:
    """torch as the words name it beside tools' output that states none ("My environment is
    `pytorch==1.7.1+cu110`" under an nvidia-smi table): its one version (a text naming two
    states none) and, where the words say it, whether CUDA is available; without a version,
    the CUDA build a conda line takes from PyTorch's channel (`_conda_cuda`); None
    otherwise."""
    version, available = _torch_said(_plain(text))
    if version is None:
        cuda = _conda_cuda(_plain(text), None)
        return None if cuda is None else Partial(
            kind="the reporter's words", rank=0, torch=_unversioned(
                cuda, available, "torch's version is not in the report (a conda line installs "
                f"PyTorch's build for CUDA {cuda} without pinning a version)"))
    return Partial(kind="the reporter's words", rank=0,
                   torch=_torch(version, available, _plain(text)))


def _unversioned(cuda: str | None, available: bool | None, why_unversioned: str
                 ) -> TorchFacts:
    """torch as a CUDA build of a version the words do not state (`why_unversioned` says why:
    a conda line that pins none, or only that torch's CUDA is available)."""
    return stated_torch(stated_runtime(not_reported(why_unversioned), cuda, available, None,
                                       why=_WHY, source=_WORDS, archs=None), _WORDS)


def _plain(text: str) -> str:
    """The part of `text` read, a full-width colon (a Chinese input method's "torch
    version：1.8.2") made a colon."""
    return text[:LIMIT].replace("\uff1a", ": ")


def _torch_said(text: str) -> tuple[str | None, bool | None]:
    """torch's version the words name (None where they name none, or two: an upgrade told as a
    story) and whether they say CUDA is available (None where they do not, or say both)."""
    versions = {_version(m["v"]) for m in TORCH.finditer(text) if not _required(text, m)}
    if not versions:  # no version named as torch's: one with torch's tag, alone or quoted
        versions = {m["v"] for m in TAGGED.finditer(text)}
    if not versions:  # nor so: one in a file's name
        versions = {_version(m["v"]) for m in FILE_NAME.finditer(text)}
    said = {m["v"].lower() for m in AVAILABLE.finditer(text)} | {
        (m["v"] or m["w"]).lower() for m in TORCH_SAYS_AVAILABLE.finditer(text)}
    return (_most_precise(versions), None if len(said) != 1 else said.pop() == "true")


# what a package asks for, not what is installed: "strict dependency on torch==2.5.1",
# "requires torch==2.1.0", "pinned to torch==1.13.1"
_REQUIRED = re.compile(r"(?i:\b(?:depend|requir|pin|constrain)\w{0,8}\b[^\n]{0,40})$")


def _required(text: str, m: re.Match[str]) -> bool:
    """Whether `m` is a pip requirement (`torch==X`) the words say a package asks for."""
    return "==" in m[0] and _REQUIRED.search(text, max(0, m.start() - 60), m.start()) is not None


def _conda_cuda(text: str, version: str | None) -> str | None:
    """The CUDA a conda line installing this very torch from PyTorch's channel pins
    ("pytorch==1.7.0 cudatoolkit=10.1 torchvision -c pytorch"; with `version` None, a line that
    pins no torch version); None where no line, or lines that differ, say it."""
    said = {cuda for line in CONDA_CHANNEL.findall(text)
            if (cuda := conda_pinned_cuda(line, version)) is not None}
    return said.pop() if len(said) == 1 else None


def _most_precise(versions: set[str]) -> str | None:
    """The one version `versions` name: one, or one that each other one is a prefix of
    ("PyTorch 1.13" beside "torch==1.13.1+cu117": the same release, written in full); None
    for two releases."""
    def parts(v: str) -> list[str]:
        base, _, tag = v.partition("+")
        return base.split(".") + ([f"+{tag}"] if tag else [])

    full = [v for v in versions if all(parts(o) == parts(v)[:len(parts(o))] for o in versions)]
    return full[0] if len(full) == 1 else None


def _torch(version: str, available: bool | None, text: str = "") -> TorchFacts:
    tag = version.partition("+")[2]
    cuda = tag_cuda(version) or (None if tag else _conda_cuda(text, version))
    runtime = stated_runtime(version, cuda, available,
                             tag if tag.startswith("rocm") else None, why=_WHY,
                             source="the reporter's words", archs=None)
    return stated_torch(runtime, _WORDS, stated_version=release_left_open(runtime, version))


def _version(written: str) -> str:
    """torch's version as pip names it: the local tag's "+" put back where the words left it
    out ("1.8.2cu111" → "1.8.2+cu111")."""
    written = re.sub(r"[ \t]\+[ \t]", "+", written, count=1)  # "2.8.0 + cu129"
    return re.sub(r"(?<=\d)(?=(?:cpu|cu\d))", "+", written, count=1)


def named_gpus(text: str, tables: Tables) -> Partial | None:
    """The GPUs the words name, alone: for a text whose tools' output (torch's messages, a
    version print) states no GPU and no driver. Bound as `views.PROSE`, like `parse`'s."""
    gpus = _gpus(text[:LIMIT], tables)
    return Partial(kind="the reporter's words", rank=0,
                   nvml=stated_driver(PROSE, _WHY, tuple(gpus), None)) if gpus else None


# an issue template's example, which names a product the reporter need not have: the candidate
# stands inside a parenthesis opened by "e.g." / "for example" / "such as" and not closed
# before it ("- GPU models and configuration (e.g. V100):", "(eg: GTX 1080, A100)")
_EXAMPLE = re.compile(r"\((?i:e\.?g\.?|ex\.|for[ \t]example|such[ \t]as)\b[^()\n]{0,50}\Z")


def _gpus(text: str, tables: Tables) -> list[GpuFacts]:
    """The products the text names, once each, in the order named; torch's printed device
    properties with their compute capability."""
    why = "is not in the report (the reporter names the GPU in words)"
    # product (as NVIDIA's page names it, else as printed) -> (name as given, its capability):
    # one product named twice ("GTX 1060", "GeForce GTX 1060") is one GPU
    placed: dict[str, tuple[str, str | None]] = {}
    named: set[str] = set()  # every name given, each spelling once
    for m in PROPERTIES.finditer(text):
        name = m["name"].strip()
        if name not in named:
            named.add(name)
            found = tables.match_gpu(name)
            placed.setdefault(found.name if found else name, (name, f"{m['ma']}.{m['mi']}"))
    tried: set[str] = set()
    candidates = sorted([(m.start(), m[0]) for m in GPU.finditer(text)]
                        + [(m.start("m"), m["m"]) for m in BARE.finditer(text)]
                        + [(m.start("m"), m["m"]) for m in BRAND_BARE.finditer(text)]
                        + [(m.start("m"), m["m"]) for m in SUFFIXED.finditer(text)])
    for at, written in candidates:
        if _EXAMPLE.search(text, max(0, at - 60), at):
            continue  # a template's example ("GPU models and configuration (e.g. V100):")
        given = re.sub(r"[ \t]+", " ", written.strip())
        if given in tried or given in named:
            continue
        tried.add(given)
        found = tables.match_gpu(given)
        if found is not None:
            named.add(given)
            placed.setdefault(found.name, (given, None))
        if len(named) > MAX_GPUS:
            return []
    return [named_gpu(i, name, why, compute_capability=cc)
            for i, (name, cc) in enumerate(placed.values())]
