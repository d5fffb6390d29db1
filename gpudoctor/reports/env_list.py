"""Environment facts pasted as a Markdown list: "- key: value", "- **key:** value".

The lists this reads, each a run of consecutive bullet (or bold-key) lines:

- PyTorch's issue template: "- PyTorch version:1.7.1", "- How you installed PyTorch: conda
  install pytorch==1.7.1 … cudatoolkit=11.0 -c pytorch", "- CUDA/cuDNN version: cuda11.0.3",
  "- GPU models and configuration: 8*A100", "- Nvidia Driver:450.51.06";
- Hugging Face's `transformers-cli env`, `diffusers-cli env`, `accelerate env`: "- PyTorch
  version (GPU?): 1.12.1+cu116 (False)" (the parenthesis is `torch.cuda.is_available()`), and
  `llamafactory-cli env`'s "- PyTorch version: 2.3.0+cu121 (GPU)" (the mark where it is True),
  "- Platform: Linux-4.4.0-19041-Microsoft-x86_64-with-glibc2.31";
- stable-baselines3's `get_system_info()`: "- PyTorch: 2.1.0+cu121", "- GPU Enabled: True";
- an app's or a person's list: "- **PyTorch:** 2.9.1+cu130", "- **GPU:** NVIDIA GeForce GTX
  1080 Ti", "- **CUDA Version**: 12.8 (Driver 570.181)";
- the same facts as a two-column Markdown table, one a row: "| **GPU** | NVIDIA L20 (14 GB
  VRAM) |", "| **Driver** | 535.161.07 |", "| **PyTorch** | 2.8.0+cu128 |";
- a block of plain "Key: value" lines, no bullets, where two of its keys are the lists' own
  ("OS Version: Ubuntu 21.04", "Nvidia Driver: 495", "Graphics: GTX 1660 Ti", "Pytorch:
  PyTorch version 1.10.1+cu102"); a tool's padded fields ("Driver Version          : …") are
  the tool's readers', not such a block;
- a GitHub issue form's fields, each a heading and its one-line answer ("### GPU Name", blank,
  "RTX5070"), read as such a block.

Read, each only from a key that names it and a value of an exact form: torch's version (its
"+cuXYZ" / "+cpu" / "+rocmX" tag gives its build), torch's CUDA where the key says it is torch's
("CUDA used to build PyTorch") or the conda line that installed that very version names its
cudatoolkit, whether CUDA is available, the NVIDIA driver's version (also under a key naming it
among other things, "GPU Driver and CUDA versions: 595.71", where the value has the driver's
three-digit form), the GPUs ("8*A100", "2x RTX 3090", "NVIDIA GeForce GTX 1080 Ti"; several
in one value only where each is a GPU), Python's version, and the OS (kept as the report's
words: WSL 1 from a "-Microsoft" kernel, Windows). A bare "CUDA: 12.1" may be torch's, the
toolkit's or the driver's: it is not read. GPU names count as the driver's only beside a driver
version or a torch that finds CUDA (so does torch's "CUDA error: no kernel image is available"
in the paste: a kernel was launched); a name alone does not show a working driver: it is bound
as the reporter's words, `views.PROSE`, which GD404 judges and GD101 does not. A key or a
value of another form is left unread; two differing values of one fact leave it unread.
"""

from __future__ import annotations

import re
from typing import TypeVar

from gpudoctor.model import NvmlFacts, TorchRuntime, Unavailable
from gpudoctor.reports import torch_messages
from gpudoctor.reports.interface import (
    KERNEL_ERROR,
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
    torch_says_available,
)
from gpudoctor.views import PROSE

