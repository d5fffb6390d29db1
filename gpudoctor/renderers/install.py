"""`gpudoctor install-cudnn` / `uninstall-cudnn` results, as text or JSON."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from gpudoctor import schemas
from gpudoctor.renderers.console import Line, print_lines, result_lines
from gpudoctor.renderers.interface import clean, finding_dict
from gpudoctor.renderers.json import dumps
from gpudoctor.snapshot import to_data

if TYPE_CHECKING:
    from gpudoctor.actions.install_cudnn import InstallResult
    from gpudoctor.actions.uninstall_cudnn import UninstallResult

_VERBS = {"create": "create ", "replace": "replace", "update": "update ", "remove": "remove ",
          "unchanged": "keep   "}


def install_json(r: InstallResult) -> str:
    """The result as JSON: the plan, what happened, and the placement checks' findings."""
    data: dict[str, Any] = {
        "schema_version": schemas.version(schemas.INSTALL_CUDNN), "command": "install-cudnn",
        "ok": r.ok, "dry_run": r.dry_run, "error": to_data(r.error), "rolled_back": r.rolled_back,
        "plan": to_data(r.plan), "manifest": r.manifest, "ldconfig": r.ldconfig,
        "checks": [finding_dict(x) for x in (r.report.results if r.report else ())]}
    return dumps(data)


def uninstall_json(r: UninstallResult) -> str:
    """The result as JSON: what was removed and restored."""
    return dumps({"schema_version": schemas.version(schemas.UNINSTALL_CUDNN),
                  "command": "uninstall-cudnn", "ok": r.ok, **to_data(r)})


def render_install(r: InstallResult, console: Console) -> str:
    """The plan (every file on a dry run), what happened, and the placement checks."""
    return print_lines(console, _install_lines(r))


def _install_lines(r: InstallResult) -> list[Line | Text]:
    if r.plan is None:
        why = "rolled back, the prefix is unchanged" if r.rolled_back else "nothing was written"
        return [Text(f"install-cudnn stopped ({why})", style="bold red")]
    p = r.plan
    build = (f"the CUDA {p.cuda_build} build (from {p.cuda_build_from})" if p.cuda_build
             else "CUDA build unknown")
    lines: list[Line | Text] = [
        Text(clean(f"cuDNN {p.version}, {build} → {p.prefix}"), style="bold"),
        Text(clean(f"  tarball   {p.tarball} (compression {p.compression}, layout {p.layout})")),
        Text(clean(f"  toolkit   {'CUDA ' + p.toolkit_cuda if p.toolkit_cuda else 'unknown'}")),
        Text(clean(f"  headers → {p.include_dir}   libraries → {p.lib_dir}   then chmod a+r")),
    ]
    counts = ", ".join(f"{p.count(a)} {a}" for a in _VERBS if p.count(a))
    lines.append(Text(f"  files: {counts}; {p.bytes_to_write / 2**20:.1f} MiB to write"))
    if r.dry_run:
        for f in p.files:
            what = f"-> {f.target}" if f.kind == "symlink" and f.target else (
                f"({f.size} bytes, mode {f.mode:o})" if f.action != "remove" else "(backed up)")
            lines.append((Text(clean(f"    {_VERBS[f.action]} {f.dest} {what}")), False))
    lines += [Text(clean(f"  note: {n}"), style="yellow") for n in p.notes]
    if r.dry_run:
        lines.append(Text("dry run: nothing was written", style="bold"))
        return lines
    lines.append(Text(clean(f"installed; manifest {r.manifest}"), style="bold green"))
    lines.append((Text(clean("  undo: gpudoctor uninstall-cudnn --prefix "
                             f"{shlex.quote(p.prefix)}")), False))
    if r.ldconfig:
        lines.append(Text(clean(f"  ldconfig: {r.ldconfig}")))
    lines.append(Text("placement checks:", style="bold"))
    for x in r.report.results if r.report else ():
        lines += result_lines(x, verbose=False, indent=2)
    return lines


def render_uninstall(r: UninstallResult, console: Console) -> str:
    """What was removed and restored."""
    if r.error is not None:
        lines = [Text("uninstall-cudnn stopped; the prefix is unchanged", style="bold red")]
    else:
        except_kept = (f", except {len(r.kept)} file{'s' if len(r.kept) > 1 else ''} changed "
                       "since the install (kept)" if r.kept else "")
        lines = [Text(clean(f"removed cuDNN {r.version} from {r.prefix}{except_kept}"),
                      style="bold")]
        lines += [Text(clean(f"  removed  {p}")) for p in r.removed if p not in r.restored]
        lines += [Text(clean(f"  restored {p}")) for p in r.restored]
        lines += [Text(clean(f"  kept     {k.path} (changed since the install: {k.reason})"),
                       style="bold yellow") for k in r.kept]
    return print_lines(console, lines)
