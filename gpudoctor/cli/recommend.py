"""`gpudoctor recommend`: the PyTorch wheel and cuDNN tarball the tables say fit this machine."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer

from gpudoctor.cli import common
from gpudoctor.cli.options import (
    CudaHomeOption,
    FormatOption,
    PythonOption,
    TimeoutOption,
    write_output,
)
from gpudoctor.exitcodes import ExitCode
from gpudoctor.recommend import Recommendation, TorchPick
from gpudoctor.renderers.interface import OutputFormat

SCHEMA_VERSION = 1


def render_text(rec: Recommendation, verbose: bool) -> str:
    """The recommendation as text: the machine, the PyTorch line, the cuDNN tarball."""
    lines = ["This machine"]
    lines.append(f"  driver {rec.driver or '(version unknown)'}"
                 + (f", runs CUDA ≤ {rec.driver_cuda}" if rec.driver_cuda else "")
                 if rec.driver or rec.driver_cuda else "  no working NVIDIA driver found")
    lines += [f"  GPU: {g.name} (sm_{g.compute_capability.replace('.', '')})"
              for g in rec.gpus] or [
        "  no GPU seen"]
    if rec.installed_torch:
        fits = {True: "fits this machine", False: "does not fit this machine",
                None: "cannot tell whether it fits"}[rec.installed_fits]
        why = f": {rec.installed_why}" if rec.installed_why else ""
        lines.append(f"  installed torch {rec.installed_torch}: {fits}{why}")
    lines += ["", "PyTorch"]
    if rec.torch:
        lines += [f"  {rec.torch.command}", f"    {_describe(rec.torch)}"]
        if verbose:
            lines.append(f"    source: {rec.torch.source}")
    else:
        lines.append("  nothing in the tables fits")
    if rec.torch_installed_release:
        pick = rec.torch_installed_release
        lines += [f"  to keep torch {pick.version}: {pick.command}", f"    {_describe(pick)}"]
    lines += [f"  note: {note}" for note in rec.notes]
    lines += ["", "cuDNN" + (f" for CUDA {rec.cudnn.toolkit} at {rec.cudnn.prefix}"
                             if rec.cudnn else "")]
    if rec.cudnn:
        c = rec.cudnn
        name = c.tarball or "tarball name not in the tables"
        seen = "" if c.tarball_seen or not c.tarball else " (name by naming scheme)"
        lines.append(f"  cuDNN {c.version}{f' ({c.build})' if c.build else ''}, CUDA {c.cuda_build}"
                     f" build: {name}{seen}" + ("" if c.status in ("verified", "copy")
                                                else f"  [{c.status}]"))
        lines += [f"  {c.command}"] if c.command else []
        lines += [f"    source: {c.source}"] if verbose else []
    lines += [f"  note: {note}" for note in rec.cudnn_notes]
    return "\n".join(lines) + "\n"


def _describe(pick: TorchPick) -> str:
    runs = ("the driver runs it" if pick.runs == "full" else
            f"the driver runs it by minor-version compatibility only (≥ {pick.min_driver} for "
            "the full feature set)")
    arch = ("arch list not in the tables" if pick.arch_list is None else
            f"arch list {' '.join(pick.arch_list)}"
            + (" includes every GPU" if pick.arch_confirmed else ""))
    mark = "" if pick.status in ("verified", "copy") else f"  [{pick.status}]"
    return f"torch {pick.version} {pick.variant} (CUDA {pick.cuda}): {runs}; {arch}{mark}"


def render_json(rec: Recommendation) -> str:
    """The recommendation as JSON: every field of `Recommendation`."""
    return json.dumps({"schema_version": SCHEMA_VERSION, **dataclasses.asdict(rec)}, indent=2,
                      ensure_ascii=False) + "\n"


def recommend(
    fmt: FormatOption = OutputFormat.TEXT,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show sources")] = False,
    from_snapshot: Annotated[
        Path | None,
        typer.Option("--from-snapshot", "--from-json",
                     help="recommend for a saved snapshot instead of this machine"),
    ] = None,
    cuda_home: CudaHomeOption = None,
    python: PythonOption = None,
    timeout: TimeoutOption = 60.0,
    no_torch: Annotated[bool, typer.Option("--no-torch", help="do not probe PyTorch")] = False,
) -> None:
    """the PyTorch install line and cuDNN tarball that fit this machine's driver, GPUs and CUDA"""
    from gpudoctor.compat import load_tables
    from gpudoctor.recommend import recommend as pick

    if fmt not in (OutputFormat.TEXT, OutputFormat.JSON):
        raise typer.BadParameter(f"recommend writes text or json, not {fmt}",
                                 param_hint="--format")
    env = common.environment(from_snapshot, cuda_home, python, timeout, no_torch)
    rec = pick(env, load_tables())
    write_output(render_json(rec) if fmt is OutputFormat.JSON else render_text(rec, verbose), "-")
    raise typer.Exit(ExitCode.OK if rec.torch else ExitCode.FAILURE)