LONGEST = 300  # a longer line is no list item read here
LIMIT = 200_000  # a longer paste is read in its first part only
_QUOTE = re.compile(r"^(?:[ \t]{0,3}>[ \t]?){1,8}")
# "- key: value", "* **key:** value", "- **key**: value", "**key**: value", "- `key`: value"
# (and torch's version named in a bullet without a colon: `_NAMED`)
_ITEM = re.compile(r"[ \t]{0,8}(?P<bullet>[-*+•][ \t]{1,4})?(?P<bold>\*\*|__)?`?"
                   r"(?P<key>[A-Za-z][^:*`_\n]{0,60}?)`?(?:\*\*|__)?[ \t]{0,4}[:：]"
                   r"(?:\*\*|__)?[ \t]{0,8}(?P<value>[^\n]{0,240}?)[ \t*_`]{0,8}")
# the keys of Hugging Face's env commands end in these hints ("PyTorch version (GPU?)"): read
# even where the paste lost the list's bullets (a stored copy rendered from Markdown)
_HF_HINTS = ("(gpu?)", "(accelerator?)")
_HINT = re.compile(r"[ \t]{0,4}\([^()]{0,40}\)$")  # "(e.g., 1.0)", "(GPU?)", "(`conda`, `pip`)"
_VERSION = r"\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:(?:a|b|rc)\d{1,3})?(?:\.dev\d{1,10}|\.post\d{1,3})?"
_TORCH = re.compile(rf"({_VERSION})(\+[a-z0-9.]{{1,40}})?")
# the value repeating its key's words ("Pytorch: PyTorch version 1.10.1+cu102")
_TORCH_WORDS = re.compile(r"^(?:py)?torch(?:[ \t]{1,4}version)?[ \t]{1,4}v?(?=\d)", re.I)
# torch's tagged version under a key that names no package ("Framework & Version: 2.6.0+cu124")
_TAGGED = re.compile(TORCH_TAGGED)
_GPU_FLAG = re.compile(rf"({_VERSION}(?:\+[a-z0-9.]{{1,40}})?)[ \t]{{1,4}}\((True|False|CUDA)\)")
# `llamafactory-cli env`: "- PyTorch version: 2.3.0+cu121 (GPU)", the mark added where
# torch.cuda.is_available() (an NPU or none gets another mark, or none)
_GPU_MARK = re.compile(rf"({_VERSION}(?:\+[a-z0-9.]{{1,40}})?)[ \t]{{1,4}}\(GPU\)")
# the driver's version, with a word on it in parentheses where given ("595.71.05 (open kernel
# module)")
_DRIVER = re.compile(r"(\d{3}\.\d{1,3}(?:\.\d{1,3})?)(?:[ \t]{1,4}\([^()\d]{1,40}\))?")
_CUDA_DRIVER = re.compile(r"\d{1,2}\.\d{1,2}[ \t]{0,2}\([ \t]{0,2}(?:NVIDIA[ \t])?Driver"
                          r"(?:[ \t]Version)?:?[ \t]{0,2}(\d{3}\.\d{1,3}(?:\.\d{1,3})?)"
                          r"[ \t]{0,2}\)", re.IGNORECASE)
