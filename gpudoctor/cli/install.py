"""`gpudoctor install-cudnn` and `gpudoctor uninstall-cudnn`."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Annotated

import typer

from gpudoctor.actions.install_cudnn import install_cudnn as run_install
from gpudoctor.actions.uninstall_cudnn import uninstall_cudnn as run_uninstall
from gpudoctor.cli.options import (
    TEXT_JSON,
    DebugOption,
    format_option,
    resolve_format,
    stderr_console,
    stdout_console,
)
from gpudoctor.cli.output import deliver, say
from gpudoctor.exitcodes import ExitCode
from gpudoctor.renderers import Renderings, render
from gpudoctor.renderers.install import (
    install_json,
    render_install,
    render_uninstall,
    uninstall_json,
)
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.renderers.progress import byte_progress

FORMATS = TEXT_JSON
FormatOption = Annotated[OutputFormat | None, format_option(FORMATS)]

_BAR_FROM = 64 << 20  # a progress bar for tarballs larger than this

PrefixOption = Annotated[
    Path,
    typer.Option("--prefix", help="CUDA toolkit to install into", exists=True, file_okay=False,
                 envvar="GPUDOCTOR_CUDA_HOME"),
]


def install_cudnn(
    tarball: Annotated[Path, typer.Option(
        "--tarball", "-t", help="the cuDNN tarball downloaded from NVIDIA", exists=True,
        dir_okay=False, show_default=False)],
    prefix: PrefixOption = Path("/usr/local/cuda"),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the plan, write nothing")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="install even when the tarball's CUDA build (or machine) differs from "
        "the toolkit's, or the prefix is not a CUDA toolkit")
    ] = False,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete", help="install a tarball that lacks sub-libraries of its major")
    ] = False,
    ldconfig: Annotated[bool, typer.Option(
        "--ldconfig", help="run ldconfig afterwards (when the prefix is on the loader path)")
    ] = False,
    fmt: FormatOption = None,
    debug: DebugOption = False,
) -> None:
    """install a cuDNN tarball into a CUDA toolkit: symlinks kept, a+r, all or nothing

    \b
    Exit 0: installed (or, with --dry-run, the plan printed); 1: refused or failed, and the
    prefix is as it was; 2: usage error.

    \b
    examples:
      gpudoctor install-cudnn -t cudnn-10.1-linux-x64-v7.6.5.32.tgz --dry-run
      sudo gpudoctor install-cudnn -t cudnn-10.1-linux-x64-v7.6.5.32.tgz --prefix /usr/local/cuda
      gpudoctor install-cudnn -t cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz \\
          --prefix ~/cuda-12.4 --format json
    """
    fmt = resolve_format(fmt, FORMATS)
    size = _regular_file_size(tarball)
    err = stderr_console()
    with byte_progress(err, tarball.name, size, err.is_terminal and size >= _BAR_FROM) as progress:
        result = run_install(tarball, prefix, dry_run=dry_run, force=force,
                             allow_incomplete=allow_incomplete, ldconfig=ldconfig,
                             progress=progress, command=sys.argv)
    deliver(render(fmt, Renderings(text=lambda: render_install(result, stdout_console()),
                                   json=lambda: install_json(result))), "-", fmt)
    if result.error is not None:
        _one_line(result.error.message, result.error.fix)
    raise typer.Exit(ExitCode.OK if result.ok else ExitCode.FAILURE)


def uninstall_cudnn(
    prefix: PrefixOption = Path("/usr/local/cuda"),
    force: Annotated[bool, typer.Option(
        "--force", help="remove the files changed since the install too, and restore the "
        "originals over them")
    ] = False,
    fmt: FormatOption = None,
    debug: DebugOption = False,
) -> None:
    """restore a CUDA toolkit to its state before gpudoctor install-cudnn

    \b
    A file changed since the install (its size, kind or link target) is kept in place, with its
    backup and its manifest row; everything else is undone. --force removes those files too.

    \b
    Exit 0: restored; 1: nothing to undo or it failed (the prefix is as it was), or files
    changed since the install were kept (everything else undone; --force finishes the job);
    2: usage error.

    \b
    examples:
      sudo gpudoctor uninstall-cudnn --prefix /usr/local/cuda
      gpudoctor uninstall-cudnn --prefix ~/cuda-12.4 --format json
    """
    fmt = resolve_format(fmt, FORMATS)
    result = run_uninstall(prefix, command=sys.argv, force=force)
    deliver(render(fmt, Renderings(text=lambda: render_uninstall(result, stdout_console()),
                                   json=lambda: uninstall_json(result))), "-", fmt)
    if result.error is not None:
        _one_line(result.error.message, result.error.fix)
    for kept in result.kept:
        say(f"gpudoctor: error: kept {kept.path}: changed since gpudoctor installed it "
            f"({kept.reason}); remove it too: gpudoctor uninstall-cudnn --prefix "
            f"{shlex.quote(result.prefix)} --force")
    raise typer.Exit(ExitCode.OK if result.ok else ExitCode.FAILURE)


def _regular_file_size(tarball: Path) -> int:
    """The tarball's size; anything but a readable regular file (a device such as /dev/null or
    /dev/zero, a FIFO, `<(...)`, a socket, an unreadable file) is a usage error (exit 2),
    before anything is read or written. typer has already refused a missing path and a
    directory, also with exit 2."""
    from gpudoctor.cli.common import fail_usage

    try:
        st = tarball.stat()
    except OSError as e:
        raise fail_usage(f"--tarball {tarball}: cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise fail_usage(f"--tarball {tarball}: {_kind(st.st_mode)}, not a tarball file; pass "
                         "the path of the downloaded cuDNN tarball")
    if not os.access(tarball, os.R_OK):
        raise fail_usage(f"--tarball {tarball}: permission denied; make it readable, or run "
                         "as a user who can read it")
    return st.st_size


def _kind(mode: int) -> str:
    """'a character device', 'a FIFO (pipe)', … for a file that is not regular."""
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO (pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def _one_line(message: str, fix: str | None) -> None:
    say(f"gpudoctor: error: {message}" + (f" (fix: {fix})" if fix else ""))
