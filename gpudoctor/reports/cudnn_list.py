"""collect_env's "cuDNN version" section: the libcudnn files `ldconfig -p` finds on the system.

collect_env (torch/utils/collect_env.py, `get_cudnn_version`) runs `ldconfig -p | grep
libcudnn`, resolves each path's symlinks and prints the real files, sorted: one path on the
"cuDNN version:" line itself, or "Probably one of the following:" and one path a line. Files
of one directory and one major are one copy of cuDNN ("/usr/lib/x86_64-linux-gnu", 8.9.2);
two majors in one directory, or one in two directories, are several copies. The list states
the copies' places and versions (from the file names), nothing else: not their headers,
modes, links or dependencies, and not which one torch loads (a pip or conda torch brings its
own), so those stay Unavailable(NOT_REPORTED) and the copies carry no file facts.
"""

from __future__ import annotations

import re

from gpudoctor.model import CudnnFacts, CudnnInstall, Unavailable
from gpudoctor.reports.interface import not_reported

# "/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8.9.2" (a Windows list of DLLs is not read)
_PATH = re.compile(r"^(/[^\s:]*)/(libcudnn(?:_[a-z0-9_]+)?)\.so\.(\d+(?:\.\d+){0,3})$")
LONGEST = 400  # no path is longer; longer lines are not read


def files(text: str) -> list[tuple[str, str, str]]:
    """(directory, library, version) of every libcudnn file the section lists, in order."""
    out = []
    for line in text.splitlines():
        value = line.strip()
        if len(value) > LONGEST:
            continue
        value = re.sub(r"^cuDNN version\s*:\s*", "", value)
        m = _PATH.match(value)
        if m:
            out.append((m[1], m[2], m[3]))
    return out


def copies(text: str) -> CudnnFacts | Unavailable:
    """The cuDNN copies the list names: one per directory and major version."""
    listed = files(text)
    if not listed:
        return not_reported("cuDNN is not in the report (collect_env lists no libcudnn file)")
    groups: dict[tuple[str, str], list[str]] = {}
    for folder, _, listed_version in listed:
        groups.setdefault((folder, listed_version.split(".")[0]), []).append(listed_version)
    names = "; ".join(f"{d}/{lib}.so.{v}" for d, lib, v in listed[:40])
    installs = []
    for (folder, major), versions in groups.items():
        full = max(versions, key=lambda v: v.count("."))
        version: str | Unavailable = full if full.count(".") >= 2 else not_reported(
            f"only the major version ({major}) is in the file names collect_env lists")
        why = "is not in the report (collect_env lists the libraries' file names only)"
        installs.append(CudnnInstall(
            origin="ldconfig (as collect_env listed it)",
            lib_dir=folder,
            header=None,
            header_version=not_reported(f"the cuDNN header {why}", names),
            libraries=(),  # their modes, links and sizes are not in the report
            library_version=version,
            missing_deps=not_reported(f"what the libraries link {why}"),
            cuda_build=not_reported(f"the CUDA cuDNN was built for {why}"),
            found_by=("ldconfig",),
        ))
    return CudnnFacts(installs=tuple(installs))