_CUDA = re.compile(r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?")
_PYTHON = re.compile(r"(3\.\d{1,2}(?:\.\d{1,3})?)")
_COUNT = re.compile(r"(\d{1,2})[ \t]{0,2}[x×*][ \t]{0,2}(.{1,80})|(.{1,80}?)[ \t]{0,2}[x×*]"
                    r"[ \t]{0,2}(\d{1,2})|GPU[ \t]\d{1,2}:[ \t]{1,4}(.{1,80})")
# what a GPU value says after the name: its memory ("(14 GB VRAM)", ", 16GB VRAM"), its
# vendor in brackets (a system tool's "NVIDIA GeForce RTX 3060 [NVIDIA]")
_MEMORY = re.compile(r"[ \t]{0,4}\(\d{1,3}[ \t]?GB[A-Za-z0-9 ]{0,20}\)$"
                     r"|[ \t]{0,2}[,;][ \t]{0,4}\d{1,3}[ \t]?GB(?:[ \t]{1,4}(?:VRAM|memory))?$"
                     r"|[ \t]{1,4}\[NVIDIA\]$")
_SEVERAL = re.compile(r"[ \t]{1,4}(?:and|&|\+)[ \t]{1,4}|[ \t]{0,4}[,;][ \t]{0,4}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .-]{1,59}")
# a GPU value that names the driver too ("GeForce RTX 2070, driver 450.102.04")
_GPU_DRIVER = re.compile(r"(?P<gpu>[^,;]{1,80}?)[ \t]{0,2}[,;]?[ \t]{1,4}(?:with[ \t]{1,4})?"
                         r"(?:NVIDIA[ \t]{1,4})?driver(?:[ \t]{1,4}version)?[ \t]{0,2}[:=]?"
                         r"[ \t]{0,2}v?(?P<v>\d{3}\.\d{1,3}(?:\.\d{1,3})?)", re.I)
_BRANDED = re.compile(r"(?:NVIDIA|GeForce|Quadro|Tesla|TITAN|Titan|RTX|GTX) ")
# a board named by its model alone ("A100", "H100 80GB"), or under a GPU key a GeForce number
# alone ("NVIDIA GPU: 3090", "GPU: 4070 Ti"): the catalogue decides which are products
_BARE = re.compile(r"(?:[AHLBTVPK]|GB|GH)\d{1,4}[A-Za-z]{0,3}(?:[ -][A-Za-z0-9]{1,12}){0,3}"
                   r"|\d{4}(?:[ ]?(?i:ti|super))?")
_CONDA = re.compile(r"(?:conda|mamba|micromamba) install\b")

TORCH_KEYS = ("pytorch", "pytorch version", "torch", "torch version")
TORCH_CUDA_KEYS = ("cuda used to build pytorch", "pytorch cuda", "pytorch cuda version",
                   "torch cuda", "torch cuda version", "torch.version.cuda")
# stable-baselines3's `get_system_info()` writes torch.cuda.is_available() as "GPU Enabled"
AVAILABLE_KEYS = ("is cuda available", "cuda available", "torch.cuda.is_available()",
                  "cuda is available", "gpu enabled")
DRIVER_KEYS = ("nvidia driver version", "nvidia driver", "driver version", "driver",
               "gpu driver", "gpu driver version", "nvidia-driver")
GPU_KEYS = ("gpu", "gpus", "gpu model", "gpu models", "gpu models and configuration",
            "gpu type", "gpu name", "graphics card", "graphics", "nvidia gpu")
CUDA_KEYS = ("cuda", "cuda version")  # ambiguous: read only for "12.8 (Driver 570.181)"
OS_KEYS = ("os", "platform", "operating system", "os version")
PYTHON_KEYS = ("python", "python version")
INSTALL_KEYS = ("how you installed pytorch",)
X = TypeVar("X")
# the keys a bare line may continue a list with (`_items`' `listing`)
_KNOWN_KEYS = frozenset((*TORCH_KEYS, *TORCH_CUDA_KEYS, *AVAILABLE_KEYS, *DRIVER_KEYS,
                         *GPU_KEYS, *CUDA_KEYS, *OS_KEYS, *PYTHON_KEYS, *INSTALL_KEYS))


# a bullet that names torch's version with no colon ("- PyTorch 2.3.0+cu121", "* torch 2.1.0")
_NAMED = re.compile(rf"[ \t]{{0,8}}[-*+•][ \t]{{1,4}}(?:\*\*|__)?`?(?P<key>PyTorch|torch)`?"
                    rf"(?:\*\*|__)?[ \t]{{1,4}}v?(?P<value>{_VERSION}(?:\+[a-z0-9.]{{1,40}})?)"
                    rf"[ \t]*")


# a Markdown table of two columns, one fact a row: "| **Driver** | 535.161.07 |" (its header
# row is read as one more item, its "|---|---|" line is skipped)
_ROW = re.compile(r"[ \t]{0,8}\|[ \t]{0,8}(?:\*\*|__)?`?(?P<key>[A-Za-z][^|:*`_\n]{0,60}?)`?"
                  r"(?:\*\*|__)?[ \t]{0,8}\|[ \t]{0,8}(?P<value>[^|\n]{0,240}?)[ \t]{0,8}\|?[ \t]*")
_RULE = re.compile(r"[ \t]{0,8}\|?(?:[ \t]{0,8}:?-{3,}:?[ \t]{0,8}\|){1,2}(?:[ \t]{0,8}:?-{3,}:?)?"
                   r"[ \t]*")


# a key whose hint is the command that prints the value, THUDM's issue template (ChatGLM, GLM,
# CogVLM): "- CUDA Support (`python -c "import torch; print(torch.cuda.is_available())"`) :True"
_PRINTED = re.compile(r"[ \t]{0,8}[-*+•][ \t]{1,4}(?P<key>[A-Za-z][A-Za-z ]{0,40}?)[ \t]{0,4}"
                      r"\(`python3? -c \"import torch; ?print\(torch\.cuda\.is_available\(\)\)"
                      r"\"`\)[ \t]{0,4}[:：][ \t]{0,4}(?P<value>True|False)[ \t]*")


def _items(line: str, listing: bool = False) -> tuple[str, str, str] | None:
    """(key with its hint, key without it, value) of a list item or a two-column table row;
    None for another line. With `listing` (a list of bold or bulleted items is being read), a
    bare "Key (hint): value" line whose key is one the lists use continues it (NVIDIA's
    TensorRT template: its first rows bold, "PyTorch Version (if applicable): 1.13.1" plain),
    and so does a template's field with its hint, left empty ("Tensorflow Version (if
    applicable):"), not a heading ("fails on:")."""
    if len(line) <= LONGEST and (printed := _PRINTED.fullmatch(line)) is not None:
        return printed["key"].lower(), "torch.cuda.is_available()", printed["value"]
    row = _ROW.fullmatch(line) if len(line) <= LONGEST else None
    if row is not None:
        key = " ".join(row["key"].split()).lower()
        return key, _HINT.sub("", key), row["value"].strip().strip("`*").strip()
    m = _ITEM.fullmatch(line) if len(line) <= LONGEST else None
    if m is None and len(line) <= LONGEST and (named := _NAMED.fullmatch(line)) is not None:
        return "pytorch", "pytorch", named["value"]
    if m is None:
        return None
    key = " ".join(m["key"].replace("`", "").split()).lower()
    base = _HINT.sub("", key)
    if not (m["bullet"] or m["bold"] or key.endswith(_HF_HINTS)
            or (listing and (base in _KNOWN_KEYS or (key != base
                                                        and m["value"].strip() in ("", "-"))))):
        return None  # a bare "key: value" only with Hugging Face's hint, its bullet lost
    return key, base, m["value"].strip().strip("`").strip()


# a plain "Key: value" line, no bullet and no bold ("Nvidia Driver: 495.44", "torch: 1.9.0"):
# part of a list only in a block of such lines with two keys the lists use (`_runs`)
_BARE_ITEM = re.compile(r"[ \t]{0,8}(?P<key>[A-Za-z][A-Za-z0-9 ./&()-]{0,40}?)[ \t]{0,4}[:：]"
                        r"[ \t]{0,8}(?P<value>[^\n]{1,200}?)[ \t]*")
# a GitHub issue form's field: its label a Markdown heading, its answer the next paragraph
# ("### GPU Name", blank, "RTX5070"), "_No response_" where left empty
_FORM_LABEL = re.compile(r"#{3}[ \t]{1,4}(?P<key>[A-Za-z][^\n#]{0,60}?)[ \t]*")


def _bare(line: str) -> tuple[str, str, str] | None:
    m = _BARE_ITEM.fullmatch(line) if len(line) <= LONGEST else None
    if m is None or "  " in m["key"] or re.search(r"[ \t]{2}[:：]", line):
        return None  # a tool's padded field ("Driver Version          : 535.54.03")
    key = " ".join(m["key"].split()).lower()
    return key, _HINT.sub("", key), m["value"].strip().strip("`").strip()


def _forms(text: str) -> str:
    """An issue form's fields ("### Label", a blank line, a one-line answer) written as
    "Label: answer" lines, one block per form, for `_runs` to read as bare items."""
    lines = text.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines[:-2]):
        label = _FORM_LABEL.fullmatch(line)
        if label is None or lines[i + 1].strip():
            continue
        answer = lines[i + 2].strip()
        after = lines[i + 3].strip() if i + 3 < len(lines) else ""
        if answer and not after and not answer.startswith(("#", "```", "_No response_")):
            out.append(f"{label['key']}: {answer}")
    return "\n".join(out)


