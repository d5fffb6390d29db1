"""`nvidia-smi -L` → the GPUs NVML answers for, by name and UUID; `nvidia-smi mig` and
`nvidia-smi topo -m` → the GPUs they list, by index."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import GpuFacts, NvmlFacts, Status, Unavailable
from gpudoctor.reports import nvidia_smi_list
from gpudoctor.reports.read import read_reports

# https://github.com/pytorch/pytorch/issues/99137 — the Versions section, as pasted
VERSIONS_99137 = """\
### Versions

![image](https://user-images.githubusercontent.com/61486634/232001061-e239cfa8-3794-4c03-b8de-e1b9cde02fcb.png)
GPU 0: Quadro K620 (UUID: GPU-56622fc6-a9b3-5594-4c6d-b0b231be656a)
python version：3.8.16
cuda version：cuda10.2
cudnn version:8.7.0
"""


def test_the_gpu_list_of_a_pasted_issue() -> None:
    env = read_reports([("pytorch-99137", VERSIONS_99137)])
    assert isinstance(env.nvml, NvmlFacts)
    (gpu,) = env.nvml.gpus
    assert isinstance(gpu, GpuFacts) and gpu.name == "Quadro K620"
    assert gpu.uuid == "GPU-56622fc6-a9b3-5594-4c6d-b0b231be656a"
    assert isinstance(env.nvml.driver_version, Unavailable)
    found = {r.check_id: r.finding.status for r in run_checks(env, load_tables(),
                                                              REGISTRY).results}
    assert found["GD102"] is Status.PASS  # the GPU answered nvidia-smi


def test_mig_devices_under_a_gpu() -> None:
    """nvidia-smi -L lists a GPU's MIG devices under it (the format of NVIDIA's MIG user
    guide: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/)."""
    partial = nvidia_smi_list.parse(
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n"
        "  MIG 1g.5gb      Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)\n"
        "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-6d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n")
    assert partial is not None and isinstance(partial.nvml, NvmlFacts)
    first, second = partial.nvml.gpus
    assert isinstance(first, GpuFacts) and first.mig_mode is True
    assert isinstance(second, GpuFacts) and isinstance(second.mig_mode, Unavailable)


def test_a_gpu_named_in_prose_is_no_list() -> None:
    assert nvidia_smi_list.parse("GPU 0: NVIDIA A100 (the UUID is below)\n") is None


# https://github.com/NVIDIA/DCGM/issues/138 (round 11's r26-027): `nvidia-smi mig -lgi` on a
# Kubernetes node, as pasted (cut in the thread at GPU 2)
MIG_LGI_DCGM_138 = """\
sudo nvidia-smi mig -lgi
+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 1g.10gb         19        9          2:1     |
+-------------------------------------------------------+
|   0  MIG 3g.40gb          9        2          4:4     |
+-------------------------------------------------------+
|   1  MIG 2g.20gb         14        5          0:2     |
+-------------------------------------------------------+
"""
# -lci: the GPU, then the GPU instance's id, then the profile (round 10's r23-030)
MIG_LCI = """\
+--------------------------------------------------------------------+
| Compute instances:                                                 |
| GPU     GPU       Name             Profile   Instance   Placement  |
|       Instance                       ID        ID       Start:Size |
|         ID                                                         |
|====================================================================|
|   0     13       MIG 1g.5gb           0         0          0:1     |
+--------------------------------------------------------------------+
"""


def test_a_mig_instance_listing_shows_its_gpus_in_mig_mode() -> None:
    for text, indexes in ((MIG_LGI_DCGM_138, [0, 1]), (MIG_LCI, [0])):
        env = read_reports([("mig", text)])
        assert isinstance(env.nvml, NvmlFacts)
        assert [g.index for g in env.nvml.gpus if isinstance(g, GpuFacts)] == indexes
        assert all(isinstance(g, GpuFacts) and g.mig_mode is True for g in env.nvml.gpus)
        results = {r.check_id: r.finding.status
                   for r in run_checks(env, load_tables(), REGISTRY).results}
        assert Status.FAIL not in results.values()
        # GPUs without MIG are not listed: "every GPU answers" is not judged from it
        assert results["GD102"] is Status.SKIP


def test_a_mig_title_without_rows_or_in_prose_is_no_listing() -> None:
    assert nvidia_smi_list.parse_mig("| GPU instances:   |\n| No MIG-enabled devices found. |"
                                     ) is None
    assert nvidia_smi_list.MIG_START.search("we list the GPU instances: below") is None


_HELDOUT_L = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round13" / "reports-L"


@pytest.mark.parametrize(("name", "count"), [
    ("r29-036.txt", 8),  # NVIDIA/go-gpuallocator#17: 8 GPUs, 2 NICs, all SYS
    ("r29-037.txt", 2),  # noonghunna/club-3090#1133: 2 GPUs through a host bridge (PHB)
])
def test_a_topology_matrix_shows_the_driver_answering_for_its_gpus(name: str,
                                                                    count: int) -> None:
    """`nvidia-smi topo -m` (round 13's reports, refused before this reader): NVML answered
    for every GPU of the matrix; nothing else is stated, so nothing fails."""
    env = read_reports([(name, (_HELDOUT_L / name).read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == count
    assert isinstance(env.nvml.driver_version, Unavailable)
    found = {r.check_id: r.finding.status
             for r in run_checks(env, load_tables(), REGISTRY).results}
    assert found["GD101"] is Status.PASS
    assert Status.FAIL not in found.values()


@pytest.mark.parametrize("text", [
    # the header alone, or a sentence naming the columns: no row
    "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n",
    "In the output, GPU0 CPU Affinity shows which cores are near the GPU.",
    # a row naming a GPU the header lacks
    "\tGPU0\tCPU Affinity\nGPU0\t X \t0-7\nGPU1\tSYS\t0-7\n",
])
def test_what_is_no_topology_matrix(text: str) -> None:
    assert nvidia_smi_list.parse_topo(text) is None
