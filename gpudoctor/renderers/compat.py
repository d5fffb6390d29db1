"""`gpudoctor compat` answers and `gpudoctor recommend` recommendations, as text or JSON.

The text follows the rule of `gpudoctor.renderers.console`: every line starts with text of
gpudoctor's own (an install command with `$ `, since it may start with the path of a
snapshot's interpreter), and every string from a snapshot is shown escaped on one line."""

from __future__ import annotations

import dataclasses

from gpudoctor import schemas
from gpudoctor.compat.advice import ONLY_REINSTALLS
from gpudoctor.compat.query import Answer
from gpudoctor.compat.recommend import Recommendation, TorchPick
from gpudoctor.renderers.interface import clean
from gpudoctor.renderers.json import dumps
from gpudoctor.versions import sm_of


def _text(lines: list[str]) -> str:
    return "\n".join(clean(line).rstrip() for line in lines) + "\n"


def answer_text(answer: Answer, verbose: bool) -> str:
    """The answer as indented text; rows that are not verified say their status."""
    lines = [answer.subject]
    for section in answer.sections:
        lines += ["", section.title]
        for row in section.rows:
            lines.append(f"  {row.text}" + ("" if row.verified else f"  [{row.status}]"))
            if verbose:
                lines.append(f"      source: {row.source}")
                lines += [f"      note: {row.note}"] if row.note else []
        if section.note:
            lines.append(f"  ({section.note})")
        elif not section.rows:
            lines.append("  none in the tables")
    return _text(lines)


def answer_json(answer: Answer) -> str:
    """The answer as a JSON document (`Answer.to_dict`)."""
    return dumps(answer.to_dict())


def recommendation_text(rec: Recommendation, verbose: bool) -> str:
    """The recommendation as text: the machine, the PyTorch line, the cuDNN tarball."""
    lines = ["This machine"]
    lines.append(f"  driver {rec.driver or '(version unknown)'}"
                 + (f", runs CUDA ≤ {rec.driver_cuda}" if rec.driver_cuda else "")
                 if rec.driver or rec.driver_cuda or rec.driver_loaded
                 else "  no working NVIDIA driver found")
    lines += [f"  GPU: {g.name} ({sm_of(g.compute_capability)})"
              for g in rec.gpus] or ["  no GPU seen"]
    if rec.installed_torch:
        fits = {True: "fits this machine", False: "does not fit this machine",
                None: "cannot tell whether it fits"}[rec.installed_fits]
        why = f": {rec.installed_why}" if rec.installed_why else ""
        lines.append(f"  installed torch {rec.installed_torch}: {fits}{why}")
    lines += ["", "PyTorch"]
    if rec.torch and rec.nothing_to_install:
        lines += [f"  nothing to install: the installed torch {rec.installed_torch} is this "
                  "pick, and it fits", f"    {_describe(rec.torch)}",
                  f"  to reinstall it anyway: {rec.torch.command}"]
    elif rec.torch:
        lines += [f"  $ {rec.torch.command}", f"    {_describe(rec.torch)}"]
        if verbose:
            lines.append(f"    source: {rec.torch.source}")
    else:
        lines.append("  nothing in the tables fits")
    if rec.torch_installed_release:
        pick = rec.torch_installed_release
        lines += [f"  to keep torch {pick.version}: {pick.command}", f"    {_describe(pick)}"]
    lines += [f"  note: {note}" for note in rec.notes
              if not (rec.nothing_to_install and note.endswith(ONLY_REINSTALLS))]
    lines += ["", "cuDNN" + (f" for CUDA {rec.cudnn.toolkit} at {rec.cudnn.prefix}"
                             if rec.cudnn else "")]
    if rec.cudnn:
        c = rec.cudnn
        name = c.tarball or "tarball name not in the tables"
        seen = "" if c.tarball_seen or not c.tarball else " (name by naming scheme)"
        lines.append(f"  cuDNN {c.version}{f' ({c.build})' if c.build else ''}, CUDA {c.cuda_build}"
                     f" build: {name}{seen}" + ("" if c.status in ("verified", "copy")
                                                else f"  [{c.status}]"))
        lines += [f"  $ {c.command}"] if c.command else []
        lines += [f"    source: {c.source}"] if verbose else []
    lines += [f"  note: {note}" for note in rec.cudnn_notes]
    return _text(lines)


def _describe(pick: TorchPick) -> str:
    runs = ("the driver runs it" if pick.runs == "full" else
            f"it needs an NVIDIA driver ≥ {pick.min_driver or '?'}" if pick.runs == "no-driver"
            else f"the driver runs it by minor-version compatibility only (≥ {pick.min_driver} "
            "for the full feature set)")
    arch = ("arch list not in the tables" if pick.arch_list is None else
            f"arch list {' '.join(pick.arch_list)}"
            + (" includes every GPU" if pick.arch_confirmed else ""))
    mark = "" if pick.status in ("verified", "copy") else f"  [{pick.status}]"
    return f"torch {pick.version} {pick.variant} (CUDA {pick.cuda}): {runs}; {arch}{mark}"


def recommendation_json(rec: Recommendation) -> str:
    """The recommendation as JSON: every field of `Recommendation`."""
    return dumps({"schema_version": schemas.version(schemas.RECOMMEND), **dataclasses.asdict(rec)})
