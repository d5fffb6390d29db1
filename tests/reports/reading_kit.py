"""What the readers' tests on real reports share: where the reports are, reading one, and the
checks' findings on what was read. The reports are the blind half A of round 3
(tests/fixtures/heldout/round3/reports-A/, scored once, development data since; each file's
public source is in its index.toml), the corpus (tests/fixtures/reports/) and the explain
fixtures (real error texts with their links). Not a test module."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, NvmlFacts, Status, TorchFacts, TorchRuntime
from gpudoctor.reports.read import read_reports

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HELDOUT_A = FIXTURES / "heldout" / "round3" / "reports-A"
SOURCES = {e["file"]: e["source"] for e in tomllib.loads(
    (HELDOUT_A / "index.toml").read_text(encoding="utf-8"))["report"]}
RECORDED = Path(__file__).resolve().parent / "recorded"


def read_path(path: Path) -> Environment:
    return read_reports([(path.name, path.read_text(encoding="utf-8"))])


def heldout_a(name: str) -> Environment:
    assert SOURCES[name].startswith("https://github.com/")  # a real public report
    return read_path(HELDOUT_A / name)


def judged(env: Environment) -> dict[str, Any]:
    return {str(r.check_id): r.finding for r in run_checks(env, load_tables()).results}


def nvml_of(env: Environment) -> NvmlFacts:
    assert isinstance(env.nvml, NvmlFacts), env.nvml
    return env.nvml


def runtime_of(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


def statuses(env: Environment) -> dict[str, Status]:
    """Each check's status on `env`, by id (every registered check, the shipped tables)."""
    return {r.check_id: r.finding.status for r in run_checks(env, load_tables(), REGISTRY).results}
