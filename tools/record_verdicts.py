#!/usr/bin/env python3
"""Record gpudoctor's verdicts on every fixture and report, through the command line.

    python tools/record_verdicts.py                 record verdicts and texts (a new recording)
    python tools/record_verdicts.py --update-text   re-record only the messages and fixes

The recording is the safety net of refactoring (issue 22): `tests/scenarios/
test_verdicts_unchanged.py` runs the same commands and compares. It goes through
`gpudoctor.cli.app` in-process (Click's CliRunner), the one interface no refactor renames, so
it records what a user sees, not what a function that a later step moves returns:

- every snapshot (tests/fixtures/envs), pasted report (tests/fixtures/reports,
  tests/fixtures/gpu_states, tests/fixtures/heldout/round3/reports-A and -B, round4's C,
  round5's D, round6's E, round7's F) and text captured on a real machine
  (tests/fixtures/machines):
  `check --from-report F --format json` with and without `--strict` (each check's status and
  resolved severity, both exit codes) and `recommend --from-snapshot F --format json` (exit
  code, the picked torch release and cuDNN);
- every error text (tests/fixtures/errors, tests/fixtures/heldout/round3/explain-A and -B,
  round4's C and round5's D):
  `explain F --no-probe --format json` (exit code; each diagnosis's id, cause class, state);
- `fleet tests/fixtures/envs --format json` (exit code; each node's failing and warning ids).

Verdicts (`tests/fixtures/verdicts.json`) change only where a change is meant, re-recorded in
the commit that makes it and named there. Texts (`tests/fixtures/verdicts_text.json`: each
finding's message and fix, recommend's install lines) may be re-recorded with
`--update-text` in a commit that says why. Both carry the digest of the compat tables they were
recorded with: new table rows change verdicts on purpose, and the test then says so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
VERDICTS = FIXTURES / "verdicts.json"
TEXTS = FIXTURES / "verdicts_text.json"

# Inputs judged by check and recommend; then the texts explain reads.
REPORT_DIRS = ("envs", "reports", "gpu_states", "heldout/round3/reports-A",
               "heldout/round3/reports-B", "heldout/round4/reports-C", "heldout/round5/reports-D",
               "heldout/round6/reports-E", "heldout/round7/reports-F", "heldout/round8/reports-G",
               "heldout/round9/reports-H", "heldout/round10/reports-I", "heldout/round11/reports-J",
               "heldout/round12/reports-K", "heldout/round13/reports-L",
               "heldout/round14/reports-M", "heldout/round15/reports-N",
               "heldout/round16/reports-O", "heldout/round17/reports-P",
               "heldout/round18/reports-Q", "heldout/round19/reports-R",
               "heldout/round20/reports-S", "heldout/round21/reports-T",
               "heldout/round22/reports-U", "heldout/round23/reports-V",
               "heldout/round24/reports-W",
               "machines/h200-x1")
ERROR_DIRS = ("errors", "heldout/round3/explain-A", "heldout/round3/explain-B",
              "heldout/round4/explain-C", "heldout/round5/explain-D", "heldout/round6/explain-E",
              "heldout/round7/explain-F", "heldout/round8/explain-G", "heldout/round9/explain-H",
              "heldout/round10/explain-I", "heldout/round11/explain-J",
              "heldout/round12/explain-K", "heldout/round13/explain-L",
              "heldout/round14/explain-M", "heldout/round15/explain-N",
              "heldout/round16/explain-O", "heldout/round17/explain-P",
              "heldout/round18/explain-Q", "heldout/round19/explain-R",
              "heldout/round20/explain-S", "heldout/round21/explain-T",
              "heldout/round22/explain-U", "heldout/round23/explain-V",
              "heldout/round24/explain-W")
_NOT_INPUTS = {"README.md", "index.toml"}

# A clean environment for each command: no gpudoctor setting or CI marker of the caller's.
_CLEARED = ("GPUDOCTOR_", "GITHUB_", "FAKE_NVML_")


def inputs(dirs: tuple[str, ...]) -> Iterator[Path]:
    """Every input file of the fixture folders `dirs`, in a stable order."""
    for d in dirs:
        for path in sorted((FIXTURES / d).iterdir()):
            if path.is_file() and path.name not in _NOT_INPUTS:
                yield path


def tables_digest() -> str:
    """The digest of the compat tables: a recording holds only for the tables it read."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "compat_tables").glob("*.toml")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _env() -> Mapping[str, str | None]:
    cleared: dict[str, str | None] = {k: None for k in os.environ if k.startswith(_CLEARED)}
    return {**cleared, "NO_COLOR": "1", "COLUMNS": "200"}


_COMMAND: list[Any] = []


def invoke(*args: str) -> tuple[int, str]:
    """`gpudoctor ARGS` in-process: exit code and stdout. Typer turns the app into a Click
    command on every invoke (half the time of a `check --from-report`): it is built once."""
    import typer.main
    import typer.testing

    import gpudoctor.cli

    if not _COMMAND:
        _COMMAND.append(typer.main.get_command(gpudoctor.cli.app))
    built = _COMMAND[0]
    runner = typer.testing.CliRunner()
    if hasattr(typer.testing, "_get_command"):  # typer 0.26-0.28: the app's command, cached
        saved = typer.testing._get_command
        typer.testing._get_command = lambda app: built
        try:
            result = runner.invoke(gpudoctor.cli.app, list(args), env=_env(),
                                   catch_exceptions=False)
        finally:
            typer.testing._get_command = saved
    else:
        result = runner.invoke(gpudoctor.cli.app, list(args), env=_env(), catch_exceptions=False)
    return result.exit_code, result.stdout


