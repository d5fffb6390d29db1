#!/usr/bin/env python3
"""Enumerate the messages NVIDIA's own sources print, for `gpudoctor explain` (maintainers).

    python tools/extract_nvidia_messages.py --kernel DIR --nccl DIR --toolkit DIR [--out DIR]
    python tools/extract_nvidia_messages.py --check --kernel DIR --nccl DIR --toolkit DIR

Each DIR is a checkout (or `git archive`) of one of NVIDIA's public repositories:

- `--kernel`: NVIDIA/open-gpu-kernel-modules. Every NVSwitch SXid (`NVSWITCH_ERR_*` of
  `src/common/nvswitch/interface/ctrl_dev_nvswitch.h`: the number `nvidia-nvswitch` logs as
  `SXid (PCI:...): 12028, ...`) → `sxids.toml`; every error-level message the kernel module
  prints while loading, probing and serving the device (`nv_printf(NV_DBG_ERRORS, "NVRM: ...")`
  and `NV_DEV_PRINTF(NV_DBG_ERRORS, ...)` of `NVRM_FILES`) → `nvrm.toml`.
- `--nccl`: NVIDIA/nccl. Every `WARN("...")` format string of `src/` (what `NCCL_DEBUG=WARN`
  prints after `NCCL WARN`) with its source file → `nccl_warnings.toml`.
- `--toolkit`: NVIDIA/nvidia-container-toolkit. Every error format string of its Go code
  (`fmt.Errorf("...")`, `errors.New("...")`, outside tests and vendored code) with its file
  → `container_toolkit.toml`.

The files record their source and their count; `--check` re-extracts and exits 1 when a shipped
file differs. Which cause each message points to is not extracted: gpudoctor judges that in
`gpudoctor/explain/classes.toml`, by hand.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "gpudoctor" / "explain"

SXID_HEADER = "src/common/nvswitch/interface/ctrl_dev_nvswitch.h"
NVRM_FILES = ("kernel-open/nvidia/nv.c", "kernel-open/nvidia/nv-pci.c",
              "src/nvidia/arch/nvalloc/unix/src/osapi.c",
              "src/nvidia/arch/nvalloc/unix/src/osinit.c")
MIN_LITERAL = 12  # a message whose fixed text is shorter cannot be told from others

_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_PRINTF = re.compile(r"(?:nv_printf|NV_DEV_PRINTF)\s*\(\s*NV_DBG_ERRORS\s*,\s*(?:nv\s*,\s*)?")
_WARN = re.compile(r"\bWARN\s*\(\s*")
_GO_ERR = re.compile(r'(?:fmt\.Errorf|errors\.New)\(\s*"((?:[^"\\\n]|\\.)*)"')
_SXID = re.compile(r"^\s*(NVSWITCH_ERR_HW_\w+)\s*=\s*(\d+)\s*,", re.M)


def _literal_after(text: str, pos: int) -> str:
    """The C string literal that starts at `pos` (adjacent literals concatenated)."""
    parts = []
    while True:
        m = re.compile(r'\s*(?:NvU64_fmt\w+\s*)?').match(text, pos)
        pos = m.end() if m else pos
        s = _STRING.match(text, pos)
        if not s:
            break
        parts.append(s.group(1))
        pos = s.end()
    return bytes("".join(parts), "utf-8").decode("unicode_escape").strip()


def _fixed_text(template: str) -> str:
    return re.sub(r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[a-zA-Z]", "", template)


def _version(repo: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo), "describe", "--tags", "--always"],
                             capture_output=True, text=True, check=True, timeout=30)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return repo.name


def sxids(kernel: Path) -> list[tuple[str, int]]:
    """Every NVSwitch error number: (name, number)."""
    text = (kernel / SXID_HEADER).read_text(encoding="utf-8", errors="replace")
    return [(m[1], int(m[2])) for m in _SXID.finditer(text)]


def nvrm(kernel: Path) -> list[tuple[str, str]]:
    """Every error-level NVRM message of NVRM_FILES: (template, file), in file order."""
    found: dict[str, str] = {}
    for rel in NVRM_FILES:
        text = (kernel / rel).read_text(encoding="utf-8", errors="replace")
        for m in _PRINTF.finditer(text):
            msg = _literal_after(text, m.end())
            msg = re.sub(r"\s*\n\s*NVRM:\s*", " ", msg).removeprefix("NVRM:").strip()
            if len(_fixed_text(msg)) >= MIN_LITERAL:
                found.setdefault(" ".join(msg.split()), rel)
    return list(found.items())


def nccl_warnings(nccl: Path) -> list[tuple[str, str]]:
    """Every `WARN("...")` format of NCCL's sources: (template, file)."""
    found: dict[str, str] = {}
    for path in sorted((nccl / "src").rglob("*")):
        if path.suffix not in (".cc", ".h", ".cu", ".c"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in _WARN.finditer(text):
            msg = " ".join(_literal_after(text, m.end()).split())
            if len(_fixed_text(msg)) >= MIN_LITERAL:
                found.setdefault(msg, str(path.relative_to(nccl)))
    return list(found.items())


def toolkit_errors(toolkit: Path) -> list[tuple[str, str]]:
    """Every Go error format of the container toolkit (no tests, no vendored code)."""
    found: dict[str, str] = {}
    for top in ("cmd", "internal", "pkg"):
        for path in sorted((toolkit / top).rglob("*.go")):
            if path.name.endswith("_test.go") or "vendor" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in _GO_ERR.finditer(text):
                msg = " ".join(m[1].split())
                if len(_fixed_text(msg)) >= MIN_LITERAL:
                    found.setdefault(msg, str(path.relative_to(toolkit)))
    return list(found.items())


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(title: str, source: str, version: str, rows: list[tuple[str, object]],
           key: str) -> str:
    """A TOML file: what it is, where from, how many, then one inline array per entry."""
    lines = [f"# {title}: every entry, read from NVIDIA's sources by",
             "# tools/extract_nvidia_messages.py. Do not edit by hand; re-run the tool.",
             f"title = {_q(title)}", f"source = {_q(source)}", f"version = {_q(version)}",
             f"count = {len(rows)}", f"{key} = ["]
    for a, b in rows:
        lines.append(f"  [{_q(a) if isinstance(a, str) else a}, "
                     f"{_q(b) if isinstance(b, str) else b}],")
    lines.append("]")
    return "\n".join(lines) + "\n"


def outputs(args: argparse.Namespace) -> dict[str, str]:
    """File name → content, for every source given."""
    out = {}
    if args.kernel:
        v = _version(args.kernel)
        out["sxids.toml"] = render(
            "NVSwitch SXids (NVSWITCH_ERR_*)",
            f"https://github.com/NVIDIA/open-gpu-kernel-modules/blob/{v}/{SXID_HEADER}", v,
            list(sxids(args.kernel)), "sxid")
        out["nvrm.toml"] = render(
            "NVRM error messages of the kernel module",
            f"https://github.com/NVIDIA/open-gpu-kernel-modules/tree/{v}", v,
            list(nvrm(args.kernel)), "message")
    if args.nccl:
        v = _version(args.nccl)
        out["nccl_warnings.toml"] = render(
            "NCCL WARN messages", f"https://github.com/NVIDIA/nccl/tree/{v}", v,
            list(nccl_warnings(args.nccl)), "warning")
    if args.toolkit:
        v = _version(args.toolkit)
        out["container_toolkit.toml"] = render(
            "NVIDIA Container Toolkit errors",
            f"https://github.com/NVIDIA/nvidia-container-toolkit/tree/{v}", v,
            list(toolkit_errors(args.toolkit)), "error")
    return out


def main(argv: list[str] | None = None) -> int:
    """Write (or `--check`) the files of the sources given; exit 1 on a stale file."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", type=Path, help="an open-gpu-kernel-modules checkout")
    ap.add_argument("--nccl", type=Path, help="an NVIDIA/nccl checkout")
    ap.add_argument("--toolkit", type=Path, help="an nvidia-container-toolkit checkout")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stale = 0
    for name, text in outputs(args).items():
        path = args.out / name
        if args.check:
            old = path.read_text(encoding="utf-8") if path.is_file() else ""
            if old != text:
                print(f"{path}: differs from the sources given", file=sys.stderr)
                stale += 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
