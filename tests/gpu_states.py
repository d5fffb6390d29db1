"""Recorded GPU states → the fake libnvidia-ml's state files (FAKE_NVML_STATE).

A fixture under tests/fixtures/gpu_states/ is a dump someone published (`nvidia-smi -q`,
`-q -x`, or an issue quoting nvidia-smi's error), copied verbatim. gpudoctor's own report
readers turn it into facts; this module writes those facts as the `NAME=value` lines the fake
(tests/fakes/fake_nvml.c) sets as FAKE_NVML_NAME at nvmlInit, so the real NVML probe reads the
recorded state through the real nvidia-ml-py binding. A fact the dump does not state becomes
"NA" (the query answers NOT_SUPPORTED), never a healthy default.

`python tests/gpu_states.py FILE` prints the state file of one dump.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpudoctor.compat import load_tables
from gpudoctor.model import GpuFacts, GpuHealth, NvmlFacts, Reason, Unavailable
from gpudoctor.probes.nvml_health import (
    CLOCK_EVENT_BITS,
    FABRIC_STATES,
    IDLE_BIT,
    RECOVERY_ACTIONS,
)
from gpudoctor.reports.read import read_reports

STATES = Path(__file__).resolve().parent / "fixtures" / "gpu_states"

# nvmlInit's return code for a driver the report says is broken
_INIT_ERRORS = {
    Reason.VERSION_MISMATCH: 18,  # NVML_ERROR_LIB_RM_VERSION_MISMATCH
    Reason.DRIVER_NOT_LOADED: 9,
    Reason.PERMISSION_DENIED: 4,
    Reason.ERROR: 999,  # "Unknown Error"
}


_COMPUTE_MODES = {"Default": "0", "Exclusive_Thread": "1", "Prohibited": "2",
                  "Exclusive_Process": "3"}


def _value(fact: object, scale: float = 1) -> str:
    """A fact as the fake reads it: a number, 0/1 for a flag, NA for anything unavailable."""
    if isinstance(fact, Unavailable) or fact is None:
        return "NA"
    if isinstance(fact, bool):
        return "1" if fact else "0"
    if isinstance(fact, (int, float)):
        return str(round(fact * scale))
    if fact in ("Enabled", "Disabled"):
        return "1" if fact == "Enabled" else "0"
    return "NA"


def _clock_mask(h: GpuHealth) -> str:
    if isinstance(h.clock_events, Unavailable):
        return "NA"
    mask = sum(bit for bit, name in CLOCK_EVENT_BITS if name in h.clock_events)
    return hex(mask | (IDLE_BIT if h.gpu_idle is True else 0))


def _named(fact: object, names: dict[int, str]) -> str:
    """A name nvidia-smi prints ("Reset") as the NVML value it stands for."""
    codes = {name.lower(): str(code) for code, name in names.items()}
    return codes.get(fact.lower(), "NA") if isinstance(fact, str) else "NA"


def _fabric_state(h: GpuHealth) -> str:
    """No NVSwitch (nvidia-smi's N/A: NOT_SUPPORTED) is state 0, as NVML answers it."""
    if isinstance(h.fabric_state, Unavailable):
        return "0" if h.fabric_state.reason is Reason.NOT_SUPPORTED else "NA"
    return _named(h.fabric_state, FABRIC_STATES)


def _procs(h: GpuHealth) -> str:
    """pid:bytes:C|G per process (a C+G process twice); NA when the dump lacks the list."""
    if isinstance(h.processes, Unavailable):
        return "NA"
    return ",".join(f"{p.pid}:{p.used_memory if isinstance(p.used_memory, int) else 'NA'}:{k}"
                    for p in h.processes for k in p.kind.split("+") if k in ("C", "G"))


def _health_lines(i: int, h: GpuHealth | Unavailable) -> list[str]:
    if not isinstance(h, GpuHealth):
        h = GpuHealth(*([h] * 13))  # nothing known: every query NOT_SUPPORTED
    values = {
        "ECC_MODE": _value(h.ecc_mode), "ECC_PENDING": _value(h.ecc_mode_pending),
        "ECC_VOL_UNC": _value(h.ecc_volatile_uncorrectable),
        "ECC_AGG_UNC": _value(h.ecc_aggregate_uncorrectable),
        "ECC_VOL_CORR": _value(h.ecc_volatile_correctable),
        "ECC_AGG_CORR": _value(h.ecc_aggregate_correctable),
        "RETIRED_SBE": _value(h.retired_pages_single_bit),
        "RETIRED_DBE": _value(h.retired_pages_double_bit),
        "RETIRED_PENDING": _value(h.retired_pages_pending),
        "REMAP_CORR": _value(h.remapped_rows_correctable),
        "REMAP_UNC": _value(h.remapped_rows_uncorrectable),
        "REMAP_PENDING": _value(h.remapped_rows_pending),
        "REMAP_FAILURE": _value(h.remapped_rows_failure),
        "CLOCK_EVENTS": _clock_mask(h),
        "TEMP": _value(h.temperature), "TEMP_SLOWDOWN": _value(h.temperature_slowdown),
        "TEMP_SHUTDOWN": _value(h.temperature_shutdown),
        "POWER_MW": _value(h.power_draw, 1000), "POWER_LIMIT_MW": _value(h.power_limit, 1000),
        "PCIE_GEN": _value(h.pcie_gen), "PCIE_GEN_MAX": _value(h.pcie_gen_max),
        "PCIE_WIDTH": _value(h.pcie_width), "PCIE_WIDTH_MAX": _value(h.pcie_width_max),
        "PCIE_REPLAYS": _value(h.pcie_replays),
        "RECOVERY_ACTION": _named(h.recovery_action, RECOVERY_ACTIONS),
        "FABRIC_STATE": _fabric_state(h),
        "FABRIC_STATUS": "NA" if isinstance(h.fabric_status, Unavailable) else
        "0" if h.fabric_status.lower() in ("success", "n/a") else "999",  # 999: Unknown Error
        "PROCS": _procs(h),
    }
    return [f"{key}_{i}={value}" for key, value in values.items()]


def state_lines(nvml: NvmlFacts | Unavailable) -> list[str]:
    """The fake's state file for NVML facts read from a report."""
    if isinstance(nvml, Unavailable):
        code = _INIT_ERRORS.get(nvml.reason)
        if code is None:
            raise ValueError(f"no nvmlInit error stands for {nvml.reason}: {nvml.message}")
        return [f"# {nvml.message}", f"INIT_ERROR={code}"]
    tables = load_tables()
    gpus = [g for g in nvml.gpus if isinstance(g, GpuFacts)]
    specs = []
    for g in gpus:
        arch = tables.gpu_of_product(g.name)
        cc = g.compute_capability if isinstance(g.compute_capability, str) else (
            arch.cc if arch else "0.0")  # 0.0: a product the GPU table does not know
        memory = g.memory_total if isinstance(g.memory_total, int) else 0
        specs.append(f"{g.name.replace(';', ',')}:{cc}:{memory}")
    lines = [f"DRIVER={nvml.driver_version}", f"GPUS={';'.join(specs)}"]
    if isinstance(nvml.cuda_driver_version, int):
        lines.append(f"CUDA={nvml.cuda_driver_version}")
    unsupported = [f"mig:{i}" for i, g in enumerate(gpus) if not isinstance(g.mig_mode, bool)]
    if not isinstance(nvml.cuda_driver_version, int):
        unsupported.append("cuda")
    if unsupported:
        lines.append(f"NOT_SUPPORTED={','.join(unsupported)}")
    lines.append("MIG_GPUS=" + ",".join(str(i) for i, g in enumerate(gpus) if g.mig_mode is True))
    for i, g in enumerate(gpus):
        lines.append(f"PERSISTENCE_{i}={_value(g.persistence_mode)}")
        lines.append(f"COMPUTE_MODE_{i}={_COMPUTE_MODES.get(str(g.compute_mode), 'NA')}")
        lines += _health_lines(i, g.health)
    return lines


def convert(path: Path) -> str:
    """The state file of one recorded dump."""
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    return "\n".join([f"# from {path.name}", *state_lines(env.nvml)]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(convert(Path(sys.argv[1])))
