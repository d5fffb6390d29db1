"""Products NVIDIA's CUDA GPUs pages do not list, placed by their chip: the block of
`compat_tables/gpu.toml` that this tool writes from the PCI ID database (pci.ids).

The CUDA GPUs pages list a product per cell; NVML names parts they never list: laptop parts
sold under a lower line's number (the "GeForce RTX 2050" is an Ampere GA107, below the Turing
RTX 2060), mining boards ("P104-100"), China-market boards ("A800", "H20"), OEM variants. The
PCI ID database, which `lspci` reads, names each device's chip beside its product
("GA107 [GeForce RTX 2050]"). The rule: a chip's parts share its compute capability, so a
product the pages do not place takes the compute capability the pages give every product of
the same chip that they do place (GA107's GeForce RTX 3050, NVIDIA A2, RTX A2000 …: all 8.6).
A chip whose placed products disagree, or of which the pages place none, decides nothing, and
its products stay unknown.

A chip is the device name's first word without the database's suffixes for mobile and
professional parts (GA107M, AD104GLM → GA107, AD104; a revision's B stays: GK110B, GM20B),
of a CUDA-capable family only (G80 on: the NV and G7x chips before it run no CUDA).

    python -m tools.refresh_pci /usr/share/misc/pci.ids          # what it would write
    python -m tools.refresh_pci pci.ids --write                   # rewrite the block

Source: https://pci-ids.ucw.cz (the database; its git mirror github.com/pciutils/pciids).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from gpudoctor.compat import gpu_names, load_tables
from gpudoctor.compat.rows import GpuProduct
from tools.refresh_write import toml_list, toml_string

GPU_TOML = Path(__file__).resolve().parents[1] / "compat_tables" / "gpu.toml"
BEGIN = "# ---- begin: written by tools/refresh_pci.py from pci.ids; do not edit by hand ----"
END = "# ---- end of what tools/refresh_pci.py writes ----"
SOURCE = "https://pci-ids.ucw.cz/read/PC/10de"
_DEVICE = re.compile(r"^\t(?P<id>[0-9a-f]{4})  (?P<desc>[^\n]+)$")
# the chips of CUDA-capable families only: G8x/G9x and GT2xx (Tesla), GF (Fermi), GK, GM, GP,
# GV, TU, GA, AD, GH, GB; the NV and G7x chips before them run no CUDA
_CHIP = re.compile(r"^(?P<chip>(?:G[89]\d|GT2\d\d|G[FKMPVAHB]\d{2,3}|TU\d{3}|AD\d{3})[AB]?)"
                   r"(?:GLM|GLT|GLS|GL|M)?$")
# a product's name: with a digit, and no word of a chip's other functions, no bare memory
# size ("480GB"), no engineering sample, no virtual GPU's profile ("GRID K200 vGPU", "GRID K2
# NVS USM": the word alone would place any "NVIDIA vGPU-32GB" by gpu_names' variant rule)
_NOT_A_PRODUCT = re.compile(r"(?i)\b(?:audio|bridge|controller|usb|smbus|memory|lpc|ide|sata|"
                            r"ethernet|coprocessor|host|pci|isa|apu|nforce|graphics device|"
                            r"engineering sample|vGPU|USM)\b|^\d+ ?GB$|^Max-Q\b")


@dataclass(frozen=True)
class Device:
    pci_id: str
    chip: str
    names: tuple[str, ...]


def nvidia_devices(text: str) -> tuple[str, list[Device]]:
    """(the database's version line, each NVIDIA device whose name gives a chip and products
    in brackets)."""
    version = next((line.split(":", 1)[1].strip() for line in text.splitlines()[:20]
                    if line.startswith("#\tVersion:")), "unknown")
    devices, inside = [], False
    for line in text.splitlines():
        if re.match(r"^[0-9a-f]{4} ", line):
            inside = line.startswith("10de ")
            continue
        m = _DEVICE.match(line) if inside else None
        if m is None:
            continue
        head, _, rest = m["desc"].partition(" [")
        chip = _CHIP.match(head.strip())
        if chip is None or not rest.endswith("]"):
            continue
        names = tuple(n.strip() for n in rest[:-1].split(" / ") if n.strip())
        names = tuple(n for n in names if any(c.isdigit() for c in n)
                      and not _NOT_A_PRODUCT.search(n))
        if names:
            devices.append(Device(m["id"], chip["chip"], names))
    return version, devices


@dataclass(frozen=True)
class Derived:
    chip: str
    pci_id: str  # the first device of the chip that names one of `names`
    cc: str
    segment: str
    names: tuple[str, ...]
    placed: tuple[str, ...]  # the chip's products the pages place, as the pages name them


def derive(devices: list[Device], products: tuple[GpuProduct, ...]
           ) -> tuple[list[Derived], dict[str, int]]:
    """The rows to write and the counts the block's header states."""
    placed: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    segment: dict[str, set[str]] = defaultdict(set)
    unplaced: dict[str, list[str]] = defaultdict(list)
    first: dict[str, str] = {}
    names = [(d.chip, n, d.pci_id) for d in devices for n in d.names]
    by_pages = 0
    for chip, name, pci_id in names:
        match = gpu_names.match_gpu(name, products)
        if match is not None:
            by_pages += 1
            placed[chip][match.cc].add(match.name)
            segment[chip].add(match.product.segment)
        elif name not in unplaced[chip]:
            unplaced[chip].append(name)
            first.setdefault(chip, pci_id)
    rows: list[Derived] = []
    decided = {chip: next(iter(ccs)) for chip, ccs in placed.items() if len(ccs) == 1}
    # every chip a name is sold on ("GeForce GTX 860M": a GK104 and a GM107): placed only
    # where each of them is decided, and alike
    claimed: dict[str, set[str | None]] = defaultdict(set)
    for chip, left in unplaced.items():
        for n in left:
            claimed[n.lower()].add(decided.get(chip))
    for chip, left in unplaced.items():
        if chip not in decided:
            continue
        cc = decided[chip]
        seg = segment[chip].pop() if len(segment[chip]) == 1 else "workstation/consumer"
        kept = tuple(n for n in left if claimed[n.lower()] == {cc})
        rows.append(Derived(chip, first[chip], cc, seg, kept, tuple(sorted(placed[chip][cc]))))
    seen: set[str] = set()
    out = []
    for r in sorted(rows, key=lambda r: r.chip):
        kept = tuple(n for n in r.names if n.lower() not in seen)
        seen.update(n.lower() for n in kept)
        if kept:
            out.append(replace(r, names=kept))
    counts = {"devices": len(devices), "names": len(names), "placed": by_pages,
              "written": sum(len(r.names) for r in out), "chips": len(out)}
    return out, counts


