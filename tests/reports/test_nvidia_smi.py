"""nvidia-smi's table and its errors → the driver facts the NVML probe would have recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, GpuFacts, GpuHealth, NvmlFacts, Reason, Status, Unavailable
from gpudoctor.reports import ReportError, read_reports
from tests.reports.report_excerpts import (
    SMI_FAILED,
    SMI_FAILED_CURLY,
    SMI_MISMATCH,
    TABLE_331_GTX680,
    TABLE_460_V100_CUT,
    TABLE_550_A10,
)


def _nvml(env: Environment) -> NvmlFacts:
    assert isinstance(env.nvml, NvmlFacts)
    return env.nvml


def _verdicts(env: Environment) -> dict[str, Status]:
    return {r.check_id: r.finding.status for r in run_checks(env, load_tables(), REGISTRY).results}


def test_driver_550_table() -> None:
    env = read_reports([("gpud", TABLE_550_A10)])
    nvml = _nvml(env)
    assert nvml.driver_version == "550.127.05" and nvml.cuda_driver_version == 12040
    (g,) = nvml.gpus
    assert isinstance(g, GpuFacts)
    assert (g.index, g.name, g.pci_bus_id) == (0, "NVIDIA A10", "00000000:06:00.0")
    assert g.memory_total == 23028 << 20 and g.persistence_mode is True
    assert isinstance(g.mig_mode, Unavailable) and g.mig_mode.reason is Reason.NOT_SUPPORTED
    assert isinstance(g.compute_capability, Unavailable)
    assert isinstance(g.health, GpuHealth) and g.health.ecc_volatile_uncorrectable == 0
    assert env.sources == ("nvidia-smi in gpud",)
    assert isinstance(env.torch, Unavailable) and env.torch.reason is Reason.NOT_REPORTED
    verdicts = _verdicts(env)
    assert verdicts["GD101"] is Status.PASS and verdicts["GD102"] is Status.PASS
    assert verdicts["GD401"] is Status.SKIP  # torch is not in the report


def test_narrow_pre_525_table_cut_off() -> None:
    env = read_reports([("azhpc.out", TABLE_460_V100_CUT)])
    gpus = _nvml(env).gpus
    assert [g.name for g in gpus if isinstance(g, GpuFacts)] == ["Tesla V100-SXM2..."] * 3
    first, _, third = gpus
    assert isinstance(first, GpuFacts) and first.memory_total == 32510 << 20
    assert isinstance(third, GpuFacts) and isinstance(third.memory_total, Unavailable)
    assert env.sources == ("nvidia-smi (cut off) in azhpc.out",)


def test_driver_331_has_no_cuda_version() -> None:
    env = read_reports([("cbio-38", TABLE_331_GTX680)])
    nvml = _nvml(env)
    assert nvml.driver_version == "331.62"
    assert isinstance(nvml.cuda_driver_version, Unavailable)
    assert len(nvml.gpus) == 3
    g = nvml.gpus[2]
    assert isinstance(g, GpuFacts) and g.pci_bus_id == "0000:83:00.0"
    assert isinstance(g.health, GpuHealth) and isinstance(g.health.ecc_mode, Unavailable)


@pytest.mark.parametrize(
    ("text", "reason", "gd101"),
    [
        (SMI_FAILED, Reason.DRIVER_NOT_LOADED, Status.FAIL),
        (SMI_FAILED_CURLY, Reason.DRIVER_NOT_LOADED, Status.FAIL),
        (SMI_MISMATCH, Reason.VERSION_MISMATCH, Status.FAIL),
        # the device nodes' failure (GD502, below): GD101 names it instead of failing too
        ("Failed to initialize NVML: Insufficient Permissions\n", Reason.PERMISSION_DENIED,
         Status.SKIP),
        # the rest are quoted as nvidia-smi prints them; a bare paste says nothing of the
        # machine's GPU, so it is never "no GPU here, nothing needs one"
        ("Failed to initialize NVML: Unknown Error\n", Reason.ERROR, Status.FAIL),
        # no driver tools, and no sign of a GPU: a GPU-less machine reads the same (a warning)
        ("$ nvidia-smi\nbash: nvidia-smi: command not found\n", Reason.NOT_INSTALLED,
         Status.WARN),
    ],
)
def test_errors_map_to_the_probes_reasons(text: str, reason: Reason, gd101: Status) -> None:
    env = read_reports([("issue", text)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is reason
    assert env.sources == ("nvidia-smi (error) in issue",)
    assert _verdicts(env)["GD101"] is gd101
    if reason is Reason.PERMISSION_DENIED:
        assert _verdicts(env)["GD502"] is Status.FAIL


HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout" / "round4" / "reports-C"


@pytest.mark.parametrize(("name", "reason", "failing"), [
    # 'I input "nvidia-smi" command in terminal and got "No devices were found"'
    # (https://github.com/JackHack96/dell-xps-9570-ubuntu-respin/issues/125)
    ("r5-008.md", None, "GD102"),
    # 'when comand line "nvidia-smi" in linux terminal，no devices were found'
    # (https://github.com/clayfreeman/gpu-passthrough/issues/4)
    ("r5-009.md", None, "GD102"),
    # "we often face the `Driver/library version mismatch`" (NVML's string, no prefix;
    # https://github.com/NVIDIA/ubuntu-packaging-nvidia-driver/issues/3)
    ("r5-011.md", Reason.VERSION_MISMATCH, "GD101"),
    # nvidia-docker 1.0: "Error: nvml: Insufficient Permissions"
    # (https://github.com/NVIDIA/nvidia-docker/issues/284)
    ("r5-032.md", Reason.PERMISSION_DENIED, "GD502"),
])
def test_nvidia_smi_errors_quoted_in_prose(name: str, reason: Reason | None,
                                           failing: str) -> None:
    """Real issue bodies (round 4's dev set; each file's thread is in its index.toml) that
    quote nvidia-smi's or NVML's error in a sentence rather than as a line of output."""
    env = read_reports([(name, (HELDOUT / name).read_text(encoding="utf-8"))])
    if reason is None:
        assert isinstance(env.nvml, NvmlFacts) and isinstance(env.nvml.gpus[0], Unavailable)
    else:
        assert isinstance(env.nvml, Unavailable) and env.nvml.reason is reason
    assert _verdicts(env)[failing] is Status.FAIL


@pytest.mark.parametrize("text", [
    "nvidia-smi lists both GPUs; the error is in my data loader, not in 'no devices'\n",
    "Driver/library version\nmismatch is not what I get\n",  # split across lines: not NVML's
    "No devices were found in the inventory export\n",  # not a line of its own, no nvidia-smi
])
def test_prose_that_is_not_an_nvidia_smi_error(text: str) -> None:
    with pytest.raises(ReportError):
        read_reports([("issue", text)])


def test_mismatch_keeps_the_library_version() -> None:
    env = read_reports([("llvm-17614", SMI_MISMATCH)])
    assert isinstance(env.nvml, Unavailable) and "550.144" in (env.nvml.detail or "")


def test_err_row_is_a_failed_gpu() -> None:
    table = TABLE_550_A10.replace("|  0%   32C    P8             21W /  150W |",
                                  "| ERR!  ERR!   ERR!          ERR! /  ERR! |")
    env = read_reports([("lost", table)])
    (g,) = _nvml(env).gpus
    assert isinstance(g, Unavailable) and "ERR!" in g.message
    assert _verdicts(env)["GD102"] is Status.FAIL
