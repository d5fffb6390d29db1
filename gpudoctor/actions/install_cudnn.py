"""`gpudoctor install-cudnn`: NVIDIA's manual cuDNN copy steps, done so they cannot half-fail.

The steps it automates: unpack the tarball, copy `include/cudnn*.h` to `PREFIX/include` and
`libcudnn*` to `PREFIX/lib64` (or the `lib` directory the prefix uses) keeping the symlinks,
`chmod a+r`. What it adds:

0. the prefix is refused when it is `/` (always) or not a CUDA toolkit (unless `force`);
1. one streaming pass over the tarball validates every member (`actions.tarball`: each tar
   header before its data, each library's ELF headers before its bytes: a program, a file
   that is no shared library, one cut short or, unless `force`, one built for another machine
   is refused) and writes the files into a private staging directory inside the prefix's
   `.gpudoctor/cudnn/` (so that placing them is a `rename`), skipping files already identical
   in the prefix (size, mtime, mode); a member that would not fit in the file system's free
   space (or under `ulimit -f`) is refused before it is written. Every file is written 0o644
   and every directory created 0o755, whatever the tarball's modes or the umask say
   (`transaction.FILE_MODE`, `DIR_MODE`): no setuid, setgid or sticky bit, no group or other
   write;
2. the version is read from the tarball's own header, the CUDA build from its names (else from
   the CUDA libraries its libraries link); a CUDA major other than the toolkit's, or libraries
   for another machine, are refused unless `force`; a tarball without every sub-library of its
   major (the lists are `compat_tables/cudnn.toml` [[layout]]) is refused unless
   `allow_incomplete`;
3. the commit moves every replaced file, and every stale cuDNN file of the same major, into
   `.gpudoctor/cudnn/backup/`, moves the staged files in (real files first, then links, then
   headers) and writes the manifest; any error, Ctrl-C included, rolls every step back;
4. `ldconfig` runs when asked and the library directory is on the system loader path;
5. the placement checks (`checks.cudnn`) run on the prefix; once the commit is done they can
   only advise, so a failing one is reported as a warning.

So an error means the prefix is as it was (the staging directory is scratch space, removed on
every refusal), and no error means it holds the new cuDNN. Everything is returned as data
(`InstallResult`); `cli/install.py` renders it. The undo is `actions.uninstall_cudnn`.
"""

from __future__ import annotations

import errno
import os
import platform
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from gpudoctor import __version__, childproc
from gpudoctor.actions import system
from gpudoctor.actions.preflight import (
    Rules,
    Space,
    check_complete,
    check_cuda,
    check_gpus,
    check_machine,
    machine_gpus,
    require_file,
    require_prefix,
)
from gpudoctor.actions.system import ActionError, Refused
from gpudoctor.actions.tarball import (
    Archive,
    ArchiveError,
    Member,
    Progress,
    Readable,
    Replay,
    Sink,
    SinkError,
    read_archive,
)
from gpudoctor.actions.transaction import (
    FILE_MODE,
    STATE_DIR,
    Entry,
    FileOps,
    Manifest,
    Transaction,
    describe,
    private_dirs,
    prune_empty,
    remove_tree,
    state_dirs,
    write_text,
)
from gpudoctor.policy import advisory
from gpudoctor.probes.cudnn import MANIFEST, cuda_from_ldd, run_ldd, split_library_name

if TYPE_CHECKING:
    from gpudoctor.compat import Tables
    from gpudoctor.model import Report


@dataclass(frozen=True, slots=True)
class PlannedFile:
    """One destination path and what happens to it."""

    dest: str  # absolute
    action: str  # "create", "replace" (original backed up), "update" (ours), "unchanged",
    #              "remove" (stale cuDNN file, backed up)
    kind: str  # "file" or "symlink"
    source: str | None  # member of the tarball; None for "remove"
    size: int = 0
    mode: int = 0  # final permission bits: FILE_MODE, whatever the tarball says
    target: str | None = None


@dataclass(frozen=True, slots=True)
class InstallPlan:
    """What the tarball is and exactly what installing it into the prefix does."""

    tarball: str
    prefix: str
    compression: str
    layout: str
    version: str
    cuda_build: str | None
    cuda_build_from: str | None
    toolkit_cuda: str | None
    include_dir: str
    lib_dir: str
    files: tuple[PlannedFile, ...]
    skipped: tuple[str, ...]  # archive members not installed (LICENSE, …)
    notes: tuple[str, ...]  # things the user should know (unchecked CUDA build, --force, …)
    bytes_to_write: int

    def count(self, action: str) -> int:
        """How many files get this action."""
        return sum(1 for f in self.files if f.action == action)


