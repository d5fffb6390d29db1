"""`pip show torch` pasted: its "Name: torch" and "Version: 2.1.2" lines, then "Requires:".

From torch 1.13 on, PyPI's Linux CUDA wheels depend on NVIDIA's CUDA wheels
(`nvidia-cuda-runtime-cu12`, `nvidia-cudnn-cu11`, …; their names in "Requires:"), and the CPU
and Windows wheels do not. So a version without a local tag whose "Requires:" names
`nvidia-cuda-runtime-cuN` is PyPI's own CUDA build of that release: its CUDA is the release's
PyPI default variant's, where that variant's major is N (2.1.2 → cu121). Read only so: a
"Requires:" without NVIDIA's wheels says nothing (the CPU wheel, a Windows wheel, a conda
package, a build from source), and nothing is guessed for a release the tables do not know.
The version's own tag ("2.1.2+cu118", "2.6.0+cpu") wins over the dependencies.
"""

from __future__ import annotations

import re

from gpudoctor.compat import Tables
from gpudoctor.model import TorchFacts
from gpudoctor.reports.interface import (
    TORCH_VERSION,
    Partial,
    not_reported,
    release_left_open,
    stated_runtime,
    tag_cuda,
)

LIMIT = 200_000  # a longer paste is read in its first part only
SHOW = re.compile(rf"^[ \t]{{0,8}}Name:[ \t]torch[ \t]*\n[ \t]{{0,8}}Version:[ \t]"
                  rf"(?P<v>{TORCH_VERSION})[ \t]*$"
                  rf"(?P<rest>(?:\n(?![ \t]{{0,8}}Name:)[^\n]{{0,4000}}){{0,12}})",
                  re.MULTILINE)
_REQUIRES = re.compile(r"^[ \t]{0,8}Requires:[ \t]([^\n]{0,4000})$", re.MULTILINE)
_RUNTIME = re.compile(r"(?<![\w-])nvidia-cuda-runtime-cu(\d{2})(?![\w-])")
_WHY = "is not in the report (pip show lists the package, not what it runs)"


def _cuda(version: str, requires: str | None, tables: Tables) -> str | None:
    """The CUDA of this build: its tag's, else the PyPI default's of a wheel that needs
    NVIDIA's CUDA runtime wheel of that major; None where neither says."""
    if "+" in version:
        return tag_cuda(version)
    needs = {int(m[1]) for m in _RUNTIME.finditer(requires or "")}
    release = tables.torch_release(version)
    default = tag_cuda(f"{version}+{release.pypi_default}") if release and \
        release.pypi_default else None
    if len(needs) == 1 and default and int(default.split(".")[0]) in needs:
        return default
    return None


def parse(text: str, tables: Tables) -> Partial | None:
    """torch as `pip show torch` shows it; None where the text holds no such block, or two
    that differ."""
    shown = {(m["v"], (r[1] if (r := _REQUIRES.search(m["rest"])) else None))
             for m in SHOW.finditer(text[:LIMIT])}
    if len(shown) != 1:
        return None
    version, requires = shown.pop()
    cuda = _cuda(version, requires, tables)
    runtime = stated_runtime(version, cuda, None, None, why=_WHY, source="pip show",
                             archs=None)
    return Partial(kind="pip show torch", rank=1, torch=TorchFacts(
        python=not_reported("the interpreter's path is not in the report"),
        static=not_reported("torch's package metadata is not read from pip show"),
        runtime=runtime,
        seconds=not_reported("no probe ran: the facts are pip's"),
        stated_version=release_left_open(runtime, version),
    ))
