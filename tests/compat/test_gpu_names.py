"""gpudoctor.compat.gpu_names: NVIDIA's CUDA GPUs catalogue in gpu.toml, and GPU names as
drivers print them matched to it.

The names below are real: each was printed by NVML, nvidia-smi or torch in a public report
(the link), and the compute capability is the one NVIDIA or the report itself (torch's "with
CUDA capability sm_XY") gives for that GPU. A name is placed by rule (gpudoctor/compat/
gpu_names.py), never by a row per variant; a name no rule places stays unknown.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpudoctor.compat import Tables, gpu_names
from gpudoctor.model import Unavailable
from gpudoctor.reports.read import read_reports

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

CURRENT = "https://developer.nvidia.com/cuda-gpus"
LEGACY = "https://developer.nvidia.com/cuda-legacy-gpus"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def page_names(tables: Tables, page: str) -> list[str]:
    return [name for row in tables.gpu_products if row.source == page for name in row.names]


def test_the_whole_catalogue_of_both_pages(tables: Tables) -> None:
    """Every product both pages print, as printed (repeats included), counted against the
    pages: 84 on the current page (12.1 down to 7.5), 370 on the legacy one (7.2 down to 1.0;
    360 distinct, the page repeats ten)."""
    current, legacy = page_names(tables, CURRENT), page_names(tables, LEGACY)
    assert (len(current), len(set(current))) == (84, 84)
    assert (len(legacy), len(set(legacy))) == (370, 360)
    ccs = {row.cc for row in tables.gpu_products if row.source == CURRENT}
    assert ccs == {"12.1", "12.0", "11.0", "10.3", "10.0", "9.0", "8.9", "8.7", "8.6", "8.0", "7.5"}
    ccs = {row.cc for row in tables.gpu_products if row.source == LEGACY}
    assert ccs == {"7.2", "7.0", "6.2", "6.1", "6.0", "5.3", "5.2", "5.0", "3.7", "3.5", "3.2",
                   "3.0", "2.1", "2.0", "1.3", "1.2", "1.1", "1.0"}
    for name in ("GeForce RTX 3050", "GeForce GTX 1650 Ti", "Quadro P5200", "Quadro M2200",
                 "Quadro GP100", "Jetson T5000", "NVIDIA RTX PRO 4500 Blackwell Server Edition"):
        assert name in current + legacy, name


def test_every_product_row_cites_its_page_and_has_an_arch(tables: Tables) -> None:
    archs = {a.cc: a for a in tables.gpu_archs}
    for row in tables.gpu_products:
        assert row.cc in archs and archs[row.cc].family, row
        assert row.segment in ("data center", "workstation/consumer", "jetson"), row
        if row.source not in (CURRENT, LEGACY):  # not on the pages: says so, and why
            says = row.note is not None and "Not on NVIDIA's CUDA GPUs pages" in row.note
            assert says or row.status == "derived", row
        if row.status == "copy":
            assert row.note and "verbatim" in row.note, row
    assert archs["7.5"].products[:2] == ("NVIDIA T4", "QUADRO RTX 8000")  # the page's order


@pytest.mark.slow
def test_every_page_name_finds_itself(tables: Tables) -> None:
    """A name as the page prints it is matched to its own row, except where the page itself
    lists one name under two compute capabilities (GeForce G210M: 1.1 and 1.2)."""
    by_name: dict[str, set[str]] = {}
    for row in tables.gpu_products:
        for name in row.names:
            by_name.setdefault(name, set()).add(row.cc)
    twice = {n for n, ccs in by_name.items() if len(ccs) > 1}
    assert twice == {"GeForce G210M"}
    for name, ccs in by_name.items():
        found = tables.match_gpu(name)
        if name in twice:
            assert found is None, name
            continue
        assert found is not None and found.cc in ccs, (name, found)


# (name as printed, compute capability, where it was printed)
REAL_NAMES = [
    ("NVIDIA GeForce RTX 3090", "8.6", "https://github.com/pytorch/pytorch/issues/146569"),
    ("NVIDIA RTX A6000", "8.6", "https://github.com/pytorch/pytorch/issues/174166"),
    ("NVIDIA H100", "9.0", "https://github.com/ogx-ai/ogx/issues/1798"),
    ("NVIDIA A100 80GB PCIe", "8.0", "https://github.com/meta-llama/llama-cookbook/issues/218"),
    ("NVIDIA A100-SXM4-40GB", "8.0", "https://github.com/pytorch/pytorch/issues/134366"),
    ("Tesla T4", "7.5", "https://github.com/pytorch/pytorch/issues/46973"),
    ("NVIDIA H100 80GB HBM3", "9.0", "https://github.com/Skovorp/feral/issues/18"),
    ("NVIDIA H100 PCIe", "9.0", "https://github.com/pytorch/pytorch/issues/110153"),
    ("NVIDIA GeForce RTX 4090", "8.9", "https://github.com/vllm-project/vllm/issues/13497"),
    ("NVIDIA GeForce RTX 5060 Ti", "12.0", "https://github.com/NVIDIA/cuEquivariance/issues/243"),
    ("NVIDIA GeForce RTX 5090 D", "12.0", "https://github.com/pytorch/pytorch/issues/150733"),
    ("TITAN Xp", "6.1", "https://github.com/pytorch/pytorch/issues/30071"),
    ("NVIDIA GeForce RTX 2080 Ti", "7.5", "https://github.com/vllm-project/vllm/issues/18467"),
    ("NVIDIA GeForce GTX 1050 Ti", "6.1", "https://github.com/pytorch/pytorch/issues/51858"),
    ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6", "https://github.com/pytorch/pytorch/issues/51858"),
    ("NVIDIA GeForce RTX 4080 Laptop GPU", "8.9",
     "https://github.com/pytorch/pytorch/issues/122924"),
    ("NVIDIA GeForce RTX 4070 Laptop GPU", "8.9", "https://github.com/vllm-project/vllm/pull/9293"),
    ("GeForce 210", "1.2", "https://github.com/pytorch/pytorch/issues/31876"),
    ("GeForce RTX 2080 Ti", "7.5", "https://github.com/pytorch/pytorch/issues/44303"),
    ("Tesla P100-PCIE-16GB", "6.0", "https://github.com/pytorch/pytorch/issues/37320"),
    ("NVIDIA GeForce RTX 5090", "12.0", "https://github.com/vllm-project/vllm/issues/21028"),
    ("TITAN RTX", "7.5", "https://github.com/pytorch/pytorch/issues/40682"),
    ("NVIDIA GeForce RTX 3060 ...", "8.6", "https://github.com/microsoft/WSL/issues/11589"),
    ("NVIDIA GeForce GTX 680", "3.0", "https://github.com/thamada/gls/blob/"
     "ca3f863e14859e8e2de421f072d40ee5eaa68782/gls/GTX680_smi.py"),
    ("NVIDIA A40", "8.6", "https://github.com/thamada/gls/blob/"
     "b09ef139265ffc7e3c78006346981de8e4d70499/gls/A40x10_smi.py"),
    ("NVIDIA A100-SXM4-80GB", "8.0", "https://github.com/thamada/gls/blob/"
     "b09ef139265ffc7e3c78006346981de8e4d70499/gls/A100SXMx4_smi.py"),
    ("NVIDIA A10", "8.6", "https://github.com/leptonai/gpud/blob/"
     "5098ae174a618f0893c79cd774d1d3b4788e5360/components/accelerator/nvidia/query/testdata/"
     "nvidia-smi-query.535.129.03.out.0.valid.a10"),
    ("NVIDIA A10G", "8.6", "https://github.com/influxdata/telegraf/blob/"
     "cd535165d06debedae7b5caed1816f3a6275a6da/plugins/inputs/nvidia_smi/testdata/a10g.xml"),
    ("Tesla K80", "3.7", "https://github.com/microsoft/pai/blob/"
     "663b06db1375b40780bb12644b737876c11f1f32/src/job-exporter/test/data/"
     "nvidia_smi_out_of_order.xml"),
    ("Tesla V100-SXM3-32GB", "7.0", "https://github.com/microsoft/pai/blob/"
     "2c54c753f98b74525c1c729be43f138050e05a38/src/job-exporter/test/data/"
     "nvidia_smi_retired_pages.xml"),
    # torch's own warning names the GPU and its compute capability
    ("A100-SXM4-40GB", "8.0", "https://github.com/pytorch/pytorch/issues/45028"),
    ("GeForce RTX 3080", "8.6", "https://github.com/pytorch/pytorch/issues/45028"),
    ("NVIDIA A100-SXM4-80GB", "8.0", "https://github.com/andreimargeloiu/WPFS/issues/3"),
    ("RTX A6000", "8.6", "https://github.com/nerfstudio-project/nerfacc/issues/80"),
    ("NVIDIA RTX A4000", "8.6", "https://github.com/facebookresearch/omni3d/issues/14"),
    ("NVIDIA GeForce RTX 5070 Ti", "12.0", "https://github.com/neosun100/cosyvoice-docker/issues/6"),
    ("NVIDIA B200", "10.0", "https://github.com/vllm-project/vllm/issues/20173"),
    ("NVIDIA H800", "9.0", "https://github.com/liguodongiot/llm-action/blob/main/docs/llm-base/"
     "h800-env-install.md"),
    ("NVIDIA L20", "8.9", "https://github.com/drinkingcoder/FlowFormer-Official/issues/49"),
    ("NVIDIA GeForce GTX 1080 Ti", "6.1", "https://github.com/turboderp-org/exllamav2/issues/786"),
    # collect_env's GPU models beside a table cut before its rows
    ("Tesla V100-PCIE-16GB", "7.0", "https://github.com/pytorch/pytorch/issues/43058"),
    # joined as people type them
    ("RTX2060", "7.5", "https://github.com/riffusion/riffusion-hobby/issues/145"),
]


@pytest.mark.parametrize(("name", "cc", "where"), REAL_NAMES)
def test_real_names_from_public_reports(tables: Tables, name: str, cc: str, where: str) -> None:
    found = tables.match_gpu(name)
    assert found is not None, (name, where)
    assert found.cc == cc, (name, found.describe(), where)


@pytest.mark.slow
def test_every_gpu_name_in_the_report_fixtures_is_placed_or_known_unknown(tables: Tables) -> None:
    """The report readers' GPU names from every real report under tests/fixtures: each is in
    REAL_NAMES, or one no rule can place (a name nvidia-smi cut short, a GPU outside both
    pages)."""
    unknown = {"NVIDIA GeForce ...", "Tesla V100S-PCI...", "(name not in the report)"}
    listed = {name for name, _, _ in REAL_NAMES}
    seen: set[str] = set()
    for folder in ("reports", "gpu_states"):
        index = tomllib.loads((FIXTURES / folder / "index.toml").read_text(encoding="utf-8"))
        for entry in index.get("report", []) + index.get("state", []):
            path = FIXTURES / folder / entry["file"]
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                env = read_reports([(path.name, text)])
            except ValueError:
                continue
            if not isinstance(env.nvml, Unavailable):
                seen |= {g.name for g in env.nvml.gpus if not isinstance(g, Unavailable)}
    assert seen >= {"NVIDIA H100 80GB HBM3", "Tesla V100-SXM3-32GB"}
    assert seen - listed == unknown
    for name in unknown:
        assert tables.match_gpu(name) is None, name


@pytest.mark.parametrize(
    ("name", "cc", "rule", "matched"),
    [
        # Laptop, Max-Q, memory and form-factor suffixes, MIG: the name rule on the core
        ("NVIDIA GeForce RTX 3050 Laptop GPU", "8.6", "name", "GeForce RTX 3050"),
        ("NVIDIA GeForce RTX 3050 Ti Laptop GPU", "8.6", "name", "GeForce RTX 3050 Ti"),
        ("NVIDIA GeForce GTX 1650 Ti with Max-Q Design", "7.5", "name", "GeForce GTX 1650 Ti"),
        ("Tesla V100-SXM2-16GB", "7.0", "name", "NVIDIA V100"),
        ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", "8.0", "name", "NVIDIA A100"),
        ("NVIDIA H100 NVL", "9.0", "name", "NVIDIA H100"),
        ("NVIDIA GH200 480GB", "9.0", "name", "NVIDIA GH200"),
        ("NVIDIA RTX A2000 8GB Laptop GPU", "8.6", "name", "NVIDIA RTX A2000"),
        ("Quadro RTX 5000 with Max-Q Design", "7.5", "name", "QUADRO RTX 5000"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9", "name", "NVIDIA RTX 6000 Ada"),
        ("Quadro RTX 6000", "7.5", "name", "QUADRO RTX 6000"),
        ("GeForce GTX TITAN X", "5.2", "name", "GeForce GTX TITAN X"),
        ("TITAN X (Pascal)", "6.1", "name", "NVIDIA TITAN X"),
        ("Tesla K40m", "3.5", "name", "Tesla K40"),  # a Tesla board's form-factor letter
        ("NVIDIA Thor", "11.0", "name", "NVIDIA Thor"),
        ("NVIDIA A800-SXM4-80GB", "8.0", "name", "NVIDIA A800"),
        # the China-market "D" joined to the number (round 22's r48-018, "a RTX5090d"), as
        # "RTX 5090 D" is placed; Quadro's own "D" boards keep their rows
        ("RTX5090d", "12.0", "name", "GeForce RTX 5090"),
        ("Quadro K2000D", "3.0", "name", "Quadro K2000D"),
        # the page lists only a variant of it
        ("NVIDIA GeForce GTX 1650", "7.5", "variant", "GeForce GTX 1650 Ti"),
        ("Orin (nvgpu)", "8.7", "variant", "Jetson Orin NX"),
        ("NVIDIA GB10", "12.1", "variant", "NVIDIA GB10 (DGX Spark)"),
        # a model number of a line whose listed products share one compute capability
        ("NVIDIA GeForce GTX 1660 SUPER", "7.5", "series", "GeForce GTX 1650 Ti"),
        ("NVIDIA RTX A5500", "8.6", "series", "NVIDIA RTX A6000"),
        ("NVIDIA RTX 5880 Ada Generation", "8.9", "series", "NVIDIA RTX 6000 Ada"),
    ],
)
def test_rules(tables: Tables, name: str, cc: str, rule: str, matched: str) -> None:
    found = tables.match_gpu(name)
    assert found is not None, name
    assert (found.cc, found.rule, found.name) == (cc, rule, matched)


@pytest.mark.parametrize(
    "name",
    [
        "Tesla M10",  # below the listed Tesla M40/M60: Maxwell 5.0, not 5.2
        "GeForce GT 640",  # the page lists GDDR5 (3.5) and GDDR3 (2.1) boards
        "GeForce G210M",  # the page lists it under 1.1 and 1.2
        "NVIDIA RTX 6000 A...",  # cut short: may be the RTX 6000 Ada
        "NVIDIA RTX 6000...",
        "MIG 3g.20gb Device 0",  # a MIG device line without its GPU's name
        "NVIDIA GeForce GTX 860M",  # a GK104 (3.0) and a GM107 (5.0) board: pci.ids
        "GRID A800D-40C",  # a vGPU profile's name
        "Graphics Device",
        "",
        "NVIDIA",
    ],
)
def test_names_no_rule_places(tables: Tables, name: str) -> None:
    assert tables.match_gpu(name) is None, tables.match_gpu(name)


@pytest.mark.parametrize(("name", "cc"), [
    # no rule of the pages' names places them; the PCI ID database's chip does
    ("NVIDIA GeForce RTX 2050", "8.6"),  # below the listed RTX 2060-2080: an Ampere GA107
    ("NVIDIA RTX A400", "8.6"),  # a three-digit RTX A: GA107
    ("NVIDIA GeForce MX450", "7.5"),  # TU117
    ("NVIDIA P104-100", "6.1"),  # a mining board: GP104
])
def test_names_placed_by_their_chip(tables: Tables, name: str, cc: str) -> None:
    found = tables.match_gpu(name)
    assert found is not None and found.cc == cc, found
    assert found.product.source.startswith("https://pci-ids.ucw.cz/")


# from tests/fuzz/test_regressions.py, whose module-wide marks were slow and subprocess: slow
# kept (1.4 s here); it starts no process
@pytest.mark.slow
def test_gpu_name_matching_reads_the_table_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching a GPU name re-normalised all ~900 product names on every call (~30 ms each:
    the fuzzer's report with many GPUs ran past its bound); the table is now normalised once
    and each name matched once."""
    from collections import Counter

    from gpudoctor.compat import gpu_names, load_tables

    tables = load_tables()
    calls: Counter[str] = Counter()
    original = gpu_names.normalize

    def counting(text: str) -> str:
        calls["normalize"] += 1
        return original(text)

    monkeypatch.setattr(gpu_names, "normalize", counting)
    gpu_names._entries.cache_clear()
    gpu_names.match_gpu.cache_clear()
    for _ in range(3):
        for i in range(100):
            tables.match_gpu(f"NVIDIA GeForce RTX {3000 + i}")
    products = sum(len(p.names) for p in tables.gpu_products)
    assert calls["normalize"] < 2 * products + 100 * 10, calls


