"""`gpudoctor.checks.driver_wanted`: GD101's fix where no driver is installed names the driver
to install (issue 20, advice a machine can follow): the one that runs the installed torch's
CUDA in full (else the toolkit's), by the driver rule; with neither, one that runs the newest
CUDA compiling for the GPUs' architecture, else the newest branch the tables know.
tests/test_closed_advice.py follows it and re-judges."""

from __future__ import annotations

import dataclasses
import re

import tests.checks.envbuilder as B
from gpudoctor.checks import run_checks
from gpudoctor.checks.driver import check_driver_present
from gpudoctor.checks.driver_wanted import wanted
from gpudoctor.compat import load_tables
from gpudoctor.compat.rules import driver_for_cuda
from gpudoctor.model import Environment, Finding, Reason, Status, Unavailable

TABLES = load_tables()
ASKED = re.compile(r"install the NVIDIA driver ≥ (\S+) \(branch R(\d+) or newer: ([^)]*)\)")


def no_driver(**kw: object) -> Environment:
    """A GPU on the PCI bus, no driver (no NVML, no libcuda), torch 2.13.0+cu130."""
    base: dict[str, object] = {
        "nvml": B.NO_NVML, "libcuda": B.NO_LIBCUDA, "torch": B.torch("2.13.0+cu130", "13.0"),
        "host": B.host(pci_gpus=(B.PCI_RTX3090,), dev_nodes=())}
    return B.env(**{**base, **kw})


def gd101(env: Environment) -> Finding:
    (result,) = run_checks(env, TABLES, (check_driver_present,)).results
    return result.finding


def asked(f: Finding) -> tuple[str, str, str]:
    m = ASKED.search(f.fix or "")
    assert m, f.fix
    return m[1], m[2], m[3]


def test_the_driver_torchs_cuda_needs_in_full() -> None:
    f = gd101(no_driver())
    assert f.status is Status.FAIL, f
    need = TABLES.cuda_min_driver("13.0")
    assert need is not None and need.full
    version, branch, why = asked(f)
    assert version == need.full and branch == need.full.split(".")[0]
    assert "torch 2.13.0+cu130's CUDA 13.0 needs it, by the table row release-driver" in why
    assert f"sudo ubuntu-drivers install nvidia:{branch}" in (f.fix or "")
    assert driver_for_cuda(TABLES, version, "13.0").verdict == "full"


def test_an_older_torch_asks_for_an_older_branch() -> None:
    f = gd101(no_driver(torch=B.torch("2.7.1+cu128", "12.8")))
    version, _, why = asked(f)
    need = TABLES.cuda_min_driver("12.8")
    assert need is not None and version == need.full and "CUDA 12.8" in why


def test_without_torch_the_toolkits_cuda_decides() -> None:
    f = gd101(no_driver(torch=Unavailable(Reason.NOT_INSTALLED, "no torch"),
                        toolkits=B.toolkit("12.4")))
    assert f.status is Status.WARN, f
    version, _, why = asked(f)
    need = TABLES.cuda_min_driver("12.4")
    assert need is not None and version == need.full
    assert "the CUDA toolkit's CUDA 12.4 needs it" in why


def test_with_nothing_that_needs_one_the_newest_branch_the_tables_know() -> None:
    f = gd101(no_driver(torch=Unavailable(Reason.NOT_INSTALLED, "no torch"),
                        toolkits=Unavailable(Reason.NOT_INSTALLED, "no toolkit")))
    assert f.status is Status.WARN, f
    version, branch, why = asked(f)
    known = [b for b in TABLES.driver_branches if b.min_driver and b.status != "unverified"]
    newest = max(known, key=lambda b: b.branch)
    assert (version, branch) == (newest.min_driver, str(newest.branch))
    assert "the newest branch the tables know" in why and "no GPU model is known" in why


def test_a_retired_architecture_gets_the_driver_of_its_last_cuda() -> None:
    """A GTX 1080 (sm_61): CUDA 12.9 was the last to compile for Pascal, so the driver that
    runs 12.9 in full, not the newest branch (the GPU is known to the rule from wherever
    `seen_gpus` has it; here NVML's list)."""
    arch = TABLES.gpu_arch("6.1")
    assert arch is not None and arch.last_cuda
    e = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("GTX1080")),
              torch=Unavailable(Reason.NOT_INSTALLED, "no torch"),
              toolkits=Unavailable(Reason.NOT_INSTALLED, "no toolkit"))
    named = wanted(e, TABLES)
    assert named is not None
    need = TABLES.cuda_min_driver(arch.last_cuda)
    assert need is not None and named[0] == need.full
    assert f"the last CUDA for {arch.family} (sm_61)" in named[1]


def test_a_cuda_past_the_tables_says_minor_version_compatibility_only() -> None:
    e = no_driver(torch=B.torch("2.99.0+cu139", "13.9"))
    version, _, why = asked(gd101(e))
    fam = TABLES.cuda_family("13.9")
    assert fam is not None and version == fam.min_driver_linux
    assert "by minor-version compatibility only" in why and "rule minor-version-compatibility" \
        in why


def test_a_container_is_told_to_install_it_on_the_host() -> None:
    f = gd101(no_driver(host=dataclasses.replace(
        B.host(pci_gpus=(B.PCI_RTX3090,), dev_nodes=()), container="docker")))
    assert "install it on the host and start the container with --gpus all" in (f.fix or "")
