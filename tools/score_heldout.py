#!/usr/bin/env python3
"""Score gpudoctor against a held-out set gathered and labelled blind (maintainers).

    python tools/score_heldout.py explain DIR [--json OUT] [--quiet]
    python tools/score_heldout.py reports DIR [--json OUT] [--quiet]

DIR holds an `index.toml` and the texts it names (the layout the label rules in
`tests/fixtures/heldout/README.md` prescribe). Score a held-out set once, report the figure and
never tune to it: after scoring, the set becomes development data and the next round needs a
fresh one.

`explain`: each text is explained with nothing probed (`probe=None`), as a maintainer reads a
stranger's paste. A positive is *explained* when the best diagnosis's cause class (the label
vocabulary: `CAUSE_CLASSES`) is the label's `class` or one of its `also`; a negative
(`class = "not-environment"`) is *answered honestly* when no diagnosis is given or the best one
is itself of class `not-environment` (it blames the program, not the machine).

`reports`: each report is read as `check --from-report` reads it and judged by every check; it
is *right* when every id in `expect_fail` FAILs, every id in `expect_pass` PASSes and, for a
`healthy` report, nothing FAILs. A report the readers refuse is wrong unless its label expects
nothing (`healthy = false`, both lists empty).

Prints one line per miss and the totals; `--json` writes every row.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

# The label vocabulary of the held-out explain sets (tests/fixtures/heldout/README.md).
CAUSE_CLASSES = (
    "no-driver", "driver-too-old", "driver-mismatch", "cuda-init-failure", "no-gpu-visible",
    "container-gpu-setup", "hardware-fault", "fabric-manager", "forward-compat",
    "arch-not-in-build", "compiler-too-old-for-arch", "host-compiler-unsupported",
    "cpu-only-build", "toolkit-missing", "toolkit-version-mismatch", "library-not-found",
    "library-version-conflict", "extension-abi-mismatch", "out-of-memory", "nccl-setup",
    "device-busy", "other-environment", "not-environment",
)

# The cause class of each signature of the knowledge base as it stood before it carried its
# own class (release 0.x, commit a4878b1): used only to score that knowledge base.
LEGACY_CLASS = {
    "torch-arch-not-in-build": "arch-not-in-build", "no-kernel-image": "arch-not-in-build",
    "torch-gpu-too-old": "arch-not-in-build",
    "nvcc-unsupported-arch": "compiler-too-old-for-arch",
    "ptxas-unknown-arch": "compiler-too-old-for-arch",
    "llvm-unknown-processor": "compiler-too-old-for-arch",
    "driver-too-old-for-torch": "driver-too-old", "cuda-insufficient-driver": "driver-too-old",
    "forward-compat-unsupported": "forward-compat", "system-not-initialized": "fabric-manager",
    "unsupported-driver-combination": "driver-mismatch",
    "cuda-get-device-count-error": "cuda-init-failure", "found-no-nvidia-driver": "no-driver",
    "no-cuda-capable-device": "no-gpu-visible",
    "nvml-driver-library-mismatch": "driver-mismatch",
    "nvml-unknown-error": "container-gpu-setup", "nvidia-smi-no-driver": "no-driver",
    "torch-not-compiled-with-cuda": "cpu-only-build", "cuda-unknown-error": "cuda-init-failure",
    "cuda-visible-devices-list-syntax": "no-gpu-visible",
    "extension-cuda-version-mismatch": "toolkit-version-mismatch",
    "cuda-home-not-set": "toolkit-missing", "cuda-home-is-a-path-list": "toolkit-missing",
    "nvcc-not-found": "toolkit-missing",
    "cudnn-version-incompatible": "library-version-conflict",
    "cudnn-needs-libcuda": "library-not-found", "cudnn-needs-nvrtc": "library-not-found",
    "cudnn-library-missing": "library-not-found",
    "cudnn-status-not-initialized": "out-of-memory",
    "cudnn-status-execution-failed": "arch-not-in-build",
    "cudnn-status-internal-error": "out-of-memory", "cublas-not-initialized": "out-of-memory",
    "cublas-execution-failed": "arch-not-in-build", "libcublas-missing": "library-not-found",
    "libcudart-missing": "library-not-found", "tf-dlerror-cuda-library": "library-not-found",
    "cublaslt-symbol-mismatch": "library-version-conflict",
    "docker-no-gpu-runtime": "container-gpu-setup", "container-cli-no-nvml": "no-driver",
    "cdi-unresolvable-device": "container-gpu-setup", "shm-too-small": "other-environment",
    "wsl-libcuda-not-symlink": "other-environment", "cuda-out-of-memory": "out-of-memory",
    "cuda-oom-fragmentation": "out-of-memory", "cuda-oom-gpu-capacity": "out-of-memory",
    "cuda-oom-other-processes": "out-of-memory", "nccl-unhandled-system-error": "nccl-setup",
    "nccl-watchdog-timeout": "nccl-setup", "nccl-p2p-hang": "nccl-setup",
    "xid-error": "hardware-fault", "gpu-fallen-off-bus": "hardware-fault",
    "ecc-uncorrectable": "hardware-fault", "device-side-assert": "not-environment",
    "illegal-memory-access": "not-environment", "unspecified-launch-failure": "hardware-fault",
    "invalid-device-ordinal": "no-gpu-visible", "devices-busy-or-unavailable": "device-busy",
    "libnccl-missing": "library-not-found",
    "nvjitlink-symbol-mismatch": "library-version-conflict",
    "cudnn-symbol-not-loaded": "library-not-found", "tf-cublas-handle": "out-of-memory",
    "docker-unknown-runtime-nvidia": "container-gpu-setup",
}


def _index(folder: Path, table: str) -> list[dict[str, Any]]:
    data = tomllib.loads((folder / "index.toml").read_text(encoding="utf-8"))
    return list(data.get(table, []))


def _signature_class(signature: Any) -> str:
    """The cause class of a diagnosis's signature: its own `cause_class`, else the legacy map."""
    own = getattr(signature, "cause_class", None)
    if isinstance(own, str) and own:
        return own
    return LEGACY_CLASS.get(str(signature.id), "unmapped:" + str(signature.id))


