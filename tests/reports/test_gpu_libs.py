"""CuPy's show_config and Numba's `numba -s` → the driver they state. Real reports: round 21's
set T (development data since it was scored; each file's index entry has its thread), and
passages cut or changed from them where a case needs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import GpuFacts, LibcudaFacts, NvmlFacts, Status, ToolkitsFacts
from gpudoctor.reports import gpu_libs
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

T = Path(__file__).parents[1] / "fixtures" / "heldout" / "round21" / "reports-T"


def _env(name: str, text: str | None = None):
    return read_reports([(name, text if text is not None else (T / name).read_text("utf-8"))])


def test_cupys_devices_and_driver_cuda() -> None:
    # r45-025: CuPy 9.5.0, "CUDA Driver Version : 11040", "Device 0 Name : NVIDIA TITAN V",
    # "Device 0 Compute Capability : 70"
    env = _env("r45-025.txt")
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.binding == "CuPy's show_config, as it reached the GPUs"
    assert env.nvml.cuda_driver_version == 11040
    gpus = [g for g in env.nvml.gpus if isinstance(g, GpuFacts)]
    assert [(g.name, g.compute_capability) for g in gpus] == [("NVIDIA TITAN V", "7.0")]
    assert statuses(env)["GD101"] is Status.PASS


def test_cupys_driver_version_alone_is_libcudas_view() -> None:
    # r45-002: CuPy 7.0.0rc1 lists no device; "CUDA Driver Version : 9020" is what
    # cudaDriverGetVersion answered: libcuda is there (as the live probe's libcuda view)
    env = _env("r45-002.txt")
    assert isinstance(env.libcuda, LibcudaFacts)
    assert env.libcuda.cuda_driver_version == 9020
    assert statuses(env)["GD101"] is Status.PASS


def test_cupys_driver_version_zero_is_no_driver() -> None:
    # r45-002 as a machine without a driver prints it (cudaDriverGetVersion gives 0)
    text = (T / "r45-002.txt").read_text("utf-8").replace(
        "CUDA Driver Version   : 9020", "CUDA Driver Version   : 0")
    env = _env("r45-002.txt", text)
    assert isinstance(env.libcuda, LibcudaFacts)
    assert env.libcuda.cuda_driver_version == 0
    assert statuses(env)["GD101"] is not Status.PASS


def test_an_error_in_the_driver_row_states_nothing() -> None:
    text = ("CuPy Version          : 9.0.0\nCUDA Driver Version   : CUDARuntimeError("
            "'cudaErrorInsufficientDriver: CUDA driver version is insufficient')\n")
    assert gpu_libs.parse(text) is None


@pytest.mark.parametrize(("name", "gpus", "cuda"), [
    # "CUDA Device Initialized : True" and the driver's CUDA, no device listed
    ("r45-008.txt", [], 11020),
    # numba -s on Windows, cut after cuda.detect()'s first device
    ("r45-009.txt", [("GeForce GTX 960M", None)], None),
])
def test_numbas_cuda_section(name: str, gpus: list[tuple[str, str | None]],
                             cuda: int | None) -> None:
    env = _env(name)
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.binding == "Numba's numba -s, as it reached the GPUs"
    assert [(g.name, g.compute_capability if isinstance(g.compute_capability, str) else None)
            for g in env.nvml.gpus if isinstance(g, GpuFacts)] == gpus
    assert (env.nvml.cuda_driver_version if cuda else None) == cuda
    got = statuses(env)
    assert got["GD101"] is Status.PASS
    assert got["GD102"] is (Status.PASS if gpus else Status.SKIP)


def test_numbas_detect_with_the_capability_below_each_device() -> None:
    text = ("__CUDA Information__\nCUDA Device Initialized : True\n"
            "CUDA Driver Version : (12, 2)\nCUDA Detect Output:\nFound 2 CUDA devices\n"
            "id 0      b'NVIDIA A100-SXM4-40GB'                              [SUPPORTED]\n"
            "                      Compute Capability: 8.0\n"
            "                           PCI Device ID: 0\n"
            "id 1      b'Tesla T4'                              [SUPPORTED]\n"
            "                      Compute Capability: 7.5\n"
            "Summary:\n\t2/2 devices are supported\n")
    part = gpu_libs.parse(text)
    assert part is not None and isinstance(part.nvml, NvmlFacts)
    assert [(g.name, g.compute_capability) for g in part.nvml.gpus
            if isinstance(g, GpuFacts)] == [("NVIDIA A100-SXM4-40GB", "8.0"), ("Tesla T4", "7.5")]
    assert part.nvml.cuda_driver_version == 12020


def test_numba_not_initialised_states_nothing() -> None:
    text = ("__CUDA Information__\nCUDA Device Initialized : False\n"
            "CUDA Driver Version : ?\nCUDA Detect Output:\nNone\n")
    assert gpu_libs.parse(text) is None


@pytest.mark.parametrize("text", [
    "CuPy Version : 1\n" + "Device 0 Name : " + "A" * 5000 + "\n",
    "__CUDA Information__\n" + "id 0 " + "b'" * 20000 + "\n",
    "CuPy Version : 13.0\n" + "Device 0 Name : x\n" * 50_000,
])
def test_hostile_input_ends_quickly_and_bounded(text: str) -> None:
    part = gpu_libs.parse(text)
    if part is not None and isinstance(part.nvml, NvmlFacts):
        assert len(part.nvml.gpus) <= gpu_libs.MOST_GPUS


def test_warps_start_up_banner() -> None:
    # round 16's r36-012 (Isaac Sim 5.0.0): "Warp 1.7.1 initialized:", "CUDA Toolkit 12.8,
    # Driver 13.0", "cuda:0" : "NVIDIA GeForce RTX 5070" (11 GiB, sm_120, mempool enabled)
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round16" / "reports-O" / \
        "r36-012.md"
    env = _env(path.name, path.read_text(encoding="utf-8"))
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.binding == "NVIDIA Warp's start-up banner, as it reached the GPUs"
    assert env.nvml.cuda_driver_version == 13000
    assert [(g.name, g.compute_capability) for g in env.nvml.gpus
            if isinstance(g, GpuFacts)] == [("NVIDIA GeForce RTX 5070", "12.0")]
    assert statuses(env)["GD101"] is Status.PASS
    # the CUDA Warp was built with is Warp's own, not the machine's toolkit
    assert not isinstance(env.toolkits, ToolkitsFacts)
