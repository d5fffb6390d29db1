"""Which torch imports, against which torch pip installed: shared by GD401 and GD406.

Pure functions over `TorchFacts` (no I/O). The child reports the directory of the torch that
imports (`TorchStatic.location`, `TorchRuntime.file`), every installed torch distribution with
the package directory it installed (`TorchStatic.distributions`; the child writes a directory
that is the imported one under the same string) and its working directory (`TorchStatic.cwd`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from gpudoctor.checks import facts as F
from gpudoctor.model import TorchFacts, TorchRuntime, TorchStatic


@dataclass(frozen=True, slots=True)
class Shadow:
    """A torch that imports from somewhere pip did not install it."""

    message: str
    fix: str


def _same(a: str, b: str) -> bool:
    return posixpath.normpath(a) == posixpath.normpath(b)


def imported_dir(t: TorchFacts) -> str | None:
    """The directory of the torch that imports: torch.__file__'s, else the one found on
    sys.path before importing."""
    rt = t.runtime
    if isinstance(rt, TorchRuntime) and isinstance(rt.file, str) and rt.file:
        return posixpath.dirname(rt.file)
    if isinstance(t.static, TorchStatic) and t.static.location:
        return t.static.location
    return None


def installed_version(st: TorchStatic | None) -> str | None:
    """The version pip installed (the first distribution on sys.path), else the version the
    static facts give when it is one; never "unknown"."""
    if st is None:
        return None
    if st.distributions:
        return st.distributions[0][0]
    return st.version if F.version(st.version) else None


def shadow(t: TorchFacts) -> Shadow | None:
    """The torch that imports is none of the installed distributions: a source checkout in
    the working directory, a copy on PYTHONPATH. None when it is an installed one, or when the
    facts cannot tell (a snapshot from before `distributions` was recorded)."""
    st = t.static
    where = imported_dir(t)
    if not isinstance(st, TorchStatic) or where is None or not isinstance(st.cwd, str):
        return None  # no facts, or from a gpudoctor that did not record the installs
    if any(_same(where, loc) for _, loc in st.distributions):
        return None
    rt = t.runtime
    found = rt.version if isinstance(rt, TorchRuntime) else st.version
    if st.distributions:
        v, loc = st.distributions[0]
        instead = f"not the installed torch {v} ({loc})"
    else:
        instead = "and no torch is installed by pip in this interpreter"
    parent = posixpath.dirname(posixpath.normpath(where))
    if _same(parent, st.cwd):
        return Shadow(
            f"torch imports from ./torch, a source checkout or stray folder in the current "
            f"directory ({where}, version {found}), {instead}",
            f"cd to another directory before running Python, or rename {where}; to use a "
            "source checkout, build and install it (pip install -e . in the checkout)",
        )
    if not st.distributions:  # a torch installed without dist-info (some conda builds)
        return None
    return Shadow(
        f"torch imports from {where} (version {found}), {instead}",
        f"remove {parent} from PYTHONPATH (or delete that copy); check .pth files and "
        "`pip list --user`",
    )