def test_names_are_compared_without_brand_punctuation_and_noise() -> None:
    assert gpu_names.normalize("Tesla V100-SXM2-16GB") == "v100 sxm2 16gb"
    assert gpu_names.normalize("NVIDIA GeForce RTX 3090 (Ti)") == "rtx 3090 ti"
    assert gpu_names.core("Tesla V100-SXM2-16GB") == "v100"
    assert gpu_names.core("NVIDIA A100-SXM4-40GB MIG 3g.20gb") == "a100"
    assert gpu_names.core("NVIDIA GeForce GTX 1650 Ti with Max-Q Design") == "gtx 1650 ti"
    assert gpu_names.core("NVIDIA RTX 6000 Ada Generation") == "rtx 6000 ada"


def test_a_match_says_how_it_was_placed(tables: Tables) -> None:
    exact = tables.match_gpu("NVIDIA GeForce RTX 3050 Laptop GPU")
    assert exact is not None and exact.describe() == exact.name == "GeForce RTX 3050"
    by_series = tables.match_gpu("NVIDIA GeForce GTX 1660 SUPER")
    assert by_series is not None and by_series.cc == by_series.product.cc == "7.5"
    assert by_series.describe() == "GeForce GTX 1650 Ti (by the series rule)"


@pytest.mark.parametrize(("name", "product"), [
    # round 21's r45-014 (haotian-liu/LLaVA): "GTX 3090", no GeForce 30 is a GTX
    ("GTX 3090", "GeForce RTX 3090"),
    ("RTX 1080 Ti", "GeForce GTX 1080 Ti"),
    ("NVIDIA GTX 4090 Laptop GPU", "GeForce RTX 4090"),
])
def test_geforces_other_line_word(tables: Tables, name: str, product: str) -> None:
    found = tables.match_gpu(name)
    assert found is not None and found.name == product and found.rule == "line word"


