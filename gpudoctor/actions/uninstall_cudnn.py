"""`gpudoctor uninstall-cudnn`: undo gpudoctor's cuDNN installs in a prefix, from the manifest.

Every path the installs touched is put back as it was: what they placed is removed, what they
replaced or removed comes back from `.gpudoctor/cudnn/backup/`, directories they created go when
empty. All or nothing, like the install.
"""

from __future__ import annotations

import glob
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpudoctor.actions import system
from gpudoctor.actions.system import ActionError, Refused
from gpudoctor.actions.transaction import (
    STATE_DIR,
    FileOps,
    Transaction,
    prune_empty,
    remove_tree,
)
from gpudoctor.probes.cudnn import MANIFEST


@dataclass(frozen=True, slots=True)
class UninstallResult:
    """What uninstall-cudnn restored."""

    prefix: str
    version: str | None  # the cuDNN the manifest recorded
    removed: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()
    error: ActionError | None = None

    @property
    def ok(self) -> bool:
        """No error."""
        return self.error is None


def uninstall_cudnn(prefix: str | Path = "/usr/local/cuda", *, ops: FileOps | None = None,
                    command: Sequence[str] | None = None) -> UninstallResult:
    """Undo gpudoctor's installs in `prefix`: remove what they put there and restore every
    original from the backups, all or nothing."""
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
    tx = Transaction(ops or FileOps())
    removed, restored = [], []
    try:
        for entry in manifest.entries.values():
            dest = prefix / entry.path
            if entry.installed is not None and os.path.lexists(dest):
                tx.move(dest, trash / entry.path)
                removed.append(str(dest))
            if entry.backup is not None:
                tx.move(prefix / entry.backup, dest)
                restored.append(str(dest))
        tx.move(prefix / MANIFEST, trash / "manifest.json")
    except (OSError, KeyboardInterrupt) as err:
        tx.rollback()
        if isinstance(err, KeyboardInterrupt):
            raise
        return UninstallResult(str(prefix), manifest.version,
                               error=system.os_error(err, prefix))
    remove_tree(state)
    prune_empty(state.parent, prefix)
    for d in sorted(manifest.created_dirs, key=len, reverse=True):
        prune_empty(prefix / d, prefix)
    return UninstallResult(str(prefix), manifest.version, tuple(removed), tuple(restored))


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
