"""GD105-GD110 (GPU health; the container checks GD505-GD507 are in test_container.py).

Three layers: hand-built facts for each branch; real `nvidia-smi -q` / `-q -x` dumps from
tests/fixtures/reports/ read by gpudoctor's readers; and the recorded states of
tests/fixtures/gpu_states/ replayed through the real NVML probe and the compiled fake
libnvidia-ml in a `python -m gpudoctor check` subprocess.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import runner

from gpudoctor.checks import container, health
from gpudoctor.compat import Tables, load_tables
from gpudoctor.model import (
    NOT_RECORDED,
    Environment,
    Finding,
    GpuFacts,
    GpuHealth,
    Reason,
    Severity,
    Status,
    Unavailable,
)
from gpudoctor.reports.read import read_reports
from tests.checks.envbuilder import NO_NVML, env, gpu, host, nvml
from tests.gpu_states import STATES, convert

pytestmark = pytest.mark.subprocess  # runs gpudoctor in new processes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[2]
REPORTS = REPO_ROOT / "tests" / "fixtures" / "reports"
NA = Unavailable(Reason.NOT_SUPPORTED, "N/A")


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def healthy(**kw: Any) -> GpuHealth:
    """A datacenter GPU with ECC on, no errors, idle, cool, at Gen5 x16."""
    base = GpuHealth(
        ecc_mode="Enabled", ecc_volatile_uncorrectable=0, ecc_aggregate_uncorrectable=0,
        ecc_volatile_correctable=0, ecc_aggregate_correctable=0, retired_pages_single_bit=NA,
        retired_pages_double_bit=NA, retired_pages_pending=NA, remapped_rows_correctable=0,
        remapped_rows_uncorrectable=0, remapped_rows_pending=False, remapped_rows_failure=False,
        clock_events=(), gpu_idle=True, ecc_mode_pending="Enabled", temperature=35,
        temperature_slowdown=87, temperature_shutdown=92, power_draw=70.0, power_limit=700.0,
        pcie_gen=5, pcie_gen_max=5, pcie_width=16, pcie_width_max=16, pcie_replays=0)
    return dataclasses.replace(base, **kw)


def geforce() -> GpuHealth:
    """What a GeForce shows: no ECC, no remapping."""
    return healthy(ecc_mode=NA, ecc_volatile_uncorrectable=NA, ecc_aggregate_uncorrectable=NA,
                   ecc_volatile_correctable=NA, ecc_aggregate_correctable=NA,
                   remapped_rows_correctable=NA, remapped_rows_uncorrectable=NA,
                   remapped_rows_pending=NA, remapped_rows_failure=NA, ecc_mode_pending=NA)


def machine(*healths: GpuHealth | Unavailable, kind: str = "H100", **gpu_kw: Any) -> Environment:
    gpus = [dataclasses.replace(gpu(kind, i), health=h, **gpu_kw) for i, h in enumerate(healths)]
    return env(nvml=nvml("580.65.06", 13000, *gpus))


def run(check: Any, environment: Environment, tables: Tables) -> Finding:
    return check.run(environment, tables)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------- GD105 memory


@pytest.mark.parametrize(("change", "status", "words"), [
    ({}, Status.PASS, "no memory errors"),
    ({"remapped_rows_pending": True}, Status.FAIL, "row remap is pending"),
    ({"remapped_rows_failure": True}, Status.FAIL, "no spare rows left"),
    ({"retired_pages_pending": True, "retired_pages_double_bit": 2}, Status.FAIL,
     "page retirement is pending"),
    ({"ecc_volatile_uncorrectable": 3}, Status.FAIL, "3 uncorrectable ECC error(s)"),
    ({"ecc_aggregate_uncorrectable": 7}, Status.WARN, "over the GPU's life"),
    ({"ecc_volatile_correctable": 353}, Status.WARN, "353 corrected"),
    ({"remapped_rows_correctable": 2}, Status.WARN, "2 memory row(s) remapped"),
    ({"ecc_mode_pending": "Disabled"}, Status.WARN, "at the next reboot"),
], ids=["healthy", "remap-pending", "remap-failure", "retire-pending", "volatile-dbe",
        "aggregate-only", "correctable", "rows-remapped", "ecc-mode-change"])
def test_memory_branches(tables: Tables, change: dict[str, Any], status: Status,
                         words: str) -> None:
    f = run(health.check_memory_errors, machine(healthy(), healthy(**change)), tables)
    assert f.status is status, f
    assert words in f.message
    if status is not Status.PASS:
        assert f.message.startswith("GPU 1 (NVIDIA H100 80GB HBM3)")
        assert f.fix
    if status is Status.WARN:  # history and corrected errors are notes, not warnings
        assert f.severity is Severity.INFO


def test_memory_fix_names_the_gpu_to_reset(tables: Tables) -> None:
    f = run(health.check_memory_errors, machine(healthy(), healthy(remapped_rows_pending=True)),
            tables)
    assert f.fix is not None and "sudo nvidia-smi -r -i 1" in f.fix


def test_memory_on_geforce_skips(tables: Tables) -> None:
    f = run(health.check_memory_errors, machine(geforce(), kind="RTX4090"), tables)
    assert f.status is Status.SKIP
    assert "GeForce" in f.message


@pytest.mark.parametrize("nvml_facts", [NO_NVML, "no-gpus", "no-health"])
def test_health_checks_skip_without_facts(tables: Tables, nvml_facts: object) -> None:
    if nvml_facts == "no-gpus":
        e = env(nvml=nvml("580.65.06", 13000))
    elif nvml_facts == "no-health":
        e = machine(NOT_RECORDED)
    else:
        e = env(nvml=nvml_facts)
    for c in (health.check_memory_errors, health.check_clocks_and_heat,
              health.check_pcie_link):
        f = run(c, e, tables)
        assert f.status is Status.SKIP, (c.id, f)
        assert f.message


def test_one_lost_gpu_leaves_the_others_judged(tables: Tables) -> None:
    lost = Unavailable(Reason.ERROR, "GPU 1: NVML said GPU is lost")
    e = env(nvml=nvml("580.65.06", 13000, dataclasses.replace(
        gpu("H100", 0), health=healthy(remapped_rows_pending=True)), lost))
    f = run(health.check_memory_errors, e, tables)
    assert f.status is Status.FAIL
    assert "GPU 0" in f.message


# ---------------------------------------------------------------------------- GD106 heat


@pytest.mark.parametrize(("change", "status", "words"), [
    ({}, Status.PASS, "no thermal or hardware slowdown"),
    ({"clock_events": ("HW Slowdown", "HW Power Brake Slowdown"), "gpu_idle": False},
     Status.FAIL, "HW Slowdown + HW Power Brake Slowdown"),
    ({"clock_events": ("HW Thermal Slowdown",)}, Status.FAIL, "HW Thermal Slowdown"),
    ({"temperature": 88}, Status.FAIL, "past its slowdown temperature (87 °C; shutdown at 92"),
    ({"temperature": 83}, Status.WARN, "within 5 °C"),
    ({"clock_events": ("SW Thermal Slowdown",), "gpu_idle": False}, Status.WARN,
     "SW Thermal Slowdown"),
    ({"clock_events": ("SW Power Cap",), "gpu_idle": False}, Status.WARN, "normal at full load"),
], ids=["idle", "hw-power-brake", "hw-thermal", "hot", "warm", "sw-thermal", "power-cap"])
def test_heat_branches(tables: Tables, change: dict[str, Any], status: Status,
                       words: str) -> None:
    f = run(health.check_clocks_and_heat, machine(healthy(**change)), tables)
    assert f.status is status, f
    assert words in f.message
    if "SW Power Cap" in change.get("clock_events", ()):
        assert f.severity is Severity.INFO


def test_heat_a_busy_gpu_straying_from_its_twins(tables: Tables) -> None:
    busy = [healthy(gpu_idle=False, power_draw=w) for w in (690.0, 680.0, 700.0, 300.0)]
    f = run(health.check_clocks_and_heat, machine(*busy), tables)
    assert f.status is Status.WARN
    assert f.message.startswith("GPU 3 (NVIDIA H100 80GB HBM3): draws 300 W")
    # idle GPUs are not compared: nothing says they run the same load
    idle = [healthy(power_draw=w) for w in (90.0, 80.0, 70.0, 30.0)]
    assert run(health.check_clocks_and_heat, machine(*idle), tables).status is Status.PASS


# ---------------------------------------------------------------------------- GD107 PCIe


@pytest.mark.parametrize(("change", "status", "words"), [
    ({}, Status.PASS, "at full link width"),
    ({"pcie_gen": 1}, Status.PASS, "down-trained at idle"),
    ({"pcie_gen": 3, "gpu_idle": False}, Status.WARN, "Gen3 of Gen5 while busy"),
    ({"pcie_gen": 3, "gpu_idle": NA}, Status.WARN, "idle or not is unknown"),
    ({"pcie_width": 8}, Status.WARN, "x8 of x16"),
    ({"pcie_replays": 120}, Status.WARN, "120 PCIe replays"),
    ({"pcie_replays": 9}, Status.WARN, "9 PCIe replays"),
    # what a healthy H200 showed (tests/fixtures/envs/h200-x1.json): no more than DCGM's 8 a
    # minute can have happened, so no note
    ({"pcie_replays": 3}, Status.PASS, "(GPU 0: 3) within DCGM's 8 per minute"),
    ({"pcie_replays": 8}, Status.PASS, "(GPU 0: 8) within DCGM's 8 per minute"),
], ids=["full", "idle-gen1", "busy-gen3", "unknown-load", "narrow", "replays", "replays-9",
        "replays-3", "replays-8"])
def test_pcie_branches(tables: Tables, change: dict[str, Any], status: Status,
                       words: str) -> None:
    f = run(health.check_pcie_link, machine(healthy(**change)), tables)
    assert f.status is status, f
    assert words in f.message
    expect_note = change.get("pcie_replays", 0) > 8 or change.get("gpu_idle") is NA
    assert (f.severity is Severity.INFO) is expect_note


# ---------------------------------------------------------------------------- GD108


@pytest.mark.parametrize(("kind", "count", "mig", "status", "severity"), [
    ("H100", 1, NA, Status.WARN, None),  # a datacenter name: a server
    ("RTX4090", 1, NA, Status.WARN, Severity.INFO),  # a workstation: a note
    ("RTX4090", 4, NA, Status.WARN, None),  # four GPUs: a server
    ("RTX3090", 1, False, Status.WARN, None),  # MIG-capable (answers the query): a server
])
def test_persistence_off(tables: Tables, kind: str, count: int, mig: object, status: Status,
                         severity: Severity | None) -> None:
    f = run(health.check_persistence, machine(*[healthy()] * count, kind=kind,
                                              persistence_mode=False, mig_mode=mig), tables)
    assert f.status is status
    assert f.severity is severity
    assert "nvidia-persistenced" in (f.fix or "")


def test_persistence_on_and_unknown(tables: Tables) -> None:
    assert run(health.check_persistence, machine(healthy()), tables).status is Status.PASS
    f = run(health.check_persistence, machine(healthy(), persistence_mode=NA), tables)
    assert f.status is Status.SKIP


def test_server_rule() -> None:
    names = {"Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3",
             "NVIDIA L40S", "NVIDIA A10G", "Tesla T4"}
    for name in names:
        g = GpuFacts(0, name, "u", "8.0", 1, 1, "b", True, NA)
        assert health.server_reasons([g]), name
    for name in ("NVIDIA GeForce RTX 4090", "NVIDIA RTX A6000", "NVIDIA GeForce GTX 1080"):
        assert not health.server_reasons([GpuFacts(0, name, "u", "8.9", 1, 1, "b", True, NA)])


# ---------------------------------------------------------------------------- real dumps


@pytest.mark.parametrize(("file", "statuses"), [
    ("nvidia_smi_xml-v100-dbe-retired-pages-pending.xml", {"GD105": Status.FAIL}),
    ("nvidia_smi_q-4x-a100-remap-pending-ecc-correctable.txt", {"GD105": Status.FAIL}),
    ("nvidia_smi_xml-4x-k80-ecc-aggregate-retired-pages.xml", {"GD105": Status.WARN}),
    ("nvidia_smi_q-10x-a40-ecc-correctable-sw-power-cap.txt",
     {"GD105": Status.WARN, "GD106": Status.WARN}),
    ("nvidia_smi_xml-2x-rtx2080ti-sw-power-cap.xml",
     {"GD105": Status.SKIP, "GD106": Status.WARN}),
    ("nvidia_smi_xml-a10g-515-healthy.xml",
     {"GD105": Status.PASS, "GD106": Status.PASS, "GD107": Status.WARN}),
    ("nvidia_smi_xml-a100-sxm4-mig-535-healthy.xml",
     {"GD105": Status.PASS, "GD106": Status.PASS, "GD107": Status.PASS}),
    ("nvidia_smi_q-gtx680-kepler-470-healthy.txt", {"GD105": Status.SKIP, "GD106": Status.PASS}),
])
def test_real_dumps(tables: Tables, file: str, statuses: dict[str, Status]) -> None:
    e = read_reports([(file, (REPORTS / file).read_text(encoding="utf-8"))])
    checks = {c.id: c for c in (*health.CHECKS, *container.CHECKS)}
    for check_id, status in statuses.items():
        f = run(checks[check_id], e, tables)
        assert f.status is status, (check_id, f)
        if status is Status.WARN and check_id in ("GD105", "GD106"):
            assert f.severity is Severity.INFO  # corrected errors, power cap: notes


# ---------------------------------------------------------------------------- replay


def _states() -> list[dict[str, Any]]:
    with (STATES / "index.toml").open("rb") as f:
        return list(tomllib.load(f)["state"])


def test_every_state_file_is_indexed() -> None:
    indexed = {s["file"] for s in _states()}
    on_disk = {p.name for p in STATES.iterdir() if p.name not in ("index.toml", "README.md")}
    assert indexed == on_disk
    for s in _states():
        assert s["source"].startswith("https://github.com/"), s["file"]
        prefix = s["file"].split("-")[0]
        assert prefix in ("ecc", "remap", "throttle", "pcie", "mismatch", "healthy"), s["file"]
        assert (prefix == "healthy") == (not s.get("expect_fail") and not s.get("names"))


@pytest.mark.slow
@pytest.mark.parametrize("state", _states(), ids=lambda s: s["file"])
def test_replay_through_the_real_probe(state: dict[str, Any], fake_nvml: Path,
                                       tmp_path: Path) -> None:
    state_file = tmp_path / "state"
    state_file.write_text(convert(STATES / state["file"]))
    expect = {**dict.fromkeys(state.get("expect_pass", []), "pass"),
              **dict.fromkeys(state.get("expect_warn", []), "warn"),
              **dict.fromkeys(state.get("expect_fail", []), "fail")}
    environ = {"LD_LIBRARY_PATH": str(fake_nvml), "FAKE_NVML_STATE": str(state_file)}
    result = runner.gpudoctor("check", "--no-torch", "--format", "json", "--only",
                              ",".join(expect), *(["--strict"] if state["strict"] else []),
                              env=environ, timeout=120)
    faulty = bool(state.get("expect_fail")) or (state["strict"] and state.get("expect_warn"))
    assert result.returncode == (1 if faulty else 0), result.stderr
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert {i: findings[i]["status"] for i in expect} == expect
    named = " ".join(f"{f['message']} {f['fix']}" for f in findings.values()
                     if f["status"] in ("fail", "warn"))
    for words in state["names"]:
        assert words in named, (words, named)


# ---------------------------------------------------------------------------- GD109, GD110


@pytest.mark.parametrize(("drivers", "status"), [
    ((), Status.SKIP),
    ((("0000:01:00.0", "nvidia"),), Status.PASS),
    ((("0000:01:00.0", "nvidia"), ("0000:02:00.0", "nouveau")), Status.FAIL),
    ((("0000:01:00.0", "vfio-pci"),), Status.WARN),
    ((("0000:01:00.0", ""),), Status.PASS),  # no driver at all: GD101's case
])
def test_nouveau(tables: Tables, drivers: tuple[tuple[str, str], ...], status: Status) -> None:
    f = run(health.check_nouveau, env(host=host(pci_gpu_drivers=drivers)), tables)
    assert f.status is status, f
    if status is Status.FAIL:
        assert "0000:02:00.0" in f.message and "blacklist nouveau" in (f.fix or "")


@pytest.mark.parametrize(("modes", "status", "words"), [
    (("Default", "Default"), Status.PASS, "Default compute mode"),
    (("Default", "Prohibited"), Status.FAIL, "GPU 1 is in Prohibited"),
    (("Exclusive_Process",), Status.WARN, "exclusive compute mode"),
])
def test_compute_mode(tables: Tables, modes: tuple[str, ...], status: Status,
                      words: str) -> None:
    gpus = [dataclasses.replace(gpu("H100", i), compute_mode=m) for i, m in enumerate(modes)]
    f = run(health.check_compute_mode, env(nvml=nvml("580.65.06", 13000, *gpus)), tables)
    assert f.status is status
    assert words in f.message
    if status is Status.FAIL:
        assert f.fix == "sudo nvidia-smi -i 1 -c DEFAULT"
    assert run(health.check_compute_mode, machine(healthy()), tables).status is Status.SKIP


def test_compute_mode_from_real_dumps(tables: Tables) -> None:
    for file in ("nvidia_smi_xml-a10g-515-healthy.xml",
                 "nvidia_smi_q-gtx680-kepler-470-healthy.txt"):
        e = read_reports([(file, (REPORTS / file).read_text(encoding="utf-8"))])
        assert run(health.check_compute_mode, e, tables).status is Status.PASS, file
