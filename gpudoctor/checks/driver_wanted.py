"""The driver GD101 asks a machine without one to install, named by the compat rules.

The driver that runs the installed torch's CUDA in full (else the toolkit's), by the driver
rule (`gpudoctor.compat.rules.driver_for_cuda`): the release's own row, else the first driver
of the oldest branch that reports it, else the CUDA major's floor (minor-version compatibility
only, and the fix says so). With neither, one that runs the newest CUDA compiling for the GPUs'
architecture (a retired one's last CUDA), else the newest driver branch the tables know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import Version

from gpudoctor import views as V
from gpudoctor.compat import machine
from gpudoctor.compat.rows import UNVERIFIED
from gpudoctor.compat.rules import driver_for_cuda
from gpudoctor.model import Environment
from gpudoctor.versions import minor_key

if TYPE_CHECKING:
    from gpudoctor.compat import Tables

DRIVER_URL = "https://www.nvidia.com/en-us/drivers/"


def install_driver(env: Environment, tables: Tables) -> str:
    """GD101's fix where no driver is installed: the driver to install, named (`wanted`)."""
    named = wanted(env, tables)
    if named is None:
        what, ubuntu = "the NVIDIA driver for your GPU", "sudo ubuntu-drivers install"
    else:
        version, why = named
        branch = version.split(".")[0]
        what = f"the NVIDIA driver ≥ {version} (branch R{branch} or newer: {why}) for your GPU"
        ubuntu = f"sudo ubuntu-drivers install nvidia:{branch}"
    return (f"install {what} ({DRIVER_URL}; on Ubuntu: {ubuntu}), then reboot; in a container, "
            "install it on the host and start the container with --gpus all (NVIDIA Container "
            "Toolkit)")


def wanted(env: Environment, tables: Tables) -> tuple[str, str] | None:
    """The driver to install, and why: the one that runs torch's CUDA in full (else the
    toolkit's), by the driver rule (`compat.rules.driver_for_cuda`); with neither, the one that
    runs the newest CUDA compiling for the GPUs' arch (the oldest GPU's, where they differ),
    else the newest driver branch the tables know. None: the tables cannot name one."""
    for cuda, whose in ((V.torch_cuda(env), V.torch_name(env)),
                        (V.toolkit_version(env), "the CUDA toolkit")):
        if cuda and (found := _driver_for_cuda(tables, cuda)):
            return found[0], (f"{whose}'s CUDA {cuda} needs it, by the {found[1]}"
                              if found[2] else f"it runs {whose}'s CUDA {cuda} by minor-version "
                              f"compatibility only, by the {found[1]}; the tables know no driver "
                              "that runs it in full")
    lasts = [(a.last_cuda, f"the last CUDA for {a.family} (sm_{a.cc.replace('.', '')})")
             for g in machine.seen_gpus(env, tables) if isinstance(g.cc, str)
             and (a := tables.gpu_arch(g.cc)) is not None and a.last_cuda]
    if lasts:  # an architecture NVIDIA retired: a driver of its last CUDA, not the newest
        cuda, why = min(lasts, key=lambda c: minor_key(c[0]) or (0, 0))
        if (found := _driver_for_cuda(tables, cuda)):
            return found[0], f"it runs CUDA {cuda}, {why}, by the {found[1]}"
    branches = [b for b in tables.driver_branches if b.min_driver and b.status != UNVERIFIED]
    if not branches:
        return None
    newest = max(branches, key=lambda b: b.branch)
    known = any(isinstance(g.cc, str) for g in machine.seen_gpus(env, tables))
    seen = "the GPUs' architecture" if known else "no GPU model is known"
    return str(newest.min_driver), (f"the newest branch the tables know, CUDA {newest.cuda}; "
                                    f"{seen}")


def _driver_for_cuda(tables: Tables, cuda: str) -> tuple[str, str, bool] | None:
    """The lowest driver the driver rule says runs CUDA `cuda` in full: the release's own row,
    else the first driver of the oldest branch that reports it; else the family floor (by
    minor-version compatibility only). With the row or rule that says so, and whether in full.
    None: none known."""
    need = tables.cuda_min_driver(cuda)
    candidates = [need.full] if need and need.full and need.status != UNVERIFIED else []
    key = minor_key(cuda)
    candidates += sorted((str(b.min_driver) for b in tables.driver_branches
                          if b.min_driver and b.status != UNVERIFIED and key
                          and (minor_key(b.cuda) or (0, 0)) >= key), key=Version)[:1]
    fam = tables.cuda_family(cuda)
    if fam is not None and fam.status != UNVERIFIED:
        candidates.append(fam.min_driver_linux)
    for driver in candidates:
        ruling = driver_for_cuda(tables, driver, cuda)
        if ruling.verdict != "full":  # a branch row: the CUDA its drivers report decides
            told = driver_for_cuda(tables, driver, cuda, tables.cuda_for_driver(driver))
            ruling = told if told.verdict == "full" else ruling
        if ruling.verdict in ("full", "mvc"):
            label = "table row" if ruling.by_row else "rule"
            return driver, f"{label} {ruling.rule.name}", ruling.verdict == "full"
    return None
