"""What `install-cudnn` checks before it writes anything: the prefix, the room on its file
system, and the tarball against the tables, the machine (its CPU and its GPUs) and the toolkit.

Each check raises `Refused` (with the one-line message and its fix) or returns the notes the
user should read; `force` and `allow_incomplete` turn the refusals they name into notes.
"""

from __future__ import annotations

import glob
import os
import platform
import resource
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpudoctor.actions.members import DOWNLOAD, size_text
from gpudoctor.actions.system import ActionError, Refused
from gpudoctor.versions import sm_of

if TYPE_CHECKING:
    from gpudoctor.actions.tarball import Archive
    from gpudoctor.compat import Tables
    from gpudoctor.probes.interface import Deps

# Any one of these makes a directory a CUDA toolkit (globs, relative to it).
_TOOLKIT_MARKS = ("version.json", "version.txt", "bin/nvcc", "include/cuda_runtime*.h",
                  "include/cuda.h", "lib64/libcudart.so*", "lib/libcudart.so*",
                  "targets/*/include/cuda_runtime*.h")
_SPACE_MARGIN = 64 << 10  # for the manifest and new directories


@dataclass(frozen=True, slots=True)
class Rules:
    """What the user allowed, the tables the checks read, and the notes about the prefix."""

    force: bool
    allow_incomplete: bool
    tables: Tables
    notes: tuple[str, ...] = ()
    gpus: tuple[tuple[str, str], ...] = ()  # (name, compute capability) of this machine's GPUs


def machine_gpus(deps: Deps | None = None) -> tuple[tuple[str, str], ...]:
    """(name, compute capability) of every GPU NVML sees on this machine; () when there is no
    driver or NVML does not answer (the probe never raises)."""
    from gpudoctor.model import GpuFacts, NvmlFacts
    from gpudoctor.probes.interface import Deps
    from gpudoctor.probes.nvml import probe_nvml

    facts = probe_nvml(deps or Deps())
    if not isinstance(facts, NvmlFacts):
        return ()
    return tuple((g.name, g.compute_capability) for g in facts.gpus
                 if isinstance(g, GpuFacts) and isinstance(g.compute_capability, str))


def require_file(tarball: Path) -> None:
    """Refuse a tarball path that is not a file."""
    if not tarball.is_file():
        raise Refused(ActionError(f"{tarball} does not exist or is not a file",
                                  "pass the path of the downloaded cuDNN tarball"))


def require_prefix(prefix: Path, force: bool) -> list[str]:
    """Refuse `/` (however spelt) always, and a directory that is not a CUDA toolkit unless
    `force`; the note to show when forced."""
    try:
        is_root = os.path.samefile(prefix, "/")
    except OSError:
        is_root = False
    if is_root:
        raise Refused(ActionError(
            f"refused: --prefix {prefix} is the root directory /; cuDNN goes into a CUDA "
            "toolkit's include/ and lib64/, never into /",
            "pass the CUDA toolkit's directory, e.g. --prefix /usr/local/cuda"))
    if not prefix.is_dir():
        raise Refused(ActionError(f"{prefix} does not exist or is not a directory",
                                  "pass the CUDA toolkit's directory as --prefix (e.g. "
                                  "/usr/local/cuda)"))
    base = glob.escape(str(prefix))
    if any(glob.glob(f"{base}/{mark}") for mark in _TOOLKIT_MARKS):
        return []
    if not force:
        raise Refused(ActionError(
            f"refused: {prefix} is not a CUDA toolkit: it has no version.json, version.txt, "
            "bin/nvcc or include/cuda_runtime.h",
            "pass the CUDA toolkit's directory (e.g. --prefix /usr/local/cuda), or --force to "
            f"install into {prefix} all the same"))
    return [f"{prefix} is not a CUDA toolkit; cuDNN goes there all the same (--force)"]


