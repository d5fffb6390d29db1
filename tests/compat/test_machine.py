"""gpudoctor.compat.machine: what the tables say of this machine's own facts (its driver's
CUDA, the cuDNN torch was built with, each GPU's compute capability, torch's arch list)."""

from __future__ import annotations

from dataclasses import replace

from gpudoctor.compat import Tables
from gpudoctor.compat.machine import gpu_cc
from gpudoctor.model import GpuFacts, Reason, Unavailable


def reported_gpu(name: str) -> GpuFacts:
    """A GPU as a pasted report (collect_env, nvidia-smi's table) gives it: a name only."""
    def lacks(what: str) -> Unavailable:
        return Unavailable(Reason.NOT_REPORTED, f"{what} is not in the report")

    return GpuFacts(index=0, name=name, uuid=lacks("the UUID"),
                    compute_capability=lacks("the compute capability"),
                    memory_total=lacks("the memory"), memory_free=lacks("free memory"),
                    pci_bus_id=lacks("the bus id"), persistence_mode=lacks("persistence"),
                    mig_mode=lacks("MIG mode"))


def test_a_live_machine_falls_back_to_nvmls_compute_capability(tables: Tables) -> None:
    """A name no rule places, on a live machine: NVML's own compute capability is used."""
    unknown = replace(reported_gpu("NVIDIA GeForce MX450"), compute_capability="7.5")
    assert gpu_cc(unknown, tables) == ("7.5", "NVML")


def test_a_pasted_report_says_which_fact_is_missing(tables: Tables) -> None:
    found = gpu_cc(reported_gpu("NVIDIA GeForce MX450"), tables)
    assert isinstance(found, Unavailable)
    assert found.message.startswith("the compute capability of NVIDIA GeForce MX450 is not in "
                                    "the report")
    placed = gpu_cc(reported_gpu("NVIDIA GeForce GTX 1660 SUPER"), tables)
    assert not isinstance(placed, Unavailable)
    assert placed[0] == "7.5" and "derived" in placed[1], placed
    exact = gpu_cc(reported_gpu("NVIDIA GeForce RTX 3050 Laptop GPU"), tables)
    assert not isinstance(exact, Unavailable) and exact[0] == "8.6", exact
