"""What to install on this machine, by the compat tables: a PyTorch wheel and a cuDNN tarball.

`recommend(env, tables)` is pure. The PyTorch pick, its install line and the notes on it are
`gpudoctor.compat.advice.torch_advice`'s, the one source every install line gpudoctor prints comes
from (see that module for how the wheel is picked and why the line is never a no-op). The cuDNN
pick is the newest verified cuDNN release with a build for the toolkit in use that supports
every GPU, with that build's tarball name. When nothing fits, `notes` say why.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpudoctor import views as V
from gpudoctor.compat import Tables, machine
from gpudoctor.compat.advice import GpuSeen, TorchPick, compute_capabilities, torch_advice
from gpudoctor.compat.query import VERIFIED, build_for, cudnn_tarball
from gpudoctor.model import Environment
from gpudoctor.versions import sm_of

__all__ = ["CudnnPick", "GpuSeen", "Recommendation", "TorchPick", "recommend"]


@dataclass(frozen=True, slots=True)
class CudnnPick:
    """The cuDNN tarball for the toolkit in use."""

    toolkit: str
    prefix: str
    version: str
    build: str | None
    cuda_build: str  # the cuDNN build key that covers the toolkit ("10.1", "12", "11.0-11.8")
    tarball: str | None  # None: the name is not in the tables
    tarball_seen: bool  # the name was seen on NVIDIA's server (else: by the naming scheme)
    command: str | None  # `gpudoctor install-cudnn ...`
    status: str
    source: str


@dataclass(frozen=True, slots=True)
class Recommendation:
    """Everything `gpudoctor recommend` prints."""

    driver: str | None
    driver_cuda: str | None  # highest CUDA the driver runs, and how that was told
    gpus: tuple[GpuSeen, ...]
    installed_torch: str | None
    installed_fits: bool | None  # None: cannot be told from the tables
    installed_why: str | None  # why it does not fit, or why that cannot be told
    torch: TorchPick | None
    torch_installed_release: TorchPick | None  # a variant of the installed release that fits
    notes: tuple[str, ...]
    cudnn: CudnnPick | None
    cudnn_notes: tuple[str, ...]
    # a working driver was seen (NVML or libcuda answered) even where its version is not known
    # (a pasted report that leaves it out): not "no driver"
    driver_loaded: bool = False
    # the installed torch is the pick's own build and fits: nothing to install (the line only
    # reinstalls it)
    nothing_to_install: bool = False


def _pick_cudnn(env: Environment, tables: Tables, ccs: list[str]
                ) -> tuple[CudnnPick | None, list[str]]:
    tk, tv = V.toolkit(env), V.toolkit_version(env)
    if (platform := machine.non_x86(env)) is not None:
        return None, [f"this machine is {platform}: the tables name NVIDIA's Linux x86_64 "
                      "cuDNN tarballs, so gpudoctor names none for it (NVIDIA's archive has "
                      "sbsa builds for Arm servers; a Jetson takes cuDNN from its JetPack)"]
    if tk is None or tv is None:
        why = "no CUDA toolkit found" if tk is None else f"the version of {tk.root} is unreadable"
        return None, [f"{why}: a cuDNN tarball is only needed to build against a toolkit "
                      "(PyTorch wheels bring their own cuDNN)"]
    candidates = [r for r in tables.cudnn_for_cuda(tv)
                  if r.status in VERIFIED and not tables.known_bad_cudnn(r.version)]
    for rel in candidates:
        # the range of the build for this toolkit: Blackwell only in the 12.8+ builds of 9.7+
        support = tables.cudnn_gpu_support(rel.version, tv)
        if ccs and (support is None or not all(support.supports(cc) for cc in ccs)):
            continue
        build = build_for(rel, tv) or tv
        tarball = cudnn_tarball(tables, rel, build)
        command = (f"gpudoctor install-cudnn --tarball {shlex.quote(tarball[0])} --prefix "
                   f"{shlex.quote(tk.root)}"
                   if tarball else None)
        notes = [] if tarball else [f"the tarball name of cuDNN {rel.version} for CUDA {build} "
                                    "is not in the tables"]
        return CudnnPick(tv, tk.root, rel.version, rel.build, build,
                         tarball[0] if tarball else None, bool(tarball and tarball[1]), command,
                         rel.status, rel.source), notes
    if not candidates:
        return None, [f"no verified cuDNN release in the tables has a build for CUDA {tv}"]
    gpus = ", ".join(sm_of(cc) for cc in dict.fromkeys(ccs))
    for rel in reversed(tables.cudnn_releases):
        fits = [s for s in tables.cudnn_support_rows(rel.version)
                if all(s.supports(cc) for cc in ccs)]
        if rel.status in VERIFIED and not tables.known_bad_cudnn(rel.version) and fits:
            builds = [s.cuda for s in fits if s.cuda] if len(fits) > 1 or fits[0].cuda else []
            last = (f"; the newest cuDNN for {gpus} is {rel.version} (CUDA builds "
                    f"{', '.join(builds or rel.cuda_builds)}): use a toolkit it has a build for")
            break
    else:
        last = ""
    return None, [f"no cuDNN release in the tables with a build for CUDA {tv} supports "
                  f"{gpus}{last}"]


def recommend(env: Environment, tables: Tables) -> Recommendation:
    """The torch wheel and the cuDNN tarball the tables say fit this machine; see the module."""
    advice = torch_advice(env, tables)
    cudnn, cudnn_notes = _pick_cudnn(env, tables, compute_capabilities(advice.gpus))
    drv, told = V.driver_version(env), machine.driver_cuda(env, tables)
    return Recommendation(drv, told[0] if told else None, advice.gpus, advice.installed,
                          advice.installed_fits, advice.installed_why, advice.pick,
                          advice.same_release, advice.why, cudnn, tuple(cudnn_notes),
                          driver_loaded=V.driver_present(env),
                          nothing_to_install=advice.reinstall_only
                          and advice.installed_fits is True and advice.blocked is None)