def block(version: str, rows: list[Derived], counts: dict[str, int]) -> str:
    lines = [BEGIN,
             f"# pci.ids {version}: {counts['devices']} NVIDIA devices whose names give a chip "
             f"and products, {counts['names']} product names; {counts['placed']} of them "
             "placed by the CUDA GPUs pages' rows above (gpudoctor/compat/gpu_names.py); "
             f"{counts['written']} more, of {counts['chips']} chips, placed below by their "
             "chip's rule (the module docstring of tools/refresh_pci.py); the rest unknown.", ""]
    for r in rows:
        shown = ", ".join(r.placed[:6]) + (" …" if len(r.placed) > 6 else "")
        note = (f"pci.ids {version} names these {r.chip} parts; the {r.chip} parts the CUDA "
                f"GPUs pages place ({shown}) are all compute capability {r.cc}")
        lines += ["[[product]]", f'cc = "{r.cc}"', f"segment = {toml_string(r.segment)}",
                  f"names = {toml_list(r.names)}",
                  f"source = {toml_string(f'{SOURCE}/{r.pci_id}')}", 'status = "derived"',
                  f"note = {toml_string(note)}", ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


def without_block(text: str) -> str:
    """gpu.toml without the block this tool writes."""
    if BEGIN not in text:
        return text
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END + "\n")
    return head.rstrip("\n") + "\n" + tail


def page_products() -> tuple[GpuProduct, ...]:
    """The tables' products without the rows of this tool (so that it derives from the pages
    and the other sourced rows alone)."""
    return tuple(p for p in load_tables().gpu_products if not p.source.startswith(SOURCE))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pci_ids", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite gpu.toml's block")
    args = parser.parse_args(argv)
    version, devices = nvidia_devices(args.pci_ids.read_text(encoding="utf-8",
                                                             errors="replace"))
    rows, counts = derive(devices, page_products())
    text = block(version, rows, counts)
    if not args.write:
        sys.stdout.write(text)
        return 0
    current = without_block(GPU_TOML.read_text(encoding="utf-8"))
    GPU_TOML.write_text(current.rstrip("\n") + "\n\n" + text, encoding="utf-8")
    print(f"wrote {counts['written']} names of {counts['chips']} chips to {GPU_TOML}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