@pytest.mark.parametrize("name", ["GTX 9999", "RTX 1650"])
def test_the_other_line_word_needs_the_product_it_names(tables: Tables, name: str) -> None:
    # no product of that number under either word ("GTX 9999"), or none the other word names
    # whole (the page lists "GTX 1650 Ti", not "GTX 1650"): unknown
    assert tables.match_gpu(name) is None


@pytest.mark.parametrize(("haystack", "needle", "found"), [
    ("geforce rtx 3090", "rtx 3090", True),
    ("geforce rtx 3090 ti", "rtx 3090", True),  # a word after it
    ("geforce rtx 30900", "rtx 3090", False),  # a digit after it
    ("rtx 3090", "rtx 3090", True),
    ("a100 sxm4", "100", False),  # a letter before it
    ("v1.100", "100", False),  # a "." before it (a version, not a model)
    ("l4 and l40", "l40", True),
    ("l40s", "l40", False),
    ("x", "", False),
])
def test_contains_is_whole_words(haystack: str, needle: str, found: bool) -> None:
    """`_contains` as the pattern (?<![a-z0-9.])needle(?![a-z0-9]) read it, without a regex
    per needle (which overflowed re's cache on a report of 1000 GPUs)."""
    from gpudoctor.compat.gpu_names import _contains

    assert _contains(haystack, needle) is found
