"""`gpudoctor install-cudnn` and `gpudoctor uninstall-cudnn`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group, RenderableType
from rich.text import Text

from gpudoctor.actions.install_cudnn import InstallResult
from gpudoctor.actions.install_cudnn import install_cudnn as run_install
from gpudoctor.actions.tarball import Progress
from gpudoctor.actions.uninstall_cudnn import UninstallResult
from gpudoctor.actions.uninstall_cudnn import uninstall_cudnn as run_uninstall
from gpudoctor.cli.common import fail_usage
from gpudoctor.cli.options import FormatOption, stderr_console, stdout_console
from gpudoctor.exitcodes import ExitCode
from gpudoctor.model import SCHEMA_VERSION, Status
from gpudoctor.renderers.console import SYMBOLS
from gpudoctor.renderers.interface import OutputFormat
from gpudoctor.snapshot import to_data

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
        "--force", help="install even when the tarball's CUDA build differs from the toolkit")
    ] = False,
    ldconfig: Annotated[bool, typer.Option(
        "--ldconfig", help="run ldconfig afterwards (when the prefix is on the loader path)")
    ] = False,
    fmt: FormatOption = OutputFormat.TEXT,
) -> None:
    """install a cuDNN tarball into a CUDA toolkit: symlinks kept, a+r, all or nothing"""
    _text_or_json(fmt)
    err = stderr_console()
    with _progress(err, tarball, enabled=err.is_terminal) as progress:
        result = run_install(tarball, prefix, dry_run=dry_run, force=force, ldconfig=ldconfig,
                             progress=progress, command=sys.argv)
    if fmt is OutputFormat.JSON:
        _print_json(_install_json(result))
    else:
        _print(render_install(result))
    if result.error is not None:
        _one_line(err, result.error.message, result.error.fix)
    raise typer.Exit(ExitCode.OK if result.ok else ExitCode.FAILURE)


def uninstall_cudnn(
    prefix: PrefixOption = Path("/usr/local/cuda"),
    fmt: FormatOption = OutputFormat.TEXT,
) -> None:
    """restore a CUDA toolkit to its state before gpudoctor install-cudnn"""
    _text_or_json(fmt)
    result = run_uninstall(prefix, command=sys.argv)
    if fmt is OutputFormat.JSON:
        _print_json({"schema_version": SCHEMA_VERSION, "command": "uninstall-cudnn",
                     "ok": result.ok, **to_data(result)})
    else:
        _print(render_uninstall(result))
    if result.error is not None:
        _one_line(stderr_console(), result.error.message, result.error.fix)
    raise typer.Exit(ExitCode.OK if result.ok else ExitCode.FAILURE)


def _text_or_json(fmt: OutputFormat) -> None:
    if fmt not in (OutputFormat.TEXT, OutputFormat.JSON):
        raise fail_usage(f"this command writes text or json, not {fmt}")


def _one_line(err: Console, message: str, fix: str | None) -> None:
    err.print(f"gpudoctor: error: {message}" + (f" (fix: {fix})" if fix else ""),
              markup=False, soft_wrap=True)


@contextmanager
def _progress(console: Console, tarball: Path, enabled: bool) -> Iterator[Progress | None]:
    if not enabled or tarball.stat().st_size < _BAR_FROM:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    with Bar("reading {task.description}", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
             console=console, transient=True) as bar:
        task = bar.add_task(tarball.name, total=tarball.stat().st_size)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _print(renderable: RenderableType) -> None:
    stdout_console().print(renderable, markup=False, highlight=False, soft_wrap=True)


def _print_json(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


# --------------------------------------------------------------------------- rendering


def _install_json(r: InstallResult) -> dict[str, Any]:
    checks = [{"id": x.check_id, "slug": x.slug, "title": x.title,
               "status": str(x.finding.status), "message": x.finding.message,
               "fix": x.finding.fix} for x in (r.report.results if r.report else ())]
    return {"schema_version": SCHEMA_VERSION, "command": "install-cudnn", "ok": r.ok,
            "dry_run": r.dry_run, "error": to_data(r.error), "rolled_back": r.rolled_back,
            "plan": to_data(r.plan), "manifest": r.manifest, "ldconfig": r.ldconfig,
            "checks": checks}


_VERBS = {"create": "create ", "replace": "replace", "update": "update ", "remove": "remove ",
          "unchanged": "keep   "}


def render_install(r: InstallResult) -> RenderableType:
    """The plan (every file on a dry run), what happened, and the placement checks."""
    if r.plan is None:
        why = "rolled back, the prefix is unchanged" if r.rolled_back else "nothing was written"
        return Text(f"install-cudnn stopped ({why})", style="bold red")
    p = r.plan
    build = (f"the CUDA {p.cuda_build} build (from {p.cuda_build_from})" if p.cuda_build
             else "CUDA build unknown")
    lines: list[RenderableType] = [
        Text(f"cuDNN {p.version}, {build} → {p.prefix}", style="bold"),
        Text(f"  tarball   {p.tarball} (compression {p.compression}, layout {p.layout})"),
        Text(f"  toolkit   {'CUDA ' + p.toolkit_cuda if p.toolkit_cuda else 'version unknown'}"),
        Text(f"  headers → {p.include_dir}   libraries → {p.lib_dir}   then chmod a+r"),
    ]
    counts = ", ".join(f"{p.count(a)} {a}" for a in _VERBS if p.count(a))
    lines.append(Text(f"  files: {counts}; {p.bytes_to_write / 2**20:.1f} MiB to write"))
    if r.dry_run:
        for f in p.files:
            what = f"-> {f.target}" if f.kind == "symlink" and f.target else (
                f"({f.size} bytes, mode {f.mode:o})" if f.action != "remove" else "(backed up)")
            lines.append(Text(f"    {_VERBS[f.action]} {f.dest} {what}"))
    lines += [Text(f"  note: {n}", style="yellow") for n in p.notes]
    if r.dry_run:
        lines.append(Text("dry run: nothing was written", style="bold"))
        return Group(*lines)
    lines.append(Text(f"installed; manifest {r.manifest} (undo: gpudoctor uninstall-cudnn "
                      f"--prefix {p.prefix})", style="bold green"))
    if r.ldconfig:
        lines.append(Text(f"  ldconfig: {r.ldconfig}"))
    lines.append(Text("placement checks:", style="bold"))
    for x in r.report.results if r.report else ():
        sym, style = SYMBOLS[x.finding.status]
        lines.append(Text.assemble(("  ", ""), (f"{sym} ", style), (f"{x.check_id} ", "dim"),
                                   f"{x.title}: {x.finding.message}"))
        if x.finding.fix and x.finding.status in (Status.FAIL, Status.WARN):
            lines.append(Text(f"      → fix: {x.finding.fix}"))
    return Group(*lines)


def render_uninstall(r: UninstallResult) -> RenderableType:
    """What was removed and restored."""
    if r.error is not None:
        return Text("uninstall-cudnn stopped; the prefix is unchanged", style="bold red")
    lines: list[RenderableType] = [Text(f"removed cuDNN {r.version} from {r.prefix}",
                                        style="bold")]
    lines += [Text(f"  removed  {p}") for p in r.removed if p not in r.restored]
    lines += [Text(f"  restored {p}") for p in r.restored]
    return Group(*lines)