def _runs(text: str) -> list[list[tuple[str, str, str]]]:
    """The runs of consecutive list items in `text`; one blank line between two items does
    not end a run (a template's fields set apart as Markdown paragraphs), two do. A block of
    plain "Key: value" lines is a run where two of its keys are ones the lists use (a
    person's "OS Version: …", "Nvidia Driver: …", "Pytorch: …"); an issue form's fields are
    read as such a block (`_forms`)."""
    runs: list[list[tuple[str, str, str]]] = []
    current: list[tuple[str, str, str]] = []
    bare = False  # the current run is a block of plain lines
    blank = 0

    def end() -> None:
        if current and (not bare or sum(base in _KNOWN_KEYS or "driver" in base
                                        for _, base, _ in current) >= 2):
            runs.append(list(current))

    forms = _forms(text[:LIMIT])
    for raw in [*text[:LIMIT].splitlines(), "", "", *forms.splitlines()]:
        line = _QUOTE.sub("", raw)
        if _RULE.fullmatch(line):
            continue  # a table's rule between its header and its rows
        if not line.strip():
            if current and not bare and blank == 0:
                blank = 1
                continue
            end()
            current, blank, bare = [], 0, False
            continue
        if current:
            item = (_bare(line) if _items(line) is None else None) if bare else _items(
                line, listing=True)
            if item is not None:
                current.append(item)
                blank = 0
                continue
            end()
            was_bare, current, blank, bare = bare, [], 0, False
            if not was_bare:
                continue  # as ever, the line that ends a list starts none
        if (item := _items(line)) is not None:
            current = [item]
        elif (item := _bare(line)) is not None:
            current, bare = [item], True
    end()
    return runs


