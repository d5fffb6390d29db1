"""The kernel module's messages quoted in a paste → the driver facts they state, and the
verdicts: each text is a real one (its thread is named beside it in report_excerpts.py, or in
round 4's index.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Reason, Status, Unavailable
from gpudoctor.reports import kernel_log
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports import report_excerpts as E
from tests.reports.reading_kit import statuses

HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout" / "round4" / "reports-C"


@pytest.mark.parametrize(("text", "client", "module"), [
    (E.NVRM_API_MISMATCH_SYSLOG, "535.54.03", "530.30.02"),
    (E.NVRM_API_MISMATCH_CLIENT, "595.84", "595.80"),
    (E.NVRM_API_MISMATCH_STAMPED, "570.148.08", "570.148.06"),
])
def test_api_mismatch_is_the_driver_mismatch(text: str, client: str, module: str) -> None:
    env = read_reports([("dmesg", text)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.VERSION_MISMATCH
    assert f"({client})" in env.nvml.message and f"({module})" in env.nvml.message
    assert env.sources == ("the kernel log in dmesg",)
    assert statuses(env)["GD101"] is Status.FAIL


@pytest.mark.parametrize(("text", "bus"), [
    (E.NVRM_INIT_FAILED, "00000000:98:00.0"),
    (E.NVRM_INIT_FAILED_OLD, None),
])
def test_init_failure_is_a_gpu_that_did_not_come_up(text: str, bus: str | None) -> None:
    env = read_reports([("dmesg", text)])
    assert isinstance(env.nvml, NvmlFacts)
    (gpu,) = env.nvml.gpus
    assert isinstance(gpu, Unavailable) and "RmInitAdapter" in gpu.message
    assert (bus or "a GPU") in gpu.message
    verdicts = statuses(env)
    assert verdicts["GD102"] is Status.FAIL
    assert verdicts["GD101"] is Status.PASS  # the module is loaded: it printed this


def test_fallen_off_the_bus_as_a_monitor_words_it() -> None:
    """gpud's "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00" and NVML's
    ERROR_GPU_IS_LOST (https://github.com/leptonai/gpud/issues/604: round 4's r5-034)."""
    env = read_reports([("r5-034.md", (HELDOUT / "r5-034.md").read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts)
    (gpu,) = env.nvml.gpus
    assert isinstance(gpu, Unavailable) and "00000000:AE:00.0" in gpu.message
    assert statuses(env)["GD102"] is Status.FAIL


def test_fallen_off_the_bus_wrapped_without_an_xid() -> None:
    """The wording newer drivers print without an Xid line, wrapped over three lines
    (https://github.com/NVIDIA/NVSentinel/issues/155)."""
    text = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.\n"
            "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    partial = kernel_log.parse(text)
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    (gpu,) = partial.nvml.gpus
    assert isinstance(gpu, Unavailable) and "00000000:B3:00.0" in gpu.message


def test_a_table_beside_the_log_wins() -> None:
    """nvidia-smi's table states the driver and every GPU; the log's one GPU does not replace
    it (the merge takes one view of the driver, the best-ranked)."""
    env = read_reports([("issue", E.TABLE_550_A10 + "\n" + E.NVRM_INIT_FAILED)])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "550.127.05"


@pytest.mark.parametrize("text", [
    # other Xids say what happened once, not what the machine is now
    "[ 1234.5] NVRM: Xid (PCI:0000:01:00): 13, pid=1234, Graphics SM Warp Exception\n",
    "[ 1234.5] NVRM: Xid (PCI:0000:01:00): 31, pid=1234, Ch 00000010, intr 10000000. MMU Fault\n",
    # the words without the message: a question, a changelog line
    "Does an API mismatch between the client and the module matter?\n",
    "fix(xid): detect fallen-off-bus logs as XID 79\n",
])
def test_what_is_not_read(text: str) -> None:
    assert kernel_log.parse(text) is None
    with pytest.raises(ReportError):
        read_reports([("issue", text)])


@pytest.mark.parametrize(("text", "mismatch"), [
    # round 21's r45-017 (tensorflow/tensorflow, its template's CUDA/cuDNN line)
    ("- CUDA/cuDNN version: libcuda reported version is: 450.142.0 kernel reported version is: "
     "450.66.0", ("450.142.0", "450.66.0")),
    # TensorFlow's log lines and its verdict
    ("I cuda_diagnostics.cc:176] libcuda reported version is: 535.129.3\n"
     "I cuda_diagnostics.cc:180] kernel reported version is: 535.104.5\n"
     "E cuda_diagnostics.cc:313] kernel version 535.104.5 does not match DSO version "
     "535.129.3 -- cannot find working devices in this configuration",
     ("535.129.3", "535.104.5")),
    # the same release, written with TensorFlow's padded third part: no mismatch
    ("libcuda reported version is: 450.66.0\nkernel reported version is: 450.66", None),
    ("kernel reported version is: 450.66.0", None),
])
def test_tensorflows_cuda_diagnostics(text: str, mismatch: tuple[str, str] | None) -> None:
    part = kernel_log.parse(text)
    if mismatch is None:
        assert part is None
        return
    assert part is not None and isinstance(part.nvml, Unavailable)
    assert part.nvml.reason is Reason.VERSION_MISMATCH
    assert f"library ({mismatch[0]}) and kernel module ({mismatch[1]})" in part.nvml.message


def test_tensorflows_diagnostics_with_a_version_past_ints_limit_are_not_read() -> None:
    # hostile: 5,000 digits made int() raise (exit 3, "internal error")
    text = f"libcuda reported version is: {'9' * 5000}.1\nkernel reported version is: 450.66.0"
    assert kernel_log.parse(text) is None
