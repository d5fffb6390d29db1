"""nvidia-smi's table and its errors → the driver facts the NVML probe would have recorded; the
real reports of each class (issue 20) read and judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import (
    GpuFacts,
    GpuHealth,
    NvmlFacts,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.nvidia_smi import bus_id
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports.reading_kit import (
    FIXTURES,
    HELDOUT_A,
    heldout_a,
    judged,
    nvml_of,
    read_path,
    statuses,
)
from tests.reports.report_excerpts import (
    SMI_FAILED,
    SMI_FAILED_CURLY,
    SMI_MISMATCH,
    TABLE_331_GTX680,
    TABLE_460_V100_CUT,
    TABLE_550_A10,
)


def test_driver_550_table() -> None:
    env = read_reports([("gpud", TABLE_550_A10)])
    nvml = nvml_of(env)
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
    verdicts = statuses(env)
    assert verdicts["GD101"] is Status.PASS and verdicts["GD102"] is Status.PASS
    assert verdicts["GD401"] is Status.SKIP  # torch is not in the report


def test_narrow_pre_525_table_cut_off() -> None:
    env = read_reports([("azhpc.out", TABLE_460_V100_CUT)])
    gpus = nvml_of(env).gpus
    assert [g.name for g in gpus if isinstance(g, GpuFacts)] == ["Tesla V100-SXM2..."] * 3
    first, _, third = gpus
    assert isinstance(first, GpuFacts) and first.memory_total == 32510 << 20
    assert isinstance(third, GpuFacts) and isinstance(third.memory_total, Unavailable)
    assert env.sources == ("nvidia-smi (cut off) in azhpc.out",)


def test_driver_331_has_no_cuda_version() -> None:
    env = read_reports([("cbio-38", TABLE_331_GTX680)])
    nvml = nvml_of(env)
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
    assert statuses(env)["GD101"] is gd101
    if reason is Reason.PERMISSION_DENIED:
        assert statuses(env)["GD502"] is Status.FAIL


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
    assert statuses(env)[failing] is Status.FAIL


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
    (g,) = nvml_of(env).gpus
    assert isinstance(g, Unavailable) and "ERR!" in g.message
    assert statuses(env)["GD102"] is Status.FAIL


@pytest.mark.parametrize("row", [
    "| N/A   51C    P0              N/A / ERR! |",  # round 23's r50-010: an MX150's power cap
    "| N/A   29C    P0             ERR! / 150W |",  # Azure/azhpc-diagnostics#77: "transient"
    "| ERR!  32C    P8             21W /  150W |",  # a fan's speed (open-gpu-kernel-modules#1193)
])
def test_err_in_one_sensor_beside_its_temperature_is_no_failed_gpu(row: str) -> None:
    """One query failing (a notebook GPU's power cap, a fan) while the GPU reads its
    temperature and memory: the GPU answers NVML."""
    table = TABLE_550_A10.replace("|  0%   32C    P8             21W /  150W |", row)
    assert table != TABLE_550_A10
    env = read_reports([("sensor", table)])
    (g,) = nvml_of(env).gpus
    assert not isinstance(g, Unavailable)
    assert statuses(env)["GD102"] is Status.PASS


@pytest.mark.parametrize("name", ["r2-047.txt", "r2-053.txt"])
def test_r610_header_kmd_and_cuda_umd_versions(name: str) -> None:
    """R610's banner: "NVIDIA-SMI 610.43.03  KMD Version: 610.43.03  CUDA UMD Version: 13.3"
    (projectbluefin/finpilot#160; r2-053 another R610 paste). Refused before ("no report
    recognised")."""
    env = heldout_a(name)
    nvml = nvml_of(env)
    assert (nvml.driver_version, nvml.cuda_driver_version) == ("610.43.03", 13030)
    found = judged(env)
    assert {found[c].status for c in ("GD101", "GD102", "GD110")} == {Status.PASS}


@pytest.mark.parametrize(("name", "bus", "why"), [
    ("r2-005.md", "0000:0B:00.0", "Unknown Error"),  # the paste is only this line
    ("r2-007.md", "0000:B1:00.0", "Unknown Error"),  # Windows: "Unable to detect …"
    ("r2-008.md", "0000:07:00.0", "Unknown Error"),
    ("r2-012.md", "0000:02:00.0", "GPU is lost"),  # quoted in bold prose
    ("r2-064.md", "0000:01:00.0", "GPU is lost"),  # a log repeating it for every query
])
def test_device_handle_failure_alone_is_a_lost_gpu(name: str, bus: str, why: str) -> None:
    """"Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error" is all
    nvidia-smi printed: NVML started (the driver is loaded) and that GPU does not answer.
    Refused before."""
    env = heldout_a(name)
    (gpu,) = nvml_of(env).gpus  # once, however often the log repeats it
    assert isinstance(gpu, Unavailable) and bus in gpu.message and why in gpu.message
    found = judged(env)
    assert found["GD101"].status is Status.PASS
    assert found["GD102"].status is Status.FAIL and bus in found["GD102"].message


def test_no_devices_found_is_a_driver_without_a_gpu() -> None:
    """`nvidia-smi` → "No devices were found" with NVRM's RmInitAdapter failure in the kernel
    log (NVIDIA/open-gpu-kernel-modules#862, an explain fixture): the driver is loaded, no GPU
    came up. It was a driver failure (GD101) before."""
    path = FIXTURES / "heldout" / "round3" / "explain-A" / "g1-098.txt"
    found = judged(read_path(path))
    assert found["GD101"].status is Status.PASS
    assert found["GD102"].status is Status.FAIL
    assert "No devices were found" in found["GD102"].message


def test_corrupted_inforom_warning_fails_that_gpu() -> None:
    """"WARNING: infoROM is corrupted at gpu 0008:00:00.0" after an 8x V100 table
    (Azure/azhpc-diagnostics sample): GPU 7 (bus 00000008:00:00.0) has failed; the rest pass."""
    env = heldout_a("r2-075.txt")
    gpus = nvml_of(env).gpus
    assert [i for i, g in enumerate(gpus) if isinstance(g, Unavailable)] == [7]
    found = judged(env)
    assert found["GD102"].status is Status.FAIL and "infoROM" in found["GD102"].message
    assert found["GD101"].status is Status.PASS


def test_err_in_the_mig_cell_is_no_failed_gpu_but_err_in_its_rows_is() -> None:
    """ERR! in the MIG M. cell (a 450 tool on a 418 driver, rapidsai-csp-utils#34) is no GPU
    failure; ERR! in the name, fan and power cells (r2-065) is one."""
    assert judged(heldout_a("r1-035.md"))["GD102"].status is Status.PASS
    found = judged(heldout_a("r2-065.txt"))
    assert found["GD102"].status is Status.FAIL and "ERR!" in found["GD102"].message


def test_compute_mode_and_processes_from_the_table() -> None:
    """A whole pre-450 table (microsoft/pai#1396): Compute M. "Default" and one cntk process
    holding 489 MiB of 15245 MiB. GD110 skipped and GD113 skipped before."""
    env = heldout_a("r2-041.txt")
    (gpu,) = nvml_of(env).gpus
    assert isinstance(gpu, GpuFacts) and gpu.compute_mode == "Default"
    assert isinstance(gpu.health, GpuHealth) and isinstance(gpu.health.processes, tuple)
    ((pid, name, used, kind),) = [(p.pid, p.name, p.used_memory, p.kind)
                                  for p in gpu.health.processes]
    assert (pid, name, used, kind) == (23534, "cntk", 489 << 20, "C")
    found = judged(env)
    assert found["GD110"].status is Status.PASS
    assert found["GD113"].status is Status.WARN and found["GD113"].severity is Severity.INFO


def test_no_running_processes_and_a_cut_process_list() -> None:
    """"No running processes found" (tensorflow#8877, R346) is a fact: no process holds a GPU.
    A table cut inside the process list (xmr-stak-nvidia#39) states none."""
    found = judged(heldout_a("r2-077.txt"))
    assert found["GD113"].status is Status.PASS and found["GD110"].status is Status.PASS
    (gpu,) = nvml_of(heldout_a("r2-014.txt")).gpus
    assert isinstance(gpu, GpuFacts) and isinstance(gpu.health, GpuHealth)
    assert isinstance(gpu.health.processes, Unavailable)
    assert gpu.health.processes.reason is Reason.NOT_REPORTED


def test_nvidia_smi_from_another_release_than_the_driver() -> None:
    """Colab: "NVIDIA-SMI 450.66  Driver Version: 418.67" (rapidsai-csp-utils#34): the image's
    nvidia-smi over the host's driver. Passed silently before."""
    found = judged(heldout_a("r1-035.md"))["GD101"]
    assert found.status is Status.WARN and "450.66" in found.message


@pytest.mark.parametrize("path", [
    HELDOUT_A / "r2-037.txt",  # NVIDIA-SMI 555.52.01, Driver Version 555.99 (WSL#11277)
    FIXTURES / "reports" / "nvidia_smi-wsl2-rtx3090-516.94.txt",  # 515.65.01 / 516.94
    FIXTURES / "reports" / "issue_body-wsl2-nvidia-smi-cuda-version-err.md",  # 545.46 / 546.80
])
def test_wsl_pairs_linux_tools_with_the_windows_driver(path: Path) -> None:
    """On WSL the banner shows the Windows driver's number beside the Linux tools: no flag."""
    env = read_path(path)
    assert isinstance(nvml_of(env).smi_version, str)
    assert judged(env)["GD101"].status is Status.PASS


def test_bus_ids_read_as_the_table_prints_them() -> None:
    assert bus_id("0008:00:00.0") == "00000008:00:00.0"  # a warning's 4-digit domain
    assert bus_id("0000:ae:00") == "00000000:AE:00.0"  # the kernel log's, without function
    assert bus_id("01:00.0") == "00000000:01:00.0"  # lspci's, without domain


# round 6's r11-028 (https://github.com/bigstack-oss/cubecos/issues/312): a table whose banner
# and column heads the paste cut off, starting at its third heading line
ROWS_ONLY = """\
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA RTX PRO 6000 Blac...    On  |   00000000:42:00.0 Off |                    0 |
| N/A   30C    P8             39W /  600W |       0MiB /  97887MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   2  NVIDIA RTX PRO 6000 Blac...    On  |   00000001:04:00.0 Off |                   On |
| N/A   31C    P8             39W /  600W |     287MiB /  97887MiB |     N/A      Default |
|                                         |                        |              Enabled |
+-----------------------------------------+------------------------+--------
"""


def test_a_table_without_its_banner_gives_its_gpu_rows() -> None:
    env = read_reports([("paste", ROWS_ONLY)])
    assert env.sources == ("nvidia-smi (its rows) (cut off) in paste",)
    assert isinstance(env.nvml, NvmlFacts)
    assert isinstance(env.nvml.driver_version, Unavailable)  # cut off with the banner
    gpus = [g for g in env.nvml.gpus if isinstance(g, GpuFacts)]
    assert [(g.index, g.pci_bus_id, g.mig_mode) for g in gpus] == [
        (0, "00000000:42:00.0", False), (2, "00000001:04:00.0", True)]
    assert statuses(env)["GD101"] is Status.PASS  # nvidia-smi printed the rows


def test_the_rows_of_a_whole_table_are_no_second_table() -> None:
    whole = [p for p in sorted((FIXTURES / "reports").glob("*smi*"))
             if "NVIDIA-SMI" in p.read_text(encoding="utf-8")]
    assert len(whole) >= 3
    for path in whole:
        sources = read_path(path).sources
        assert not any("its rows" in s for s in sources), (path.name, sources)


def test_nvidia_smis_no_devices_quoted_in_a_scripts_trace() -> None:
    # round 6's r11-005 (https://github.com/pytorch/pytorch/issues/163658): bash's xtrace of
    # a CI script that stored nvidia-smi's answer
    text = ("nvidia-smi --query-gpu=driver_version --format=csv,noheader --id=0\n"
            "+ INSTALLED_DRIVER_VERSION='No devices were found'\n")
    assert statuses(read_reports([("ci.log", text)]))["GD102"] is Status.FAIL
    with pytest.raises(ReportError):  # other words, or other casing, in prose: not nvidia-smi's
        read_reports([("prose", "the scanner said 'no devices were found' again\n")])


_HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout"


@pytest.mark.parametrize("path", [
    # https://github.com/nicehash/NiceHashMiner/issues/1695: a .NET wrapper's
    # "NVML power get failed with status: GPUIsLost"
    "round9/reports-H/r20-027.md",
    # Slurm's "error: NVML: Failed to get usage(15): GPU is lost" (nvmlErrorString's words)
    "round7/reports-F/r14-029.md",
])
def test_nvml_reporting_a_gpu_lost_fails_gd102(path: str) -> None:
    env = read_path(_HELDOUT / path)
    status = statuses(env)
    assert (status["GD101"], status["GD102"]) == (Status.PASS, Status.FAIL)


def test_nvidia_smi_s_failure_retyped_is_read() -> None:
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/388: "NVIDIA SMI has failed
    # because it could not communicate with the NVIDIA driver" (no hyphen, "could not")
    env = read_path(_HELDOUT / "round9" / "reports-H" / "r20-019.md")
    assert statuses(env)["GD101"] is Status.FAIL


def test_a_lost_gpu_whose_bus_id_was_retyped_short_is_still_read() -> None:
    """Round 3's r2-006 (a GPU disconnected): "GPU 000:BA:80.0", its domain cut to 3 digits, was
    refused; nvidia-smi's line is read with any domain of 1-8 digits, as explain reads it."""
    env = read_reports([("r2-006", "Unable to determine the device handle for GPU 000:BA:80.0: "
                                   "Unknown Error\n")])
    found = statuses(env)
    assert (found["GD101"], found["GD102"]) == (Status.PASS, Status.FAIL)


HELDOUT_M = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round14" / "reports-M"


@pytest.mark.parametrize(("name", "reason", "failing"), [
    # NVIDIA/nvidia-docker#1547 (round 14's r31-020): docker's hook, "nvidia-container-cli:
    # initialization error: nvml error: insufficient permissions: unknown"
    ("r31-020.md", Reason.PERMISSION_DENIED, "GD502"),
    # NVIDIA/gpu-operator#898 (r32-033): the validator's container, "… nvml error:
    # driver/library version mismatch: unknown"
    ("r32-033.md", Reason.VERSION_MISMATCH, "GD101"),
])
def test_nvml_errors_as_the_container_cli_lower_cases_them(name: str, reason: Reason,
                                                           failing: str) -> None:
    """nvidia-container-cli initialises NVML on the host and prints NVML's string lower-cased:
    the host driver's state, read as nvidia-smi's words for it are."""
    env = read_reports([(name, (HELDOUT_M / name).read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is reason
    assert statuses(env)[failing] is Status.FAIL


def test_nvmls_driver_not_loaded_and_a_lost_gpu_quoted_without_its_bus_id() -> None:
    """Round 19's r41-020: the container toolkit's hook "nvidia-container-cli: initialization
    error: nvml error: driver not loaded" (NVML on the host: its module is not loaded, GD101
    fails); r41-029: "GPU is lost. Please reboot to recover the gpu" quoted alone (GD102
    fails). Both were refused ("no report recognised")."""
    base = Path(__file__).parents[1] / "fixtures" / "heldout" / "round19" / "reports-R"
    hook = read_reports([("r41-020.md", (base / "r41-020.md").read_text(encoding="utf-8"))])
    assert statuses(hook)["GD101"] is Status.FAIL
    lost = read_reports([("r41-029.md", (base / "r41-029.md").read_text(encoding="utf-8"))])
    assert statuses(lost)["GD102"] is Status.FAIL


def test_tensorflows_kernel_and_dso_versions_that_differ_are_a_mismatch() -> None:
    """Round 19's r41-007: TensorFlow's issue template filled with its CUDA diagnostics'
    "kernel version 460.91.3 does not match DSO version 470.57.2 -- cannot find working
    devices in this configuration": the module and libcuda are different releases (GD101
    fails; the report was refused)."""
    base = Path(__file__).parents[1] / "fixtures" / "heldout" / "round19" / "reports-R"
    env = read_reports([("r41-007.md", (base / "r41-007.md").read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.VERSION_MISMATCH
    assert statuses(env)["GD101"] is Status.FAIL


@pytest.mark.parametrize("name", ["r42-022.md", "r42-023.md"])
def test_a_kubernetes_probe_that_found_no_devices(name: str) -> None:
    """Round 19's OpenShift nodes (a V100 and an A100 on the PCI bus): the GPU operator's
    driver pod "Startup probe failed: No devices were found" (its probe runs nvidia-smi): the
    driver is loaded and brought up no GPU, GD102 fails (it skipped: no nvidia-smi output)."""
    base = Path(__file__).parents[1] / "fixtures" / "heldout" / "round19" / "reports-R"
    env = read_reports([(name, (base / name).read_text(encoding="utf-8"))])
    assert statuses(env)["GD102"] is Status.FAIL