def _one(values: list[X]) -> X | None:
    """The fact's value when the list states it once (or the same each time), else None."""
    return values[0] if values and all(v == values[0] for v in values) else None


def _torch(run: list[tuple[str, str, str]]) -> tuple[str, bool | None] | None:
    """torch's version, and the availability a "(GPU?)" key states with it."""
    found: list[tuple[str, bool | None]] = []
    for key, base, value in run:
        if base not in TORCH_KEYS:
            if "framework" in base and _TAGGED.fullmatch(value):
                found.append((value, None))  # "Framework & Version: 2.6.0+cu124"
            continue
        if key != base and (m := _GPU_FLAG.fullmatch(value)) is not None:
            found.append((m[1], {"True": True, "False": False, "CUDA": True}[m[2]]))
        elif key == base and (m := _GPU_MARK.fullmatch(value)) is not None:
            found.append((m[1], True))  # LLaMA-Factory's env: "(GPU)" only when CUDA is
        elif _TORCH.fullmatch(value := _TORCH_WORDS.sub("", value)):
            found.append((value, None))
    return found[0] if found and all(f == found[0] for f in found) else None


def _values(run: list[tuple[str, str, str]], keys: tuple[str, ...], pattern: re.Pattern[str],
            group: int = 0) -> str | None:
    return _one([m[group] for _, base, value in run if base in keys
                 and (m := pattern.fullmatch(value)) is not None])


