"""What each part of one cuDNN copy says its version is (GD302). Pure functions, no I/O."""

from __future__ import annotations

import re

from gpudoctor.model import CudnnInstall

_FILE = re.compile(r"^libcudnn\.so\.(\d+\.\d+\.\d+)(?:\.\d+)*$")


def file_versions(i: CudnnInstall) -> tuple[str, ...]:
    """X.Y.Z of every real `libcudnn.so.X.Y.Z` in the copy: two when one release was copied
    over another and both files stayed."""
    found = {m.group(1) for lib in i.libraries if (m := _FILE.match(lib.name))}
    return tuple(sorted(found, key=lambda v: tuple(int(x) for x in v.split("."))))


def readings(i: CudnnInstall) -> dict[str, tuple[str, ...]]:
    """Each way the copy's version is told, and what it says (only the ways that tell)."""
    out: dict[str, tuple[str, ...]] = {}
    if isinstance(i.header_version, str):
        out["header"] = (i.header_version,)
    if isinstance(i.library_version, str):
        out["cudnnGetVersion"] = (i.library_version,)
    if files := file_versions(i):
        out["file name"] = files
    return out


def disagree(said: dict[str, tuple[str, ...]]) -> bool:
    """More than one version among the readings."""
    return len({v for vs in said.values() for v in vs}) > 1


def describe(said: dict[str, tuple[str, ...]], verb: str = "says") -> str:
    """"header says 8.5.0, cudnnGetVersion says 9.1.0, file names say 8.5.0 and 9.1.0"."""
    parts = []
    for k, vs in said.items():
        many = len(vs) > 1
        parts.append(f"{k}{'s' if many else ''} {'say' if many and verb == 'says' else verb} "
                     f"{' and '.join(vs)}" if verb else f"{k} {' and '.join(vs)}")
    return ", ".join(parts)


def library_side(said: dict[str, tuple[str, ...]]) -> str | None:
    """The version of the libraries (what runs): cudnnGetVersion, else the newest file."""
    for k in ("cudnnGetVersion", "file name"):
        if k in said:
            return said[k][-1]
    return None