@dataclass(frozen=True, slots=True)
class InstallResult:
    """What install-cudnn did (or, with dry_run, would do)."""

    dry_run: bool
    plan: InstallPlan | None
    error: ActionError | None = None
    rolled_back: bool = False
    manifest: str | None = None
    ldconfig: str | None = None  # what happened with --ldconfig
    report: Report | None = None  # the placement checks on the prefix

    @property
    def ok(self) -> bool:
        """No error: the prefix holds the new cuDNN (a dry run: it would). The placement checks
        only advise (their findings are warnings at worst)."""
        return self.error is None


def install_cudnn(
    tarball: str | Path,
    prefix: str | Path = "/usr/local/cuda",
    *,
    dry_run: bool = False,
    force: bool = False,
    allow_incomplete: bool = False,
    ldconfig: bool = False,
    progress: Progress | None = None,
    ops: FileOps | None = None,
    tables: Tables | None = None,
    gpus: Sequence[tuple[str, str]] | None = None,
    command: Sequence[str] | None = None,
    ldconfig_argv: Sequence[str] = ("ldconfig",),
    ld_conf: Path = Path("/etc/ld.so.conf"),
) -> InstallResult:
    """Install a cuDNN tarball into a CUDA prefix; see the module docstring.

    `force` installs a CUDA build other than the toolkit's, libraries for another machine, and
    into a directory that is not a CUDA toolkit; `allow_incomplete` a tarball that lacks
    sub-libraries of its major. `ops` replaces the file operations (fault injection in tests);
    `command` is the command line to repeat under sudo when the prefix is not writable;
    `ldconfig_argv` and `ld_conf` are what `ldconfig` runs and which loader configuration says
    where it looks. `gpus` are the (name, compute capability) of the GPUs the cuDNN must support
    (None: the GPUs NVML sees here); one outside the release's support range is refused unless
    `force`.
    """
    from gpudoctor.compat import load_tables

    tarball, prefix = Path(tarball).absolute(), Path(prefix).absolute()
    ops = ops or FileOps()
    sudo = system.sudo_line(command, tarball, prefix)
    rules = Rules(force, allow_incomplete, tables or load_tables(),
                  gpus=tuple(machine_gpus() if gpus is None else gpus))
    try:
        require_file(tarball)
        rules = replace(rules, notes=tuple(require_prefix(prefix, force)))
        toolkit = system.toolkit_version(prefix)
        old = system.load_manifest(prefix)
        if dry_run:
            archive = _read(tarball, None, progress, rules)
            plan = _plan(archive, prefix, toolkit, old, rules)
            Space(prefix).take_all((f.source or f.dest, f.size) for f in plan.files
                                  if f.action in ("create", "replace", "update"))
            try:
                system.require_writable(prefix, sudo)
            except Refused as e:
                plan = replace(plan, notes=(*plan.notes, f"{e.error.message}: {e.error.fix}"))
            return InstallResult(dry_run=True, plan=plan)
        system.require_writable(prefix, sudo)
        return _install(tarball, prefix, toolkit, old, rules, ldconfig, progress, ops,
                        ldconfig_argv, ld_conf)
    except Refused as e:
        return InstallResult(dry_run=dry_run, plan=None, error=e.error)
    except OSError as e:  # before anything was written: a path that cannot even be looked at
        where = e.filename or tarball
        return InstallResult(dry_run=dry_run, plan=None, error=ActionError(
            f"cannot access {where}: {e.strerror or e}",
            f"check the permissions of {where} and its parent directories, or run: {sudo}"))


def _read(tarball: Path, sink: Sink | None, progress: Progress | None, rules: Rules) -> Archive:
    """The archive, validated member by member; a library for another machine than this one
    is refused before it is written, unless `force`."""
    try:
        return read_archive(str(tarball), sink, progress,
                            None if rules.force else platform.machine())
    except ArchiveError as e:
        raise Refused(ActionError(e.message, e.fix)) from None
    except SinkError as e:  # writing a staged file failed: not the tarball's fault
        raise e.error from None
    except OSError as e:
        raise Refused(ActionError(f"cannot read {tarball}: {e.strerror or e}",
                                   "check the path and its permissions")) from None


# --------------------------------------------------------------------------- the plan


def _dest(prefix: Path, m: Member) -> Path:
    return prefix / ("include" if m.role == "header" else system.lib_dir_name(prefix)) / m.basename


def _unchanged(dest: Path, m: Member, body: bytes | None = None) -> bool:
    """Whether dest already is the member: same link target; for a file the same mode and
    size, and the same bytes (headers, which are small and in memory) or mtime (libraries)."""
    try:
        st = dest.lstat()
    except OSError:
        return False
    if m.kind == "symlink":
        return dest.is_symlink() and os.readlink(dest) == m.target
    if dest.is_symlink() or st.st_size != m.size or st.st_mode & 0o7777 != FILE_MODE:
        return False
    if body is None:
        return int(st.st_mtime) == m.mtime
    try:
        return dest.read_bytes() == body
    except OSError:
        return False