def _driver(run: list[tuple[str, str, str]]) -> str | None:
    # a key that names the driver among other things ("GPU Driver and CUDA versions",
    # "CUDA driver version (e.g. 418.67)"): a version of the driver's form (a three-digit
    # branch; CUDA's and the other packages' majors have at most two) is the driver's
    keys = tuple({base for _, base, _ in run if "driver" in base.split()} | set(DRIVER_KEYS))
    said = [v for v in (_values(run, keys, _DRIVER, 1),
                        _values(run, CUDA_KEYS, _CUDA_DRIVER, 1),
                        _values(run, GPU_KEYS, _GPU_DRIVER, 2)) if v is not None]
    return _one(said)


# a GPU's compute capability in parentheses after its name ("NVIDIA GeForce GTX 1050 (compute
# capability 6.1)", "(sm_61)", "(cc 8.6)")
_CC = re.compile(r"[ \t]{0,4}\((?:compute[ \t]capability|capability|cc|CC)[ \t:=]{0,3}"
                 r"(\d{1,2})\.(\d)\)$|[ \t]{0,4}\(sm_(\d{1,2})(\d)\)$")


def _gpu_names(value: str) -> list[tuple[str, str | None]] | None:
    """The GPUs one value names ("8*A100", "2x RTX 3090", "NVIDIA GeForce GTX 1080 Ti"), each
    with the compute capability the value states after it, if any."""
    cc = None
    if (c := _CC.search(value)) is not None:
        cc = f"{c[1] or c[3]}.{c[2] or c[4]}"
        value = value[:c.start()]
    count, name = 1, value
    if (d := _GPU_DRIVER.fullmatch(value)) is not None:  # the driver is read by `_driver`
        value = name = d["gpu"]
    value = name = _MEMORY.sub("", value)
    if len(parts := _SEVERAL.split(value)) > 1:
        # several GPUs ("GTX 1080Ti and RTX 2080Ti"): each a GPU, else none is read (a value
        # read as its first name would hide the others from the checks that judge each GPU)
        each = [_gpu_names(part) for part in parts]
        named = [g for names in each if names for g in names]
        return None if None in each or len(named) > 64 else named
    m = _COUNT.fullmatch(value)
    if m is not None:
        count = int(m[1] or m[4] or 1)
        name = (m[2] or m[3] or m[5]).strip()
    name = _MEMORY.sub("", name)
    if not (1 <= count <= 64 and _NAME.fullmatch(name) and any(c.isdigit() for c in name)
            and (_BRANDED.match(name) or _BARE.fullmatch(name))):
        return None
    return [(name, cc)] * count


def _gpus(run: list[tuple[str, str, str]]) -> list[tuple[str, str | None]] | None:
    said = [names for _, base, value in run if base in GPU_KEYS
            and (names := _gpu_names(value)) is not None]
    return said[0] if said and all(s == said[0] for s in said) else None


def _conda_cuda(run: list[tuple[str, str, str]], version: str) -> str | None:
    """The cudatoolkit of the conda line that installed this very version from the pytorch
    channel ("conda install pytorch==1.7.1 … cudatoolkit=11.0 -c pytorch")."""
    line = _one([value for _, base, value in run if base in INSTALL_KEYS])
    return conda_pinned_cuda(line, version) if line and _CONDA.match(line) else None


def _torch_cuda(run: list[tuple[str, str, str]], version: str) -> str | None:
    """torch's CUDA: the version's tag, a key that says it is torch's, or the conda line;
    None where they differ."""
    said = [c for c in (tag_cuda(version), _values(run, TORCH_CUDA_KEYS, _CUDA),
                        _conda_cuda(run, version)) if c is not None]
    said = [".".join(c.split(".")[:2]) for c in said]
    return _one(said)


