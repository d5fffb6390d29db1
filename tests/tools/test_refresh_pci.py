"""tools/refresh_pci.py: products the CUDA GPUs pages do not list, placed by their chip (a chip's
parts share its compute capability). The excerpt below is pci.ids 2026.08.22 as published
(https://github.com/pciutils/pciids, pci.ids), lines of its NVIDIA section and a neighbour."""

from __future__ import annotations

import re

import pytest

from gpudoctor.compat import gpu_names, load_tables
from tools import refresh_pci as R

EXCERPT = """#	Version: 2026.08.22
#	Date:    2026-08-22 03:15:01
10de  NVIDIA Corporation
	0040  NV40 [GeForce 6800 Ultra]
	119a  GK104M [GeForce GTX 860M]
	1392  GM107M [GeForce GTX 860M]
	1b81  GP104 [GeForce GTX 1070]
	1b87  GP104 [P104-100]
	22ba  AD102 High Definition Audio Controller
	2507  GA106 [Geforce RTX 3050]
	25a2  GA107M [GeForce RTX 3050 Mobile]
	25a9  GA107M [GeForce RTX 2050]
	25ad  GA107 [GeForce RTX 2050]
10df  Emulex Corporation
	1ae5  LP6000 Fibre Channel Host Adapter
"""


def test_the_nvidia_devices_with_a_chip_of_a_cuda_family() -> None:
    version, devices = R.nvidia_devices(EXCERPT)
    assert version == "2026.08.22"
    chips = {d.pci_id: (d.chip, d.names) for d in devices}
    assert "0040" not in chips  # NV40: before CUDA
    assert "22ba" not in chips  # no product in brackets
    assert "1ae5" not in chips  # another vendor's
    assert chips["25a9"] == ("GA107", ("GeForce RTX 2050",))  # the mobile suffix dropped
    assert chips["119a"][0] == "GK104"


def test_a_product_takes_its_chips_compute_capability() -> None:
    _, devices = R.nvidia_devices(EXCERPT)
    rows, counts = R.derive(devices, R.page_products())
    placed = {n: r.cc for r in rows for n in r.names}
    assert placed["GeForce RTX 2050"] == "8.6"  # GA107's RTX 3050 Mobile is 8.6 on the page
    assert placed["P104-100"] == "6.1"  # GP104's GTX 1070 is 6.1
    # two chips of different compute capabilities sell one name: neither places it
    assert "GeForce GTX 860M" not in placed
    assert counts["written"] == len(placed)


@pytest.mark.slow  # every product's name matched twice: about 10 s
def test_the_block_in_the_tables_is_what_the_rule_gives_and_changes_no_page_row() -> None:
    """The written block: its header's counts add up, each of its names is placed at its row's
    compute capability, and no product of the pages (or other sourced rows) is placed
    differently with the block than without it."""
    text = R.GPU_TOML.read_text(encoding="utf-8")
    assert text.count(R.BEGIN) == 1 and text.count(R.END) == 1
    header = re.search(r"(\d+) more, of (\d+) chips", text)
    assert header is not None
    products = load_tables().gpu_products
    block = [p for p in products if p.source.startswith(R.SOURCE)]
    assert sum(len(p.names) for p in block) == int(header[1])
    assert len(block) == int(header[2])
    for row in block:
        assert row.status == "derived" and "compute capability " + row.cc in (row.note or "")
        for name in row.names:
            match = gpu_names.match_gpu(name, products)
            assert match is not None and match.cc == row.cc, name
    pages = R.page_products()
    for row in pages:
        for name in row.names:
            with_block = gpu_names.match_gpu(name, products)
            without = gpu_names.match_gpu(name, pages)
            assert (with_block and with_block.cc) == (without and without.cc), name


def test_a_virtual_gpus_name_is_not_placed_by_a_profiles_word() -> None:
    """vGPU profile names are not written: "GRID K200 vGPU" would place any "NVIDIA
    vGPU-32GB" (a VM's name for whatever board it slices) at Kepler's 3.0 by the variant rule
    (round 3's r1-113: a vLLM VM then failed GD404 and GD204 on a healthy machine)."""
    products = load_tables().gpu_products
    assert gpu_names.match_gpu("NVIDIA vGPU-32GB", products) is None
    assert not any("vGPU" in n for p in products if p.source.startswith(R.SOURCE)
                   for n in p.names)
