"""What the cuDNN actions ask of the machine: permissions, the prefix's toolkit, ldconfig, and
the placement checks that end an install."""

from __future__ import annotations

import glob
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from gpudoctor import __version__, childproc
from gpudoctor.actions.transaction import STATE_DIR, Manifest
from gpudoctor.linux import library_dirs
from gpudoctor.model import Environment, Reason, ToolkitFacts, ToolkitsFacts, Unavailable
from gpudoctor.probes.cudnn import MANIFEST, probe_cudnn_at
from gpudoctor.probes.interface import Deps
from gpudoctor.probes.toolkit import probe_toolkits

if TYPE_CHECKING:
    from gpudoctor.compat import Tables
    from gpudoctor.model import Report

_NOWHERE = Path("/nonexistent/gpudoctor")  # a root with nothing: only --cuda-home is looked at


@dataclass(frozen=True, slots=True)
class ActionError:
    """Why an action stopped: one line naming the thing, and the fix."""

    message: str
    fix: str | None = None


class Refused(Exception):
    """An action stops before (or rolls back) any change; carries the ActionError."""

    def __init__(self, error: ActionError) -> None:
        super().__init__(error.message)
        self.error = error


def sudo_line(command: Sequence[str] | None, tarball: Path | None, prefix: Path,
              verb: str = "install") -> str:
    """The command to repeat as root: the user's own, else `python -m gpudoctor …`."""
    if not command:
        command = [sys.executable, "-m", "gpudoctor", f"{verb}-cudnn",
                   *(["--tarball", str(tarball)] if tarball else []), "--prefix", str(prefix)]
    return "sudo " + shlex.join(command)


def require_writable(prefix: Path, sudo: str) -> None:
    """Raise Refused, with the sudo line, unless every directory an install writes is writable."""
    if not prefix.is_dir():
        raise Refused(ActionError(f"{prefix} does not exist or is not a directory",
                                  "pass the CUDA toolkit's directory as --prefix (e.g. "
                                  "/usr/local/cuda), or create it first"))
    for d in (prefix, prefix / "include", prefix / "lib64", prefix / "lib", prefix / STATE_DIR):
        if not d.is_dir() or os.access(d, os.W_OK | os.X_OK):
            continue
        if _read_only(d):
            raise Refused(ActionError(f"{d} is on a read-only file system",
                                      "remount it read-write, or install into another --prefix"))
        raise Refused(ActionError(f"cannot write to {d}: permission denied", f"run: {sudo}"))


def _read_only(d: Path) -> bool:
    try:
        return bool(os.statvfs(d).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def toolkit(prefix: Path) -> ToolkitFacts | None:
    """The CUDA toolkit at prefix, as the toolkit probe reads it; None when it is not one."""
    facts = probe_toolkits(Deps(environ={}, root=_NOWHERE, cuda_home=str(prefix)))
    if not isinstance(facts, ToolkitsFacts):
        return None
    return next((t for t in facts.toolkits if t.root == str(prefix)), None)


def toolkit_version(prefix: Path) -> str | None:
    """"12.4" for the toolkit at prefix; None when it has no readable version."""
    tk = toolkit(prefix)
    return tk.version if tk and isinstance(tk.version, str) else None


def verify(prefix: Path, tables: Tables | None) -> Report:
    """Probe the prefix's cuDNN and run the cuDNN placement checks on it."""
    from gpudoctor.checks import cudnn, cudnn_builds, run_checks
    from gpudoctor.compat import load_tables

    skipped = Unavailable(Reason.SKIPPED, "not probed by install-cudnn")
    tk = toolkit(prefix)
    env = Environment(
        gpudoctor_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        host=skipped, nvml=skipped, libcuda=skipped, torch=skipped,
        toolkits=ToolkitsFacts((tk,)) if tk else Unavailable(
            Reason.NOT_INSTALLED, f"{prefix} is not a CUDA toolkit"),
        cudnn=probe_cudnn_at(str(prefix), Deps(cuda_home=str(prefix))),
    )
    return run_checks(env, tables or load_tables(), cudnn.CHECKS + cudnn_builds.CHECKS)


def loader_dirs(conf: Path, depth: int = 0) -> list[str]:
    """Directories in an ld.so.conf, following `include` lines, plus the trusted ones."""
    dirs: list[str] = [] if depth else list(library_dirs(platform.machine()))
    try:
        lines = conf.read_text().splitlines()
    except OSError:
        return dirs
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include") and depth < 5:
            pattern = line.split(None, 1)[1] if " " in line else ""
            if pattern and not pattern.startswith("/"):
                pattern = str(conf.parent / pattern)
            for inc in sorted(glob.glob(pattern)):
                dirs.extend(loader_dirs(Path(inc), depth + 1))
        elif line:
            dirs.append(line)
    return dirs


def run_ldconfig(lib_dir: Path, argv: Sequence[str], conf: Path) -> str:
    """Run ldconfig when lib_dir is on the system loader path; say what happened."""
    known = {os.path.realpath(d) for d in loader_dirs(conf)}
    if os.path.realpath(lib_dir) not in known:
        return (f"not run: {lib_dir} is not on the system loader path ({conf}); to add it: "
                f"echo {shlex.quote(str(lib_dir))} | sudo tee /etc/ld.so.conf.d/cudnn.conf && "
                "sudo ldconfig")
    try:
        result = childproc.run(list(argv), 120.0)
    except childproc.ChildTimeout:
        return f"{shlex.join(argv)} did not finish within 120 s"
    except OSError as e:
        return f"{shlex.join(argv)} could not run: {e.strerror or e}"
    said = (result.stderr or result.stdout).strip()
    status = "ran" if result.returncode == 0 else f"exited {result.returncode}:"
    return f"{status} {shlex.join(argv)}" + (f"; it said: {said[-1000:]}" if said else "")


def lib_dir_name(prefix: Path) -> str:
    """The library directory the prefix uses: lib64, else lib (lib64 when it has neither)."""
    for name in ("lib64", "lib"):
        if (prefix / name).is_dir():
            return name
    return "lib64"


def load_manifest(prefix: Path) -> Manifest | None:
    """The manifest of gpudoctor's installs in prefix; None when there is none."""
    path = prefix / MANIFEST
    if not path.exists():
        return None
    try:
        return Manifest.load(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Refused(ActionError(f"{path} is unreadable or damaged ({e})",
                                   f"inspect {prefix / STATE_DIR}; move it away to start "
                                   "over (its backup/ holds the files it replaced)")) from None


def os_error(e: OSError, prefix: Path) -> ActionError:
    """An OSError midway, after the rollback, as one line and its fix."""
    where = e.filename or prefix
    what = os.strerror(e.errno) if e.errno else str(e)
    return ActionError(f"changing {prefix} failed at {where}: {what}; every change was "
                       "rolled back, the prefix is as it was",
                       "free some space and run the same command again" if e.errno == 28
                       else "fix the cause above and run the same command again")