class Space:
    """What the prefix's file system can still take (its free blocks) and the largest file
    this process may write (`ulimit -f`): a member beyond either is refused before writing."""

    def __init__(self, prefix: Path) -> None:
        st = os.statvfs(prefix)
        self.prefix, self.block = prefix, st.f_frsize or 4096
        self.free = st.f_bavail * self.block
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        self.fsize = None if soft == resource.RLIM_INFINITY else soft
        self.need = _SPACE_MARGIN

    def take(self, name: str, size: int) -> None:
        """Count one member to be written; Refused when it does not fit."""
        if self.fsize is not None and size > self.fsize:
            raise Refused(ActionError(
                f"refused: member {name!r} ({size_text(size)}) is larger than this process "
                f"may write into one file ({size_text(self.fsize)}, `ulimit -f`)",
                "raise the limit (ulimit -f unlimited) and run the same command again"))
        self.need += -(-size // self.block) * self.block + self.block
        if self.need > self.free:
            raise Refused(ActionError(
                f"refused: member {name!r} does not fit: the file system of {self.prefix} has "
                f"{size_text(self.free)} free and the install needs {size_text(self.need)} up "
                "to this member",
                f"free some space there (df -h -- {shlex.quote(str(self.prefix))}), or install "
                "into another --prefix"))

    def take_all(self, files: Iterable[tuple[str, int]]) -> None:
        """Count every (name, size) to be written."""
        for name, size in files:
            self.take(name, size)


def check_complete(archive: Archive, rules: Rules) -> list[str]:
    """Refuse (unless allow_incomplete) a tarball without every sub-library of its major."""
    major = int(archive.version.split(".")[0])
    layout = rules.tables.cudnn_layout(major)
    if layout is None:
        return [f"the tables hold no file list for cuDNN {major}: its sub-libraries were not "
                "checked"]
    names = {m.basename for m in archive.installable if m.role == "library"}
    missing = [lib for lib in layout.libraries if lib not in names]
    if not missing:
        return []
    if not rules.allow_incomplete:
        raise Refused(ActionError(
            f"refused: {Path(archive.path).name} lacks sub-libraries of cuDNN {major}: "
            + ", ".join(missing),
            f"download the whole tarball again from {DOWNLOAD}, or pass --allow-incomplete to "
            "install it as it is"))
    return [f"the tarball lacks {', '.join(missing)}; it goes in all the same "
            "(--allow-incomplete)"]


def check_machine(archive: Archive, force: bool) -> list[str]:
    """Refuse (unless force) shared libraries built for another machine than this one."""
    host = platform.machine()
    foreign = [m for m in archive.installable if m.machine and m.machine != host]
    if not foreign:
        return []
    if not force:
        raise Refused(ActionError(
            f"refused: member {foreign[0].name!r} is built for {foreign[0].machine}; this "
            f"machine is {host}",
            f"download the linux-{host} tarball from {DOWNLOAD}, or pass --force"))
    return [f"{foreign[0].name} is built for {foreign[0].machine}, this machine is {host}; "
            "it goes in all the same (--force)"]


def check_cuda(archive: Archive, toolkit: str | None, force: bool) -> list[str]:
    """Refuse (unless force) a CUDA build whose major is not the toolkit's; note what could
    not be checked."""
    build = archive.cuda_build
    if toolkit is None:
        return ["the prefix has no readable CUDA toolkit version: the CUDA build was not checked"]
    if build is None:
        return [f"the tarball does not say which CUDA it was built for; it was not checked "
                f"against the toolkit's CUDA {toolkit}"]
    b, t = build.split("."), toolkit.split(".")
    if b[0] != t[0]:
        if not force:
            raise Refused(ActionError(
                f"refused: cuDNN {archive.version} in {Path(archive.path).name} is the CUDA "
                f"{build} build (from {archive.cuda_build_from}); the toolkit in the prefix is "
                f"CUDA {toolkit}",
                f"download the CUDA {t[0]} build of cuDNN {archive.version}, or pass --force"))
        return [f"installed the CUDA {build} build into a CUDA {toolkit} toolkit (--force)"]
    if int(t[0]) < 11 and len(b) > 1 and b[:2] != t[:2]:
        return [f"the tarball is built for CUDA {build}; the toolkit is CUDA {toolkit} (before "
                "CUDA 11 a cuDNN build is for one CUDA minor)"]
    return []


def check_gpus(archive: Archive, toolkit: str | None, rules: Rules) -> list[str]:
    """Refuse (unless force) a cuDNN release whose support matrix, for the CUDA it will run
    with, does not list a GPU of this machine (cuDNN 8.9.7 on an RTX 5090; 9.x's CUDA 12.0-12.6
    builds on Blackwell); note what could not be checked.

    The CUDA that picks the matrix row is the prefix's toolkit when it is of the tarball's CUDA
    major (a `cuda12` tarball covers 12.0 to 12.9, and the matrix differs within it), else the
    tarball's own CUDA build.
    """
    if not rules.gpus:
        return []
    build = archive.cuda_build
    same_major = toolkit and (build is None or toolkit.split(".")[0] == build.split(".")[0])
    cuda = toolkit if same_major else build
    support = rules.tables.cudnn_gpu_support(archive.version, cuda)
    if support is None:
        return [f"the tables do not record which GPUs cuDNN {archive.version} supports: this "
                "machine's GPUs were not checked against it"]
    outside = [(n, c) for n, c in dict.fromkeys(rules.gpus) if not support.supports(c)]
    if not outside:
        return []
    gpus = ", ".join(f"{n} ({sm_of(c)})" for n, c in outside)
    with_cuda = f" with CUDA {cuda}" if cuda else ""
    what = (f"cuDNN {archive.version}{with_cuda} supports {support.range_text()} (NVIDIA's "
            f"cuDNN support matrix, {support.status})")
    if rules.force or support.status == "unverified":
        why = "(--force)" if rules.force else "(that range is unverified)"
        return [f"{what}; this machine's {gpus} is outside it; it goes in all the same {why}"]
    sm = sm_of(outside[0][1])
    raise Refused(ActionError(
        f"refused: {what}; this machine's {gpus} is outside it",
        f"download a cuDNN release and CUDA build that support {sm} (`gpudoctor compat gpu "
        f"{sm}` lists them), or pass --force"))