def _plan(archive: Archive, prefix: Path, toolkit: str | None, old: Manifest | None,
          rules: Rules) -> InstallPlan:
    files: list[PlannedFile] = []
    ours = old.entries if old else {}
    new_names: set[str] = set()
    for m in archive.installable:
        dest = _dest(prefix, m)
        new_names.add(str(dest))
        rel = str(dest.relative_to(prefix))
        action = ("unchanged" if _unchanged(dest, m, archive.body(m)) else "update" if rel in ours
                  else "replace" if os.path.lexists(dest) else "create")
        files.append(PlannedFile(str(dest), action, m.kind, m.name, m.size,
                                 FILE_MODE if m.kind == "file" else 0, m.target))
    files.extend(_stale(archive, prefix, new_names))
    notes = [*rules.notes, *check_complete(archive, rules),
             *check_machine(archive, rules.force), *check_cuda(archive, toolkit, rules.force),
             *check_gpus(archive, toolkit, rules)]
    if archive.name_version and not archive.name_version.startswith(archive.version):
        notes.append(f"the file name says cuDNN {archive.name_version} but its header says "
                     f"{archive.version}; the header is taken")
    order = {"remove": 0, "file": 1, "symlink": 2}
    files.sort(key=lambda f: (f.action == "remove", "include/" in f.dest,
                              order[f.kind] if f.action != "remove" else 0))
    return InstallPlan(
        tarball=archive.path, prefix=str(prefix), compression=archive.compression,
        layout=archive.layout, version=archive.version, cuda_build=archive.cuda_build,
        cuda_build_from=archive.cuda_build_from, toolkit_cuda=toolkit,
        include_dir=str(prefix / "include"), lib_dir=str(prefix / system.lib_dir_name(prefix)),
        files=tuple(files),
        skipped=tuple(m.name for m in archive.members if m.role == "other" and m.kind != "dir"),
        notes=tuple(notes),
        bytes_to_write=sum(f.size for f in files if f.action in ("create", "replace", "update")),
    )


def _stale(archive: Archive, prefix: Path, new: set[str]) -> list[PlannedFile]:
    """Existing cuDNN files the new install does not replace: every header, and the libraries
    of the same major (another major's libraries may serve other programs: they stay)."""
    major = archive.version.split(".")[0]
    found: list[PlannedFile] = []
    for folder, pattern in (("include", "cudnn*.h"), (system.lib_dir_name(prefix), "libcudnn*")):
        for p in sorted((prefix / folder).glob(pattern)):
            if str(p) in new or (folder != "include" and _major_of(p.name) != major):
                continue
            kind = "symlink" if p.is_symlink() else "file"
            found.append(PlannedFile(str(p), "remove", kind, None))
    return found


def _major_of(name: str) -> str | None:
    parts = split_library_name(name)
    if parts and parts[1]:
        return parts[1].split(".")[0]
    if name.endswith(".a") and "_v" in name:
        return name.rsplit("_v", 1)[1].split(".")[0]
    return None


# --------------------------------------------------------------------------- install


class _Stager:
    """The sink of the tarball pass: writes what must change into the staging directory."""

    def __init__(self, prefix: Path, staging: Path, ops: FileOps, space: Space) -> None:
        self.prefix, self.staging, self.ops, self.space = prefix, staging, ops, space

    def __call__(self, m: Member, stream: Readable | None) -> None:
        dest = _dest(self.prefix, m)
        if _unchanged(dest, m, stream.whole if isinstance(stream, Replay) else None):
            return
        self.space.take(m.name, m.size)
        out = self.staging / str(dest.relative_to(self.prefix))
        private_dirs(out.parent, self.staging)
        if m.kind == "symlink":
            self.ops.symlink(m.target or "", out)
        elif stream is not None:
            self.ops.write(out, stream, FILE_MODE, m.mtime, m.size)