def _runtime(version: str, cuda: str | None, available: bool | None, text: str
             ) -> TorchRuntime | Unavailable:
    hip = re.search(r"\+rocm(\d{1,2}(?:\.\d{1,3}){0,3})$", version)
    return stated_runtime(
        version, cuda, available, hip[1] if hip else None,
        why="is not in the report (the environment list does not state it)",
        source="a list of versions", archs=torch_messages.arch_list(text),
        warned_gpus=torch_messages.warned_gpus(text),
        too_old_gpus=torch_messages.too_old_gpus(text),
        incompatible_gpus=torch_messages.incompatible_gpus(text))


def _nvml(driver: str | None, gpus: list[tuple[str, str | None]] | None,
          available: bool | None) -> NvmlFacts | None:
    why = "is not in the report (the environment list does not state it)"
    named = tuple(named_gpu(i, name, why, compute_capability=cc)
                  for i, (name, cc) in enumerate(gpus or ()))
    if driver is None and gpus and available is not True:
        # a name alone shows no working driver: bound as words are (GD101 skips, GD102 does
        # not judge), it still tells GD404 which GPU torch's build must hold code for
        return stated_driver(PROSE, why, named, None)
    if driver is None and not (gpus and available is True):
        return None
    return stated_driver("the report's environment list", why, named, driver)


def _os(run: list[tuple[str, str, str]]) -> str:
    said = _one([v[:100] for _, base, v in run if base in OS_KEYS and v])
    if said is None:
        return "OS: not stated"
    wsl1 = re.search(r"\b(\d{1,2}\.\d{1,3}\.\d{1,3}-\d{1,6}-Microsoft)\b", said)
    if wsl1:
        return f"OS: {said} (kernel {wsl1[1]}: WSL 1, which has no GPU support)"
    if re.match(r"Windows\b", said, re.IGNORECASE):
        return f"OS: {said} (Windows)"
    return f"OS: {said}"


def parse(text: str) -> Partial | None:
    """The facts of the one environment list in `text` (a whole paste) that states torch's or
    the driver's version; None when none does, or when lists state different versions."""
    read: list[tuple[list[tuple[str, str, str]], tuple[str, bool | None] | None, str | None]]
    read = [(run, _torch(run), _driver(run)) for run in _runs(text)]
    read = [r for r in read if r[1] is not None or r[2] is not None]
    if not read or any((r[1], r[2]) != (read[0][1], read[0][2]) for r in read):
        return None
    run, said, driver = max(read, key=lambda r: len(r[0]))  # the whole list, not a quote of it
    torch = None
    available = said[1] if said else None
    if available is None:
        available = _one([v.lower() in ("true", "yes") for _, base, v in run if base in
                          AVAILABLE_KEYS and v.lower() in ("true", "yes", "false", "no")])
    if available is None and said is not None:
        # the words around the list quote torch's answer ("torch.cuda.is_available() returns
        # True"), or torch's CUDA error from a kernel launch says it reached a GPU
        available = torch_says_available(text[:LIMIT])
        if available is None and KERNEL_ERROR.search(text[:LIMIT]):
            available = True
    if said is not None:
        version = said[0]
        python = _values(run, PYTHON_KEYS, _PYTHON, 1)
        runtime = _runtime(version, _torch_cuda(run, version), available, text[:LIMIT])
        torch = stated_torch(
            runtime, "the report's environment list", python_version=python or not_reported(
                "the interpreter's Python version is not in the report"),
            stated_version=release_left_open(runtime, version))
    hf = any(key.endswith(_HF_HINTS) for key, _, _ in run)
    return Partial(
        kind="transformers/diffusers/accelerate env" if hf else "environment list",
        rank=1, torch=torch, nvml=_nvml(driver, _gpus(run), available),
        host=not_reported("the host (environment variables, device nodes, /dev/shm) is not in "
                          "the report", _os(run)))