def score_explain(folder: Path) -> list[dict[str, Any]]:
    """One row per text: the label, what explain answered, and whether that is right."""
    from gpudoctor.compat import load_tables
    from gpudoctor.explain import explain

    tables = load_tables()
    rows = []
    for entry in _index(folder, "error"):
        text = (folder / entry["file"]).read_text(encoding="utf-8", errors="replace")
        expl = explain(text, tables, probe=None)
        best = expl.diagnoses[0] if expl.diagnoses else None
        got = _signature_class(best.match.signature) if best else ""
        label = str(entry["class"])
        if label == "not-environment":
            right = got in ("", "not-environment")
        else:
            right = got == label or got in entry.get("also", [])
        rows.append({"file": entry["file"], "source": entry["source"], "label": label,
                     "negative": label == "not-environment", "got": got,
                     "signature": best.match.signature.id if best else "", "right": right})
    return rows


def score_reports(folder: Path) -> list[dict[str, Any]]:
    """One row per report: the label, the verdicts that disagree with it, and whether right."""
    from gpudoctor.checks import run_checks
    from gpudoctor.compat import load_tables
    from gpudoctor.model import Status
    from gpudoctor.reports.read import ReportError, read_reports

    tables = load_tables()
    rows = []
    for entry in _index(folder, "report"):
        text = (folder / entry["file"]).read_text(encoding="utf-8", errors="replace")
        wrong: list[str] = []
        try:
            env = read_reports([(entry["file"], text)])
        except ReportError as e:
            if entry["healthy"] or entry["expect_fail"] or entry["expect_pass"]:
                wrong.append(f"refused: {e}")
        else:
            found = {str(r.check_id): r.finding.status
                     for r in run_checks(env, tables).results}
            if entry["healthy"]:
                wrong += [f"{cid} FAIL on a healthy report"
                          for cid, st in found.items() if st is Status.FAIL]
            wrong += [f"{cid} must FAIL, is {found.get(cid, 'absent')}"
                      for cid in entry["expect_fail"] if found.get(cid) is not Status.FAIL]
            wrong += [f"{cid} must PASS, is {found.get(cid, 'absent')}"
                      for cid in entry["expect_pass"] if found.get(cid) is not Status.PASS]
        rows.append({"file": entry["file"], "source": entry["source"],
                     "healthy": bool(entry["healthy"]), "wrong": wrong, "right": not wrong})
    return rows


def summary(kind: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The totals a closing note and the README quote."""
    if kind == "explain":
        pos = [r for r in rows if not r["negative"]]
        neg = [r for r in rows if r["negative"]]
        per = Counter((r["label"], r["right"]) for r in pos)
        return {"texts": len(rows), "positives": len(pos),
                "explained": sum(r["right"] for r in pos), "negatives": len(neg),
                "honest": sum(r["right"] for r in neg),
                "per_class": {c: [per[(c, True)], per[(c, True)] + per[(c, False)]]
                              for c in sorted({r["label"] for r in pos})}}
    healthy = [r for r in rows if r["healthy"]]
    return {"reports": len(rows), "right": sum(r["right"] for r in rows),
            "healthy": len(healthy),
            "healthy_right": sum(r["right"] for r in healthy),
            "false_failures_on_healthy": sum(
                any(w.endswith("FAIL on a healthy report") for w in r["wrong"]) for r in healthy)}


def main(argv: list[str] | None = None) -> int:
    """Score one held-out set; exit 0 (the score is the output, not the status), 2 usage."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("explain", "reports"))
    ap.add_argument("folder", type=Path)
    ap.add_argument("--json", type=Path, help="write every row and the totals here")
    ap.add_argument("--quiet", action="store_true", help="print only the totals")
    args = ap.parse_args(argv)
    if not (args.folder / "index.toml").is_file():
        ap.error(f"{args.folder}: no index.toml")
    rows = (score_explain if args.kind == "explain" else score_reports)(args.folder)
    totals = summary(args.kind, rows)
    if not args.quiet:
        for r in rows:
            if not r["right"]:
                print(f"miss {r['file']}: {r.get('label', '')} got {r.get('got', r.get('wrong'))}")
    print(json.dumps(totals, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"totals": totals, "rows": rows}, indent=1) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
