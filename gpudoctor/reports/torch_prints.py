"""What torch itself printed when asked, quoted in a paste: a Python session or a script's
prints of `torch.__version__`, `torch.version.cuda` and `torch.cuda.is_available()`, and
beside them `torch.cuda.get_arch_list()` (torch's arch list), `torch.cuda.get_device_name()`
and `torch.cuda.get_device_capability()` or `get_device_properties()`'s repr (the GPU torch uses:
where CUDA is available, the driver answered, so the GPU is stated as a driver's GPU with only
its name and capability). Where `is_available()` is not printed, `device_count()` says it
(is_available() is `device_count() > 0`), and a name `get_device_name()` printed says CUDA
initialised.

    >>> torch.__version__            In [2]: torch.__version__
    '2.1.0+cu118'                    Out[2]: '2.1.0+cu118'

or a script's print call with the expression as its argument, the value on the next line
("1.8.1+cu102"), or one print call of several of the first three, their values on the next
line separated by spaces ("2.4.1+cu124 12.4"). The expression is read on its own line (after
`>>> `, `In [N]: ` or as the argument of a print call), its value on the next line that is
not blank (after `Out[N]: `), of the exact form each expression prints: a version, a CUDA
version or None, True or False. Two different values of one expression leave it unread.
torch's version is needed: without it nothing is read. A script's prints in one fenced block
and their output in the next (the issue template's "code", then "output") are paired in order,
up to the first print whose output may take several lines (`printed_apart`). A print call
that labels its value (a string "CUDA available:" and then `torch.cuda.is_available()` as its
arguments, or an f-string holding both) is read from the output line that starts with its
label, wherever it is pasted (`printed_labelled`). Several print calls on one line (a shell's
`python -c` with them joined by semicolons) are read from the lines under it, in order
(`printed_on_one_line`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise

from gpudoctor.model import NvmlFacts, TorchRuntime
from gpudoctor.reports.interface import (
    TORCH_NAMED,
    Partial,
    named_gpu,
    not_reported,
    release_left_open,
    stated_driver,
    stated_runtime,
    stated_torch,
    tag_cuda,
)
from gpudoctor.reports.issue_body import fenced

LIMIT = 200_000  # a longer paste is read in its first part only
_PROMPT = r"(?:>>>[ \t]?|In[ \t]?\[\d{1,4}\]:[ \t]?)?"
_OUT = r"(?:Out[ \t]?\[\d{1,4}\]:[ \t]?)?"
_COMMENT = r"[ \t]*(?:#[^\n]{0,120})?"  # "# check CUDA availability", after either line
_VERSION = r"\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:(?:a|b|rc)\d{1,3})?(?:\.dev\d{1,10}|\.post\d{1,3})?"


def _printed(expression: str, value: str) -> re.Pattern[str]:
    """`expression` on a line of its own (or printed), or printed by the one print call of a
    line (a shell prompt's `python -c "import torch; print …"`), then `value` on the next line
    that is not blank, quoted or not."""
    alone = rf"[ \t]{{0,8}}{_PROMPT}(?:print\([ \t]?)?{expression}(?:[ \t]?\))?{_COMMENT}"
    one_print = (rf"(?![^\n]{{0,300}}print\([^\n]{{0,300}}print\()[^\n]{{0,300}}?\bprint\([ \t]?"
                 rf"{expression}[ \t]?\)[^\n(]{{0,20}}")
    return re.compile(rf"^(?:{alone}|{one_print})\n(?:[ \t]*\n)?[ \t]{{0,8}}{_OUT}['\"]?"
                      rf"(?P<value>{value})['\"]?{_COMMENT}$", re.MULTILINE)


VERSION = _printed(r"torch\.__version__", rf"{_VERSION}(?:\+[a-z0-9.]{{1,40}})?")
CUDA = _printed(r"torch\.version\.cuda", r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?|None")
AVAILABLE = _printed(r"torch\.cuda\.is_available\(\)", r"True|False")
# torch.cuda.is_available() is `device_count() > 0` (torch/cuda/__init__.py): a printed count
# says it too
COUNT = _printed(r"torch\.cuda\.device_count\(\)", r"\d{1,3}")
ARCHS = _printed(r"torch\.cuda\.get_arch_list\(\)",
                 r"\[(?:'(?:sm|compute)_\d{2,3}[a-z]?'(?:,[ \t]?)?){1,40}\]")
# the device asked for: none (the current one, 0 unless changed), 0 or "cuda:0"
_DEVICE = r"\((?:0|['\"]cuda(?::0)?['\"]|device=0)?\)"
NAME = _printed(rf"torch\.cuda\.get_device_name{_DEVICE}",
                r"(?:NVIDIA |GeForce |Tesla |Quadro |TITAN |Titan )[A-Za-z0-9][\w .()/-]{1,60}")
CAPABILITY = _printed(rf"torch\.cuda\.get_device_capability{_DEVICE}",
                      r"\(\d{1,2}, ?\d{1,2}\)")


# the GPU torch uses where the prints give its compute capability but not its name
CURRENT_DEVICE = "(torch's current device; its name is not in the report)"
# torch.cuda.get_device_properties()'s repr: the GPU's name and compute capability
PROPERTIES = re.compile(r"_CudaDeviceProperties\(name='(?P<name>[^'\n]{2,80})', "
                        r"major=(?P<ma>\d{1,2}), minor=(?P<mi>\d{1,2})")

_DIFFER = "differ"  # the expression printed two values (before and after a reinstall)

# one print call of several of them, its values on the next line separated by spaces (print's
# separator): `python -c "import torch; print(torch.__version__, torch.version.cuda)"` →
# "2.4.1+cu124 12.4"
_EXPRESSIONS = {
    r"torch\.__version__": (VERSION, rf"{_VERSION}(?:\+[a-z0-9.]{{1,40}})?"),
    r"torch\.version\.cuda": (CUDA, r"\d{1,2}\.\d{1,2}(?:\.\d{1,3})?|None"),
    r"torch\.cuda\.is_available\(\)": (AVAILABLE, r"True|False"),
}
_ANY = "|".join(f"(?:{e})" for e in _EXPRESSIONS)
_MULTI = re.compile(rf"^[^\n]{{0,300}}?\bprint\([ \t]?((?:{_ANY})(?:,[ \t]?(?:{_ANY})){{1,2}})"
                    rf"[ \t]?\)[^\n(]{{0,20}}\n(?:[ \t]*\n)?[ \t]{{0,8}}([^\n]{{1,120}})$",
                    re.MULTILINE)


def _printed_together(text: str) -> dict[re.Pattern[str], set[str]]:
    """The value of each expression of a print call of several, where the printed line has
    one value of the expected form for each."""
    found: dict[re.Pattern[str], set[str]] = {}
    for m in _MULTI.finditer(text):
        expressions = [e.strip() for e in m[1].split(",")]
        values = m[2].strip().split()
        if len(values) != len(expressions):
            continue
        pairs = []
        for expression, value in zip(expressions, values, strict=True):
            key = next(k for k in _EXPRESSIONS if re.fullmatch(k, expression))
            pattern, form = _EXPRESSIONS[key]
            if not re.fullmatch(form, value):
                break
            pairs.append((pattern, value))
        else:
            for pattern, value in pairs:
                found.setdefault(pattern, set()).add(value)
    return found


def _one(pattern: re.Pattern[str], text: str,
         together: dict[re.Pattern[str], set[str]] | None = None) -> str | None:
    """The one value printed for the expression, alone or in a print of several
    (`together`, `_printed_together`'s); None when none, `_DIFFER` when values differ."""
    values = {m["value"] for m in pattern.finditer(text)} | (together or {}).get(pattern, set())
    return values.pop() if len(values) == 1 else _DIFFER if values else None


_PRINT_LINE = re.compile(r"^[ \t]{0,8}print\([ \t]?(?P<e>[^\n]{1,120}?)[ \t]?\)[ \t]*"
                         r"(?:#[^\n]{0,120})?$")
# the expressions whose print is one line: a script's prints can be paired with an output block
# in order only up to the first print of anything else (a tensor, a dict: lines unknown)
_ONE_LINE = re.compile(r"torch\.(?:__version__|version\.cuda|cuda\.is_available\(\)|"
                       r"backends\.cudnn\.(?:enabled|version\(\))|cuda\.device_count\(\)|"
                       r"cuda\.current_device\(\)|cuda\.get_arch_list\(\)|"
                       r"cuda\.get_device_(?:name|capability|properties)\([^\n()]{0,40}\))")


def _session(expression: str, value: str) -> str:
    """An expression and its printed value as a Python session shows them."""
    return f">>> {expression}\n{value}\n"


def printed_apart(text: str) -> str:
    """A script's prints in one fenced block and their output in the next (the issue
    template's "code" then "output"), as a Python session would show each expression and its
    value: the k-th print's value is the k-th line of the output, up to the first print whose
    output may take several lines, or a traceback."""
    out = []
    for code, output in pairwise(fenced(text)):
        prints = [m["e"].strip() for line in code if (m := _PRINT_LINE.match(line))]
        if len(prints) < 2 or any(_PRINT_LINE.match(line) for line in output):
            continue
        values = [line.strip() for line in output]
        for expression, value in zip(prints, values, strict=False):
            if not _ONE_LINE.fullmatch(expression) or not value or value.startswith((
                    "Traceback", "---", "File ")):
                break
            out.append(_session(expression, value))
    return "\n".join(out)


# a print call that labels its value: print("Torch version:", torch.__version__), or an
# f-string's print(f"CUDA available: {torch.cuda.is_available()}")
_LABELLED = re.compile(r"""\bprint\([ \t]?(?:(?P<q>["'])(?P<label>[^"'\n{}]{1,60})(?P=q)[ \t]?,"""
                       r"""[ \t]?(?P<e>torch\.[^\n,()]{1,60}(?:\([^\n()]{0,40}\))?)"""
                       r"""|f(?P<fq>["'])(?P<flabel>[^"'\n{}]{1,60})\{(?P<fe>torch\.[^\n{}]{1,80})\}"""
                       r"""(?P=fq))[ \t]?\)""")


def printed_labelled(text: str) -> str:
    """A script's prints that label their values ("Torch version:", torch.__version__) and
    the lines of its output that start with those labels, as a Python session would show each
    expression and its value; the label ties each value to its expression, wherever the
    output is pasted."""
    out = []
    for m in _LABELLED.finditer(text):
        label, expression = (m["label"], m["e"]) if m["label"] else (m["flabel"], m["fe"])
        if not _ONE_LINE.fullmatch(expression.strip()) or not label.strip():
            continue
        said = re.compile(rf"^[ \t]{{0,8}}{re.escape(label.strip())}[ \t]{{0,2}}"
                          r"(?P<value>[^\n]{1,200}?)[ \t]*$", re.MULTILINE)
        out += [_session(expression.strip(), v["value"]) for v in said.finditer(text)]
    return "\n".join(out)


_CALL = re.compile(r"\bprint\([ \t]?(?P<e>torch\.[^\n;()]{1,60}(?:\([^\n;()]{0,40}\))?)[ \t]?\)")
_ANY_CALL = re.compile(r"\bprint\(")


def printed_on_one_line(text: str) -> str:
    """Several print calls on one line (a shell's `python -c` importing torch, then printing
    its version and whether CUDA is available, the calls joined by semicolons), their values
    on the next lines that are not blank, in order, as a Python session would show each
    expression and its value; only where every print is of a one-line expression, and only as
    many lines as it printed."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        calls = [m["e"].strip() for m in _CALL.finditer(line)]
        if len(calls) < 2 or len(_ANY_CALL.findall(line)) != len(calls) or not all(
                _ONE_LINE.fullmatch(e) for e in calls):
            continue
        # the lines under it, less a lone quote or fence and the words that introduce the
        # output ("and I got :"): no value these expressions print ends in a colon
        values = [w for v in lines[i + 1:i + 1 + 4 * len(calls)]
                  if (w := v.strip().strip("`\"'")) and not w.endswith((":", "："))
                  ][:len(calls)]
        if len(values) < len(calls) or any(v.startswith(("Traceback", "File ", ">>>", "$"))
                                           for v in values):
            continue
        out += [_session(e, v) for e, v in zip(calls, values, strict=True)]
    return "\n".join(out)


def parse(text: str) -> Partial | None:
    """torch's printed facts in `text`; None when its version is not printed once."""
    text = text[:LIMIT].replace("\r\n", "\n")
    for transcribe in (printed_apart, printed_labelled, printed_on_one_line):
        # each reads the text with what the ones before it transcribed
        text = f"{text}\n{session}" if (session := transcribe(text)) else text
    together = _printed_together(text)
    version = _one(VERSION, text, together)
    cuda = _one(CUDA, text, together)
    available = _one(AVAILABLE, text, together)
    if version is None and cuda not in (None, "None", _DIFFER) and available in ("True",
                                                                                  "False"):
        return _unversioned(text, cuda, available == "True")
    if version is None or version == _DIFFER:
        return None
    tag = version.partition("+")[2]
    hip = tag if tag.startswith("rocm") else None
    why = "is not in the report (only torch's printed version, CUDA and availability are)"
    said = None if available in (None, _DIFFER) else available == "True"
    if said is None:
        said = _available_otherwise(text)
    if cuda == "None" and hip is None:
        # torch.version.cuda is None: a build without CUDA, whatever its version's tag says
        cpu = stated_runtime(version + "+cpu", None, said, None, why=why,
                             source="torch's own prints", archs=None)
        runtime = replace(cpu, version=version) if isinstance(cpu, TorchRuntime) else cpu
    else:  # torch.version.cuda as printed, else the version's tag ("+cu118"): only where
        # they agree and the prints do not differ
        tagged = tag_cuda(version)
        printed = None if cuda in (None, _DIFFER) else ".".join(cuda.split(".")[:2])
        stated = None if cuda == _DIFFER else printed if tagged in (None, printed) else (
            tagged if printed is None else None)
        runtime = stated_runtime(version, stated, said, hip, why=why,
                                 source="torch's own prints", archs=_archs(text))
    return Partial(kind="torch's prints", rank=1, nvml=_gpu(text, said), torch=stated_torch(
        runtime, "torch's own prints", stated_version=release_left_open(runtime, version)))


def _unversioned(text: str, cuda: str, available: bool) -> Partial:
    """torch as its prints state it without `torch.__version__`: a build for the CUDA
    `torch.version.cuda` printed, CUDA available or not, of a release they do not name."""
    why = "is not in the report (only torch's printed CUDA and availability are)"
    runtime = stated_runtime(not_reported(f"torch's version {why}"),
                             ".".join(cuda.split(".")[:2]), available, None, why=why,
                             source="torch's own prints", archs=_archs(text))
    return Partial(kind="torch's prints", rank=1, nvml=_gpu(text, available),
                   torch=stated_torch(runtime, "torch's own prints"))


def _available_otherwise(text: str) -> bool | None:
    """Whether CUDA is available, where is_available() is not printed but what it rests on
    is: `device_count()` (is_available() is `device_count() > 0`), or a GPU's name that
    `get_device_name()` printed (it initialises CUDA first, and raises where it cannot)."""
    count = _one(COUNT, text)
    if count not in (None, _DIFFER):
        return int(count) > 0
    name = _one(NAME, text)
    return True if name not in (None, _DIFFER) else None


def _archs(text: str) -> tuple[str, ...] | None:
    """torch.cuda.get_arch_list() as printed, once."""
    printed = _one(ARCHS, text)
    return None if printed in (None, _DIFFER) else tuple(re.findall(r"\w+_\d+[a-z]?", printed))


def _gpu(text: str, available: bool | None) -> NvmlFacts | None:
    """The GPU torch named, where CUDA is available to it (the driver answered): its name
    and, where printed, its compute capability; None otherwise."""
    name = _one(NAME, text)
    capability = _one(CAPABILITY, text)
    cc = None if capability in (None, _DIFFER) else ".".join(re.findall(r"\d+", capability))
    shown = {(m["name"].strip(), f"{m['ma']}.{m['mi']}") for m in PROPERTIES.finditer(text)}
    if name is None and len(shown) == 1:  # print(torch.cuda.get_device_properties(0))
        name, cc = shown.pop()
    if name is None and cc is not None:  # its capability printed, not its name
        name = CURRENT_DEVICE
    if available is not True or name in (None, _DIFFER):
        return None
    why = ("is not in the report (torch printed only the GPU's "
           + ("compute capability)" if name == CURRENT_DEVICE else "name)"))
    return stated_driver(TORCH_NAMED, why,
                         (named_gpu(0, name.strip(), why, compute_capability=cc),))
