"""`nvidia-smi -q` and `-q -x` → GPUs with their health counters (GpuHealth)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import (
    Environment,
    GpuFacts,
    GpuHealth,
    NvmlFacts,
    Reason,
    Status,
    Unavailable,
)
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports.reading_kit import statuses
from tests.reports.report_excerpts_q import (
    Q_396_GTX1080_CUT,
    Q_460_A100,
    Q_550_A10_HW_SLOWDOWN_CUT,
    QX_535_4090_CUT,
    QX_535_A100_MIG_CUT,
)


def _gpu(env: Environment, i: int = 0) -> GpuFacts:
    assert isinstance(env.nvml, NvmlFacts)
    g = env.nvml.gpus[i]
    assert isinstance(g, GpuFacts)
    return g


def _health(g: GpuFacts) -> GpuHealth:
    assert isinstance(g.health, GpuHealth)
    return g.health


def _reason(fact: object) -> Reason | None:
    return fact.reason if isinstance(fact, Unavailable) else None


def test_q_460_a100() -> None:
    env = read_reports([("azhpc", Q_460_A100)])
    assert env.nvml.driver_version == "460.32.03"  # type: ignore[union-attr]
    assert env.nvml.cuda_driver_version == 11020  # type: ignore[union-attr]
    g = _gpu(env)
    assert (g.name, g.pci_bus_id) == ("A100-SXM4-40GB", "00000001:00:00.0")
    assert g.uuid == "GPU-b01e9f90-c60c-4ad1-2052-154833662357"
    assert g.memory_total == g.memory_free == 40536 << 20
    assert g.persistence_mode is False and g.mig_mode is False
    h = _health(g)
    assert h.ecc_mode == "Enabled"
    assert (h.ecc_volatile_uncorrectable, h.ecc_aggregate_uncorrectable,
            h.ecc_volatile_correctable, h.ecc_aggregate_correctable) == (0, 0, 0, 0)
    assert _reason(h.retired_pages_double_bit) is Reason.NOT_SUPPORTED  # "N/A" on Ampere
    assert (h.remapped_rows_correctable, h.remapped_rows_uncorrectable,
            h.remapped_rows_pending, h.remapped_rows_failure) == (0, 0, False, False)
    assert h.clock_events == ()  # only "Idle" is active, and idle is not an event
    assert env.sources == ("nvidia-smi -q in azhpc",)


def test_q_550_clock_events_and_a_cut() -> None:
    env = read_reports([("gpud", Q_550_A10_HW_SLOWDOWN_CUT)])
    g = _gpu(env)
    assert _health(g).clock_events == ("HW Slowdown", "HW Power Brake Slowdown")
    assert g.memory_total == 23028 << 20
    assert _reason(g.memory_free) is Reason.NOT_REPORTED  # cut before "Free"
    assert _reason(_health(g).ecc_mode) is Reason.NOT_REPORTED
    assert env.sources == ("nvidia-smi -q (cut off) in gpud",)


def test_q_396_has_no_cuda_version() -> None:
    env = read_reports([("nvidia-docker-954", Q_396_GTX1080_CUT)])
    assert _reason(env.nvml.cuda_driver_version) is Reason.NOT_REPORTED  # type: ignore[union-attr]
    g = _gpu(env)
    assert g.name == "GeForce GTX 1080" and g.pci_bus_id == "00000000:01:00.0"
    assert g.uuid == "GPU-0200523e-f473-3a45-9b4a-fbbe0e41ccf8"


def test_qx_535_cut_mid_element() -> None:
    env = read_reports([("netdata-15755", QX_535_4090_CUT)])
    assert env.nvml.driver_version == "535.86.05"  # type: ignore[union-attr]
    assert env.nvml.cuda_driver_version == 12020  # type: ignore[union-attr]
    g = _gpu(env)
    assert g.name == "NVIDIA GeForce RTX 4090" and g.persistence_mode is True
    assert g.pci_bus_id == "00000000:84:00.0"  # from the <gpu id=...> attribute
    assert _reason(g.mig_mode) is Reason.NOT_SUPPORTED
    assert _reason(g.uuid) is Reason.NOT_REPORTED  # the paste ends before <uuid>
    assert env.sources == ("nvidia-smi -q -x (cut off) in netdata-15755",)


def test_qx_535_a100_mig_and_remapped_rows_na() -> None:
    env = read_reports([("checkmk", QX_535_A100_MIG_CUT)])
    g = _gpu(env)
    assert g.mig_mode is True and g.memory_free == 80999 << 20
    h = _health(g)
    assert h.ecc_volatile_uncorrectable == 0 and h.ecc_mode == "Enabled"
    for fact in (h.remapped_rows_correctable, h.remapped_rows_uncorrectable,
                 h.remapped_rows_pending, h.remapped_rows_failure, h.retired_pages_pending):
        assert _reason(fact) is Reason.NOT_SUPPORTED, fact
    assert h.clock_events == ()


def test_q_counts_errors_and_pending_states() -> None:
    """Counters that are not zero are summed and flags read (values edited from the A100)."""
    text = (Q_460_A100.replace("            DRAM Uncorrectable            : 0",
                               "            DRAM Uncorrectable            : 3")
            .replace("        Pending                           : No",
                     "        Pending                           : Yes"))
    h = _health(_gpu(read_reports([("edited", text)])))
    assert h.ecc_volatile_uncorrectable == 3 and h.ecc_aggregate_uncorrectable == 3
    assert h.remapped_rows_pending is True


def test_xml_entities_are_refused() -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>\n<nvidia_smi_log>'
            "<driver_version>&a;</driver_version></nvidia_smi_log>")
    with pytest.raises(ReportError, match="no report recognised"):
        read_reports([("bomb.xml", bomb)])


# --------------------------------------------------------------------------- a Fabric section
# Two real pastes of `nvidia-smi -q`'s Fabric section alone (round 5's development reports,
# labelled blind: tests/fixtures/heldout/round5/reports-D/index.toml):
# r8-009 https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/626 (indented, from
# `grep -C3`), and r8-010 https://github.com/Azure/azhpc-images/pull/506 (unindented).
ROUND5 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round5" / "reports-D"


def _fabric_of(name: str) -> tuple[GpuHealth, dict[str, Status]]:
    env = read_reports([(name, (ROUND5 / name).read_text(encoding="utf-8"))])
    assert env.sources == (f"nvidia-smi -q (sections of it) in {name}",)
    return _health(_gpu(env)), statuses(env)


def test_a_fabric_section_alone_whose_health_is_unhealthy_fails_gd112() -> None:
    h, status = _fabric_of("r8-009.md")
    assert (h.fabric_state, h.fabric_status) == ("Completed", "Success")
    assert h.fabric_health_summary == "Unhealthy"
    assert h.fabric_health == ()  # Bandwidth Full, no flag: the summary alone decides
    assert status["GD112"] is Status.FAIL
    assert status["GD101"] is Status.PASS  # nvidia-smi answered: the driver is loaded
    assert _reason(h.ecc_mode) is Reason.NOT_REPORTED  # nothing else is made up


def test_an_unindented_fabric_section_whose_status_is_an_error_fails_gd112() -> None:
    h, status = _fabric_of("r8-010.md")
    assert (h.fabric_state, h.fabric_status) == ("Completed", "Insufficient Resources")
    assert _reason(h.fabric_health_summary) is Reason.NOT_REPORTED
    assert status["GD112"] is Status.FAIL


def test_fabric_health_flags_name_their_problems() -> None:
    text = "\n".join([
        "    Fabric", "        State                             : Completed",
        "        Status                            : Success",
        "        Health", "            Bandwidth                     : Degraded",
        "            Route Recovery in progress    : False",
        "            Route Unhealthy               : True",
        "            Summary                       : Limited Capacity"])
    env = read_reports([("fabric", text)])
    h = _health(_gpu(env))
    assert h.fabric_health == ("Degraded Bandwidth", "Route Unhealthy")
    assert statuses(env)["GD112"] is Status.WARN


@pytest.mark.parametrize("text", [
    "Fabric\n\nwe use an NVLink fabric", "the fabric is down\nFabric\nState of the art"])
def test_the_word_fabric_alone_is_no_report(text: str) -> None:
    with pytest.raises(ReportError):
        read_reports([("prose", text)])


# Sections of -q quoted alone (round 5's development reports): r8-011
# https://github.com/kubeflow/kubeflow/issues/68 (the clock-event reasons), r8-029
# https://github.com/NVIDIA/dcgm-exporter/issues/16 (starts inside the ECC counters), r8-035
# https://github.com/NVIDIA/nvidia-docker/issues/1473 (starts inside FB Memory Usage)
@pytest.mark.parametrize(("name", "passes"), [
    ("r8-011.txt", {"GD101", "GD106"}),
    ("r8-029.txt", {"GD101", "GD105", "GD106"}),
    ("r8-035.txt", {"GD101", "GD105", "GD110"}),
])
def test_sections_of_q_alone_are_a_gpus_facts(name: str, passes: set[str]) -> None:
    env = read_reports([(name, (ROUND5 / name).read_text(encoding="utf-8"))])
    assert env.sources == (f"nvidia-smi -q (sections of it) in {name}",)
    status = statuses(env)
    assert {c for c, st in status.items() if st is Status.PASS} == passes
    assert status["GD102"] is Status.SKIP  # one GPU's sections are not NVML's view of all
    assert _gpu(env).name == "(name not in the report)"


def test_a_fragment_that_starts_mid_gpu_keeps_its_lines_before_the_first_section() -> None:
    text = ("    Compute Mode                          : Exclusive_Process\n"
            "    ECC Errors\n        Volatile\n            DRAM Uncorrectable : 0\n")
    env = read_reports([("q", text)])
    assert _gpu(env).compute_mode == "Exclusive_Process"
    assert statuses(env)["GD110"] is not Status.PASS


def test_two_gpus_sections_in_a_row_are_two_gpus() -> None:
    one = ("    Clocks Event Reasons\n        Idle : Not Active\n"
           "        HW Slowdown : {}\n")
    env = read_reports([("q", one.format("Not Active") + one.format("Active"))])
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == 2
    assert _health(_gpu(env, 1)).clock_events == ("HW Slowdown",)
    assert statuses(env)["GD106"] is Status.FAIL


def test_section_headings_without_values_are_no_report() -> None:
    with pytest.raises(ReportError):
        read_reports([("q", "    ECC Errors\n    Retired Pages\n")])


# ------------------------------------------------------------------ pieces of -q -x alone

R11_031 = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round6" / \
    "reports-E" / "r11-031.xml"


def test_a_piece_of_the_xml_without_its_root_is_read() -> None:
    """https://github.com/microsoft/nni/issues/2463: a comment's <processes> piece, starting
    inside a <process_info> and cut inside the last one: nvidia-smi printed it, so the driver
    answered; GD102 does not judge a piece (not NVML's view of every GPU)."""
    env = read_reports([("r11-031.xml", R11_031.read_text())])
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == 1
    got = statuses(env)
    assert got["GD101"] is Status.PASS and got["GD102"] is Status.SKIP
    assert Status.FAIL not in got.values()


def test_a_piece_names_what_its_elements_state() -> None:
    piece = ("    <product_name>NVIDIA GeForce RTX 4090</product_name>\n"
             "    <fb_memory_usage>\n        <total>24564 MiB</total>\n"
             "        <free>23000 MiB</free>\n    </fb_memory_usage>\n")
    gpu = _gpu(read_reports([("piece.xml", piece)]))
    assert gpu.name == "NVIDIA GeForce RTX 4090"
    assert gpu.memory_total == 24564 * 1024 * 1024
    assert isinstance(gpu.uuid, Unavailable) and gpu.uuid.reason is Reason.NOT_REPORTED


@pytest.mark.parametrize("text", [
    "<processes>\n</processes>\n",  # no element states a value
    "use <pci> and <temperature> tags in your own config",  # prose: not at a line's start
])
def test_what_is_not_a_piece_of_the_xml(text: str) -> None:
    with pytest.raises(ReportError):
        read_reports([("x.txt", text)])


@pytest.mark.parametrize("text", [
    "<nvidia_smi_log>\n" + "    <gpu>\n" * 50_000,  # a whole log nested past any real one
    "    <process_info>\n" * 50_000,  # a piece likewise
])
def test_xml_nested_deeper_than_nvidia_smi_writes_is_refused(text: str) -> None:
    """Found trying the new piece reader with hostile input: 200,000 open elements made the
    tree's conversion recurse past Python's limit (exit 3, 'internal error'), for a whole log
    before this session too. nvidia-smi nests 6 levels; deeper is not its output."""
    with pytest.raises(ReportError):
        read_reports([("deep.xml", text)])


ROUND9_H = Path(__file__).parents[1] / "fixtures" / "heldout" / "round9" / "reports-H"
ROUND9 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round9"


def test_q_pasted_without_its_banner_is_read_whole() -> None:
    # https://github.com/NVIDIA/k8s-device-plugin/issues/343: `nvidia-smi -a` copied from its
    # "Timestamp" line on (no ==NVSMI LOG== banner), cut in the first GPU's sections
    env = read_reports([("r20-012.md", (ROUND9_H / "r20-012.md").read_text(encoding="utf-8"))])
    assert env.sources == ("nvidia-smi -q (cut off) in r20-012.md",)
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "450.203.03"
    assert _gpu(env).name == "A100-SXM4-40GB" and _gpu(env).persistence_mode is True
    status = statuses(env)
    assert (status["GD101"], status["GD108"]) == (Status.PASS, Status.PASS)


def test_a_banner_and_its_header_fields_are_one_block() -> None:
    text = (ROUND9 / "reports-H" / "r20-012.md").read_text(encoding="utf-8")
    body = text[text.index("Timestamp"):]
    env = read_reports([("q", "==============NVSMI LOG==============\n\n" + body)])
    assert env.sources == ("nvidia-smi -q (cut off) in q",)  # one block, not two


def test_a_section_quoted_flush_left_is_a_fragment() -> None:
    # l4rz/reverse-engineering-dell-idrac-to-get-rid-of-gpu-throttling (README): the clock-event
    # reasons quoted with their heading flush left: HW Power Brake Slowdown active
    env = read_reports([("r20-022.txt", (ROUND9_H / "r20-022.txt").read_text(encoding="utf-8"))])
    assert env.sources == ("nvidia-smi -q (sections of it) in r20-022.txt",)
    assert statuses(env)["GD106"] is Status.FAIL


def test_a_q_of_more_gpus_than_a_machine_has_is_read_to_its_first_64() -> None:
    # a crafted paste: one real GPU section (k8s-device-plugin#343) repeated 1,000 times reads
    # as 64 GPUs, in bounded time
    text = (ROUND9_H / "r20-012.md").read_text(encoding="utf-8")
    body = text[text.index("Timestamp"):].split("```")[0]
    head, _, gpu = body.partition("GPU 00000000:07:00.0")
    env = read_reports([("q", head + ("GPU 00000000:07:00.0" + gpu) * 1000)])
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == 64


# netdata's test data (round 11's r26-030): a driver-580 -q -x cut down to one GPU, its
# driver lines gone; T.Limit's thresholds are degrees of headroom (0 C, -5 C), not a GPU at 0 C
# https://github.com/netdata/netdata/blob/511c59f8bf688bbf55ebe9f8ab7ef8e512d3d427/src/go/plugin/go.d/collector/nvidia_smi/testdata/rtx-pro-6000-driver-580.xml
QX_580_NO_DRIVER_LINES = """\
<nvidia_smi_log>
    <gpu id="00000000:01:00.0">
        <product_name>NVIDIA RTX PRO 6000 Blackwell</product_name>
        <uuid>GPU-11111111-2222-3333-4444-555555555555</uuid>
        <performance_state>P8</performance_state>
        <temperature>
            <gpu_temp> 37 C </gpu_temp>
            <gpu_temp_tlimit>56 C</gpu_temp_tlimit>
            <gpu_temp_max_tlimit_threshold>-5 C</gpu_temp_max_tlimit_threshold>
            <gpu_temp_slow_tlimit_threshold>0 C</gpu_temp_slow_tlimit_threshold>
        </temperature>
    </gpu>
</nvidia_smi_log>
"""
# NVIDIA/mig-parted#120 (round 11's r26-033): -q grepped for the product lines
Q_GREP_PRODUCT = """\
root@node:/etc/nvidia-mig-manager# sudo nvidia-smi -q | grep -E "Product Name|Product Architecture"

    Product Name                          : NVIDIA H200
    Product Architecture                  : Hopper
"""


def test_a_whole_qx_without_its_driver_lines_is_read_as_its_gpus() -> None:
    env = read_reports([("netdata", QX_580_NO_DRIVER_LINES)])
    g = _gpu(env)
    assert g.name == "NVIDIA RTX PRO 6000 Blackwell"
    assert isinstance(env.nvml, NvmlFacts)
    assert _reason(env.nvml.driver_version) is Reason.NOT_REPORTED
    found = statuses(env)
    assert found["GD101"] is Status.PASS  # nvidia-smi printed it: the driver answers
    assert Status.FAIL not in found.values()


def test_q_grepped_for_the_product_lines_names_the_gpu() -> None:
    env = read_reports([("mig-parted-120", Q_GREP_PRODUCT)])
    assert _gpu(env).name == "NVIDIA H200"
    assert Status.FAIL not in statuses(env).values()
    with pytest.raises(ReportError):  # the words in prose are no such line
        read_reports([("prose", "The Product Name : is what we print in the UI.\n")])


@pytest.mark.parametrize(("path", "field"), [
    ("round7/reports-F/r14-005.txt", "brand"),  # an A10G of eight on AWS: 'ERR!' in the table
    ("round11/reports-J/r26-032.txt", "name"),  # a GP102 board on driver 375.26
])
def test_a_gpu_whose_name_or_brand_is_unknown_error_does_not_answer(path: str,
                                                                      field: str) -> None:
    """`nvidia-smi -q` printing "Product Brand : Unknown Error" (round 7's r14-005) or
    "Product Name : Unknown Error" (round 11's r26-032): NVML's NVML_ERROR_UNKNOWN where a
    GPU that answers gives its product. GD102 fails naming it (it passed, taking "Unknown
    Error" for the GPU's name). A healthy -q whose Addressing Mode reads "Unknown Error" on
    every GPU (round 3's r2-096) still passes."""
    file = ROUND9.parent / path
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts)
    failed = [g for g in env.nvml.gpus if isinstance(g, Unavailable)]
    assert len(failed) == 1 and f"'Unknown Error' for its {field}" in failed[0].message
    assert statuses(env)["GD102"] is Status.FAIL
    healthy = ROUND9.parent / "round3" / "reports-B" / "r2-096.txt"
    assert statuses(read_reports([(healthy.name, healthy.read_text(encoding="utf-8"))]))[
        "GD102"] is Status.PASS