def _name(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def _json(out: str) -> dict[str, Any] | None:
    try:
        data = json.loads(out)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def judge_check(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """check --from-report: the verdicts and the texts."""
    rc, out = invoke("check", "--from-report", str(path), "--format", "json")
    strict_rc, _ = invoke("check", "--from-report", str(path), "--format", "json", "--strict")
    doc = _json(out) if rc in (0, 1) else None
    findings = doc["findings"] if doc else []
    verdict = {"exit": rc, "strict_exit": strict_rc,
               "checks": {f["id"]: [f["status"], f["severity"]] for f in findings}}
    text = {f["id"]: [f["message"], f["fix"]] for f in findings}
    return verdict, text


def judge_recommend(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """recommend --from-snapshot: the verdicts (what is picked) and the texts (the lines)."""
    rc, out = invoke("recommend", "--from-snapshot", str(path), "--format", "json")
    doc = _json(out) if rc in (0, 1) else None
    if doc is None:
        return {"exit": rc}, {}
    torch, cudnn = doc.get("torch") or {}, doc.get("cudnn") or {}
    verdict = {"exit": rc, "installed_fits": doc.get("installed_fits"),
               "torch": [torch.get(k) for k in ("version", "variant", "runs", "status")],
               "cudnn": [cudnn.get(k) for k in ("version", "cuda_build", "status")]}
    text = {"torch": torch.get("command"), "cudnn": cudnn.get("command"),
            "notes": doc.get("notes"), "cudnn_notes": doc.get("cudnn_notes")}
    return verdict, text


def judge_explain(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """explain --no-probe: which known errors, which cause classes, which states."""
    rc, out = invoke("explain", str(path), "--no-probe", "--format", "json")
    doc = _json(out) if rc in (0, 1) else None
    diagnoses = doc.get("diagnoses", []) if doc else []
    verdict = {"exit": rc, "diagnoses": [[d.get("id"), d.get("cause_class"), d.get("state")]
                                         for d in diagnoses]}
    text = {"fixes": [d.get("fix") for d in diagnoses]}
    return verdict, text


def judge_fleet() -> dict[str, Any]:
    """fleet over the snapshots: each node's failing and warning checks."""
    rc, out = invoke("fleet", str(FIXTURES / "envs"), "--format", "json")
    doc = _json(out) or {}
    nodes = {Path(n["path"]).name: {"failed": n.get("failed"), "warned": n.get("warned")}
             for n in doc.get("nodes", [])}
    return {"exit": rc, "nodes": nodes}


def record() -> tuple[dict[str, Any], dict[str, Any]]:
    """Run every command over every input: (verdicts, texts)."""
    verdicts: dict[str, Any] = {"tables": tables_digest(), "check": {}, "recommend": {},
                                "explain": {}}
    texts: dict[str, Any] = {"tables": verdicts["tables"], "check": {}, "recommend": {},
                             "explain": {}}
    for path in inputs(REPORT_DIRS):
        name = _name(path)
        verdicts["check"][name], texts["check"][name] = judge_check(path)
        verdicts["recommend"][name], texts["recommend"][name] = judge_recommend(path)
    for path in inputs(ERROR_DIRS):
        name = _name(path)
        verdicts["explain"][name], texts["explain"][name] = judge_explain(path)
    verdicts["fleet"] = judge_fleet()
    return verdicts, texts


def differences(recorded: Any, now: Any, where: str = "") -> list[str]:
    """Where two recordings differ, one line each (`check/envs/x.json/checks/GD101: [...] →
    [...]`), inputs missing on either side included."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        out: list[str] = []
        for key in sorted(recorded.keys() | now.keys()):
            at = f"{where}/{key}" if where else key
            if key not in now:
                out.append(f"{at}: recorded, now missing")
            elif key not in recorded:
                out.append(f"{at}: new, not recorded: {json.dumps(now[key])[:200]}")
            else:
                out += differences(recorded[key], now[key], at)
        return out
    if recorded != now:
        return [f"{where}: {json.dumps(recorded, ensure_ascii=False)[:200]} → "
                f"{json.dumps(now, ensure_ascii=False)[:200]}"]
    return []


def _write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                    encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update-text", action="store_true",
                        help="re-record only the texts (verdicts must still equal the record)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write both files to this folder instead (to compare two trees)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import gpudoctor

    if Path(gpudoctor.__file__).resolve().parent != ROOT / "gpudoctor":
        print(f"gpudoctor is imported from {gpudoctor.__file__}, not this checkout",
              file=sys.stderr)
        return 1
    verdicts, texts = record()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        _write(args.out / VERDICTS.name, verdicts)
        _write(args.out / TEXTS.name, texts)
        return 0
    if args.update_text:
        recorded = json.loads(VERDICTS.read_text(encoding="utf-8"))
        if recorded != verdicts:
            print("verdicts differ from tests/fixtures/verdicts.json: re-record both "
                  "(without --update-text) only in a commit that means the change",
                  file=sys.stderr)
            return 1
    else:
        _write(VERDICTS, verdicts)
    _write(TEXTS, texts)
    print(f"{len(verdicts['check'])} reports and snapshots, {len(verdicts['explain'])} error "
          f"texts, {len(verdicts['fleet']['nodes'])} fleet nodes recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
