"""All-or-nothing file placement: every change is journaled and undone on any error.

An install or uninstall moves files with `rename` (instant, on one file system) and records
each step; `Transaction.rollback()` undoes the steps in reverse, so the prefix ends exactly as
it was. The operations go through a `FileOps` object: tests pass a subclass that fails on the
Nth step (permission denied, disk full, Ctrl-C), because as root `chmod` cannot make a
directory unwritable.

The manifest (`<prefix>/.gpudoctor/cudnn/manifest.json`) records, for every path gpudoctor
touched, what it installed there and where the original was backed up; `uninstall-cudnn`
restores from it.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudoctor.actions.members import ArchiveError
from gpudoctor.actions.tarball import FileSlice, Readable
from gpudoctor.probes.cudnn import MANIFEST

STATE_DIR = str(Path(MANIFEST).parent)  # ".gpudoctor/cudnn", relative to the prefix
_BLOCK = 1 << 20
# Every file placed gets FILE_MODE and every directory created DIR_MODE, whatever the tarball
# says and whatever the umask: `chmod a+r` and no more (no setuid, setgid or sticky bit, no
# group or other write). The staging directory, where files wait before they are renamed into
# place, is PRIVATE_MODE: nobody else may swap a staged file.
FILE_MODE = 0o644
DIR_MODE = 0o755
PRIVATE_MODE = 0o700


class FileOps:
    """The file-system primitives an install uses. Override one to inject a fault."""

    def move(self, src: Path, dst: Path) -> None:
        """Rename src to dst (which must not exist); copy and delete across file systems."""
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, "refusing to overwrite", str(dst))
        try:
            os.rename(src, dst)
        except OSError as e:
            if e.errno != errno.EXDEV:
                raise
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            else:
                shutil.copy2(src, dst)
            os.unlink(src)

    def mkdir(self, path: Path) -> None:
        """Create one directory, DIR_MODE whatever the umask."""
        make_dir(path, DIR_MODE)

    def rmdir(self, path: Path) -> None:
        """Remove one empty directory."""
        path.rmdir()

    def write(self, dst: Path, stream: Readable, mode: int, mtime: int,
              size: int | None = None) -> None:
        """Write a new file (never through a symlink) from a stream, then set mode and mtime.

        With `size` (the member's size in its tar header) the bytes are counted as they are
        written: a stream that yields more is stopped at once (ArchiveError), never written on.
        """
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            if isinstance(stream, FileSlice):
                stream.copy_to(out.fileno())  # reads exactly the member's bytes from the tar
            else:
                written = 0
                while chunk := stream.read(_BLOCK):
                    written += len(chunk)
                    if size is not None and written > size:
                        raise ArchiveError(f"refused: {dst.name} grew past the {size} bytes its "
                                           "tar header states while it was unpacked")
                    out.write(chunk)
            os.fchmod(out.fileno(), mode)
        os.utime(dst, (mtime, mtime), follow_symlinks=False)

    def symlink(self, target: str, dst: Path) -> None:
        """Create a symlink dst -> target."""
        os.symlink(target, dst)


@dataclass
class Transaction:
    """A journal of moves and created directories that can be undone."""

    ops: FileOps
    journal: list[tuple[str, Path, Path]] = field(default_factory=list)

    def mkdirs(self, path: Path) -> None:
        """Create path and any missing parents, journaled."""
        missing = []
        p = path
        while not p.exists():
            missing.append(p)
            p = p.parent
        for d in reversed(missing):
            self.ops.mkdir(d)
            self.journal.append(("mkdir", d, d))

    def move(self, src: Path, dst: Path) -> None:
        """Move src to dst, journaled."""
        self.mkdirs(dst.parent)
        self.ops.move(src, dst)
        self.journal.append(("move", src, dst))

    def rollback(self) -> list[str]:
        """Undo every step in reverse order; the steps that could not be undone, as text."""
        problems = [p for step in reversed(self.journal) if (p := _undo(*step))]
        self.journal.clear()
        return problems


def _undo(kind: str, a: Path, b: Path) -> str | None:
    try:
        if kind == "move":
            FileOps().move(b, a)  # undo with the plain operations, never injected faulty ones
        else:
            a.rmdir()
    except OSError as e:
        return f"could not undo {kind} {a} -> {b}: {e}"
    return None


# --------------------------------------------------------------------------- manifest


@dataclass
class Entry:
    """One path gpudoctor touched: what it put there, and where the original went."""

    path: str  # relative to the prefix, e.g. "lib64/libcudnn.so.8"
    installed: dict[str, Any] | None  # {"kind", "size", "target"}; None: removed, nothing put
    backup: str | None  # relative to the prefix; None: there was nothing before

    def to_json(self) -> dict[str, Any]:
        """The manifest row."""
        return {"path": self.path, "installed": self.installed, "backup": self.backup}


@dataclass
class Manifest:
    """What `<prefix>/.gpudoctor/cudnn/manifest.json` holds."""

    version: str
    cuda_build: str | None
    tarball: str
    entries: dict[str, Entry]
    created_dirs: list[str]
    history: list[dict[str, Any]] = field(default_factory=list)

    def dump(self) -> str:
        """The manifest file's text."""
        return json.dumps({
            "schema": 1, "version": self.version, "cuda_build": self.cuda_build,
            "tarball": self.tarball, "created_dirs": self.created_dirs,
            "history": self.history,
            "entries": [e.to_json() for e in self.entries.values()],
        }, indent=1) + "\n"

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Read a manifest; ValueError/KeyError/TypeError when it is not one."""
        data = json.loads(path.read_text())
        entries = {e["path"]: Entry(str(e["path"]), e["installed"], e["backup"])
                   for e in data["entries"]}
        return cls(str(data["version"]), data.get("cuda_build"), str(data["tarball"]),
                   entries, list(data.get("created_dirs", [])), list(data.get("history", [])))


def describe(path: Path) -> dict[str, Any] | None:
    """kind/size/target of what is at path now (None when nothing is)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if path.is_symlink():
        return {"kind": "symlink", "size": 0, "target": os.readlink(path)}
    return {"kind": "file", "size": st.st_size, "target": None}


def make_dir(path: Path, mode: int) -> None:
    """Create one directory with exactly `mode` (mkdir's mode goes through the umask; chmod
    does not)."""
    os.mkdir(path, mode)
    os.chmod(path, mode, follow_symlinks=False)


def state_dirs(state: Path, prefix: Path) -> None:
    """Create gpudoctor's state directory in the prefix (and `.gpudoctor` above it), DIR_MODE
    each; one already there loses any group or other write bit it has."""
    for d in reversed([state, *[p for p in state.parents if prefix in p.parents]]):
        try:
            st = d.lstat()
        except FileNotFoundError:
            make_dir(d, DIR_MODE)
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o7022:
            os.chmod(d, stat.S_IMODE(st.st_mode) & 0o755)


def private_dirs(path: Path, top: Path) -> None:
    """Create path and its missing parents below `top`, PRIVATE_MODE each."""
    missing = []
    p = path
    while p != top and not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        make_dir(d, PRIVATE_MODE)


def write_text(path: Path, text: str) -> None:
    """Write a new file of gpudoctor's own (a manifest), FILE_MODE whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
        os.fchmod(out.fileno(), FILE_MODE)


def remove_tree(path: Path) -> None:
    """Delete a staging or trash directory (best effort: it holds only our own files)."""
    shutil.rmtree(path, ignore_errors=True)


def prune_empty(path: Path, stop: Path) -> None:
    """Remove path and its empty parents, up to (not including) stop."""
    p = path
    while p != stop and stop in p.parents:
        try:
            p.rmdir()
        except OSError:
            return
        p = p.parent