def _install(tarball: Path, prefix: Path, toolkit: str | None, old: Manifest | None,
             rules: Rules, ldconfig: bool, progress: Progress | None, ops: FileOps,
             ldconfig_argv: Sequence[str], ld_conf: Path) -> InstallResult:
    state = prefix / STATE_DIR
    tx = Transaction(ops)
    staging = state / f"staging-{os.getpid()}"
    try:
        space = Space(prefix)
        state_dirs(state, prefix)
        remove_tree(staging)
        private_dirs(staging, state)
        archive = _read(tarball, _Stager(prefix, staging, ops, space), progress, rules)
        if archive.cuda_build is None:
            archive = _cuda_from_libraries(archive, staging, prefix)
        plan = _plan(archive, prefix, toolkit, old, rules)
        manifest = _commit(plan, prefix, staging, old, tx)
    except BaseException as e:  # Ctrl-C, or a bug: the prefix is restored, then it goes on
        changed = bool(tx.journal)
        problems = tx.rollback()
        remove_tree(staging)
        remove_tree(state / f"trash-{os.getpid()}")
        prune_empty(state, prefix)
        if not isinstance(e, (Refused, OSError)):
            raise
        error = e.error if isinstance(e, Refused) else system.os_error(e, prefix)
        if isinstance(e, OSError) and e.errno == errno.EFBIG:
            error = replace(error, fix="raise the file-size limit (ulimit -f unlimited) and run "
                            "the same command again")
        if problems:
            error = replace(error, message=error.message + "; rollback incomplete: "
                            + "; ".join(problems))
        return InstallResult(dry_run=False, plan=None, error=error, rolled_back=changed)
    try:  # committed: an interrupt from here on must not read as "rolled back"
        remove_tree(staging)
        remove_tree(state / f"trash-{os.getpid()}")
        ran = system.run_ldconfig(Path(plan.lib_dir), ldconfig_argv, ld_conf) if ldconfig else None
        report = advisory(system.verify(prefix, rules.tables))
    except KeyboardInterrupt as e:  # exit 0 all the same: the prefix holds the new cuDNN
        raise childproc.interrupt_with(
            e, f"cuDNN {plan.version} installed; interrupted during the post-install checks "
            f"(nothing was rolled back: {prefix} holds the new cuDNN, manifest {manifest}); "
            f"check it: gpudoctor check cudnn --cuda-home {shlex.quote(str(prefix))}; undo: "
            f"gpudoctor uninstall-cudnn --prefix {shlex.quote(str(prefix))}",
            exit_code=0) from e
    return InstallResult(dry_run=False, plan=plan, manifest=str(manifest), ldconfig=ran,
                         report=report)


def _cuda_from_libraries(archive: Archive, staging: Path, prefix: Path) -> Archive:
    """The CUDA major of the libraries the cuDNN libraries link (staged, or already in place)."""
    libs = []
    for m in archive.installable:
        if m.role == "library" and m.kind == "file" and split_library_name(m.basename):
            dest = _dest(prefix, m)
            staged = staging / str(dest.relative_to(prefix))
            libs.append(staged if staged.exists() else dest)
    out = run_ldd(libs, dict(os.environ))
    build = cuda_from_ldd(out) if isinstance(out, str) else None
    if build is None:
        return archive
    return replace(archive, cuda_build=build, cuda_build_from="the CUDA libraries it links")


def _commit(plan: InstallPlan, prefix: Path, staging: Path, old: Manifest | None,
            tx: Transaction) -> Path:
    state = prefix / STATE_DIR
    trash = state / f"trash-{os.getpid()}"
    if old is not None and all(f.action == "unchanged" for f in plan.files):
        return prefix / MANIFEST  # a re-run with nothing to do changes nothing, not even this
    manifest = old or Manifest(plan.version, plan.cuda_build, "", {}, [])
    for folder in (Path(plan.include_dir), Path(plan.lib_dir)):
        if not folder.exists():
            tx.mkdirs(folder)
            manifest.created_dirs.append(str(folder.relative_to(prefix)))
    for f in plan.files:
        if f.action == "unchanged":
            continue
        dest = Path(f.dest)
        rel = str(dest.relative_to(prefix))
        entry = manifest.entries.get(rel)
        now = describe(dest)
        if entry is not None and now is not None and entry.installed != now:
            raise Refused(ActionError(f"{dest} changed since gpudoctor installed it",
                                       "run `gpudoctor uninstall-cudnn --prefix "
                                       f"{shlex.quote(str(prefix))}` "
                                       "first, or move the file away"))
        if now is not None:
            if entry is not None:
                tx.move(dest, trash / rel)
            else:
                entry = Entry(rel, None, f"{STATE_DIR}/backup/{rel}")
                tx.move(dest, prefix / entry.backup)  # type: ignore[operator]
        entry = entry or Entry(rel, None, None)
        if f.action != "remove":
            tx.move(staging / rel, dest)
        entry.installed = describe(dest)
        manifest.entries[rel] = entry
        if entry.installed is None and entry.backup is None:
            del manifest.entries[rel]
    manifest.version, manifest.cuda_build = plan.version, plan.cuda_build
    manifest.tarball = Path(plan.tarball).name
    manifest.history.append({"version": plan.version, "tarball": manifest.tarball,
                             "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                             "by": f"gpudoctor {__version__}"})
    path = prefix / MANIFEST
    if path.exists():
        tx.move(path, trash / "manifest.json")
    tmp = staging / "manifest.json"
    write_text(tmp, manifest.dump())
    tx.move(tmp, path)
    return path
