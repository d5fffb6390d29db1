"""`gpudoctor uninstall-cudnn`: undo gpudoctor's cuDNN installs in a prefix, from the manifest.

Every path the installs touched is put back as it was: what they placed is removed, what they
replaced or removed comes back from `.gpudoctor/cudnn/backup/`, directories they created go when
empty. All or nothing, like the install.

A file whose kind, size or link target differs from what the install recorded was changed after
it (by hand, by another tool): it is kept in place, nothing is restored over it, and its backup
and a manifest listing only the kept files stay, so `--force` can finish the job later. `--force`
removes them too (and restores the originals over them).
"""

from __future__ import annotations

import glob
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudoctor.actions import system
from gpudoctor.actions.system import ActionError, Refused
from gpudoctor.actions.transaction import (
    STATE_DIR,
    Entry,
    FileOps,
    Manifest,
    Transaction,
    describe,
    prune_empty,
    remove_tree,
    write_text,
)
from gpudoctor.probes.cudnn import MANIFEST


@dataclass(frozen=True, slots=True)
class KeptFile:
    """A file changed since gpudoctor installed it, which uninstall left in place."""

    path: str
    reason: str  # e.g. "4096 bytes now, the install wrote 1234"
    backup: str | None  # where the original it replaced still is, if there was one


@dataclass(frozen=True, slots=True)
class UninstallResult:
    """What uninstall-cudnn restored."""

    prefix: str
    version: str | None  # the cuDNN the manifest recorded
    removed: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()
    error: ActionError | None = None
    kept: tuple[KeptFile, ...] = ()

    @property
    def ok(self) -> bool:
        """No error, and no changed file kept."""
        return self.error is None and not self.kept


def uninstall_cudnn(prefix: str | Path = "/usr/local/cuda", *, ops: FileOps | None = None,
                    command: Sequence[str] | None = None, force: bool = False) -> UninstallResult:
    """Undo gpudoctor's installs in `prefix`: remove what they put there and restore every
    original from the backups, all or nothing. A file changed since the install is kept (and
    its backup and manifest row with it) unless `force`."""
    prefix = Path(prefix).absolute()
    try:
        manifest = system.load_manifest(prefix)
    except Refused as e:
        return UninstallResult(str(prefix), None, error=e.error)
    if manifest is None:
        return UninstallResult(str(prefix), None, error=_no_manifest(prefix))
    try:
        system.require_writable(prefix, system.sudo_line(command, None, prefix, "uninstall"))
    except Refused as e:
        return UninstallResult(str(prefix), manifest.version, error=e.error)
    state = prefix / STATE_DIR
    trash = state / f"trash-{os.getpid()}"
    pending = state / f"manifest-{os.getpid()}.json"
    kept = {} if force else _changed(prefix, manifest)
    tx = Transaction(ops or FileOps())
    removed, restored = [], []
    try:
        for entry in manifest.entries.values():
            if entry.path in kept:
                continue
            dest = prefix / entry.path
            if entry.installed is not None and os.path.lexists(dest):
                tx.move(dest, trash / entry.path)
                removed.append(str(dest))
            if entry.backup is not None:
                tx.move(prefix / entry.backup, dest)
                restored.append(str(dest))
        tx.move(prefix / MANIFEST, trash / "manifest.json")
        if kept:  # what is left stays recorded, so that --force can finish the job
            pending.unlink(missing_ok=True)  # left by a run that was killed
            write_text(pending, _rest(manifest, kept).dump())
            tx.move(pending, prefix / MANIFEST)
    except (OSError, KeyboardInterrupt) as err:
        tx.rollback()
        pending.unlink(missing_ok=True)
        if isinstance(err, KeyboardInterrupt):
            raise
        return UninstallResult(str(prefix), manifest.version,
                               error=system.os_error(err, prefix))
    if kept:
        remove_tree(trash)
    else:
        remove_tree(state)
        prune_empty(state.parent, prefix)
    for d in sorted(manifest.created_dirs, key=len, reverse=True):
        prune_empty(prefix / d, prefix)
    return UninstallResult(str(prefix), manifest.version, tuple(removed), tuple(restored),
                           kept=tuple(kept.values()))


def _changed(prefix: Path, manifest: Manifest) -> dict[str, KeptFile]:
    """The manifest's files whose kind, size or link target is no longer what the install
    recorded, keyed by their path in the manifest."""
    kept = {}
    for entry in manifest.entries.values():
        if entry.installed is None:
            continue
        reason = _difference(entry.installed, describe(prefix / entry.path))
        if reason is not None:
            backup = str(prefix / entry.backup) if entry.backup is not None else None
            kept[entry.path] = KeptFile(str(prefix / entry.path), reason, backup)
    return kept


def _difference(was: dict[str, Any], now: dict[str, Any] | None) -> str | None:
    """How what is at a path now differs from what the install recorded; None: it does not
    (or nothing is there any more: there is nothing to keep)."""
    if now is None:
        return None
    if now["kind"] != was.get("kind"):
        return f"a {now['kind']} now, the install placed a {was.get('kind')}"
    if now["kind"] == "symlink" and now["target"] != was.get("target"):
        return f"links to {now['target']} now, the install placed a link to {was.get('target')}"
    if now["kind"] == "file" and now["size"] != was.get("size"):
        return f"{now['size']} bytes now, the install wrote {was.get('size')}"
    return None


def _rest(manifest: Manifest, kept: dict[str, KeptFile]) -> Manifest:
    """The manifest of what an uninstall kept: only the rows of the kept files."""
    entries = {p: Entry(e.path, e.installed, e.backup)
               for p, e in manifest.entries.items() if p in kept}
    return Manifest(manifest.version, manifest.cuda_build, manifest.tarball, entries,
                    list(manifest.created_dirs), list(manifest.history))


def _no_manifest(prefix: Path) -> ActionError:
    """Nothing of gpudoctor's to undo: say so, and name only cuDNN files that exist."""
    message = f"{prefix / MANIFEST} does not exist: gpudoctor installed no cuDNN into {prefix}"
    patterns, seen = [], set()
    for folder, pattern in (("include", "cudnn*.h"), ("lib64", "libcudnn*"), ("lib", "libcudnn*")):
        where, real = prefix / folder, os.path.realpath(prefix / folder)
        if real not in seen and glob.glob(f"{glob.escape(str(where))}/{pattern}"):
            seen.add(real)  # lib may be a link to lib64: name its files once
            patterns.append(f"{shlex.quote(str(where))}/{pattern}")
    if not patterns:
        return ActionError(f"{message}, and it holds no cuDNN files: there is nothing to undo")
    sudo = "" if os.access(prefix, os.W_OK) else "sudo "
    return ActionError(f"{message}; its cuDNN files were copied by hand or by another tool",
                       f"to remove them by hand: {sudo}rm {' '.join(patterns)}")
