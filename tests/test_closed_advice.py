"""Advice closed under itself: follow each fix's target on the machine it was given for (the
wheel `recommend` and every torch fix name, each driver a fix asks for), judge again, and
require no failure and no new warning, so that a `--strict` job that follows the advice
turns green (tests/advice_kit.py applies a target as the machine would show it).

Run over every recorded snapshot (tests/fixtures/envs), every real report of the corpus
(tests/fixtures/reports) and the development half of the round-3 held-out set
(tests/fixtures/heldout/round3/reports-A). A target may stay open only where the advice itself
says what it leaves (no wheel in the tables runs on that driver in full: "GD103 warns").
A machine with no driver at all is told which driver to install (GD101), and that target is
followed too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.checks.driver import check_driver_present
from gpudoctor.compat import Tables, load_tables
from gpudoctor.compat.advice import torch_advice
from gpudoctor.model import Environment, Status, TorchFacts, TorchRuntime
from gpudoctor.reports.read import ReportError, read_reports
from gpudoctor.snapshot import loads

TESTS = Path(__file__).resolve().parent
import tests.advice_kit as K  # noqa: E402

FIXTURES = TESTS / "fixtures"
SOURCES = (FIXTURES / "envs", FIXTURES / "reports", FIXTURES / "heldout" / "round3" / "reports-A")


def _files() -> list[Path]:
    return [p for d in SOURCES for p in sorted(d.iterdir())
            if p.is_file() and p.name not in ("index.toml", "README.md")]


def _env(path: Path) -> Environment | None:
    if path.suffix == ".json" and path.parent.name == "envs":
        return loads(path.read_text(encoding="utf-8"))
    try:
        return read_reports([(path.name, path.read_text(encoding="utf-8", errors="replace"))])
    except ReportError:
        return None  # not recognised: no advice is given for it


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


@pytest.mark.parametrize("path", _files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_following_the_advice_leaves_the_machine_green(path: Path, tables: Tables) -> None:
    env = _env(path)
    if env is None:
        pytest.skip("no report recognised in it")
    stated = " ".join(torch_advice(env, tables).why)
    for outcome in K.follow(env, tables):
        if not outcome.applied or not outcome.problems:
            continue
        # the one residue the advice may leave is the one it names itself
        assert outcome.target.kind == "wheel" and "(GD103 warns)" in stated and all(
            p.startswith("GD103") for p in outcome.problems), (outcome.target.what,
                                                               outcome.problems)


def test_the_kit_catches_advice_that_is_not_closed(tables: Tables) -> None:
    """The test above can fail: a wheel whose arch list has no code for the H100 (sm_90),
    followed on a healthy H100, leaves GD404 failing (and a --strict job red). (The cu132
    wheel `recommend` once gave it, on driver 580, left GD103 warning until GD103 judged
    minor-version compatibility by the cubins: it has one for sm_90, and passes now.)"""
    env = loads((FIXTURES / "envs" / "h100-healthy.json").read_text())
    rel = tables.torch_release("2.15.0") or tables.newest_torch()
    cu132 = rel.variant("cu132")
    assert cu132 is not None
    pick = torch_advice(env, tables).pick
    assert pick is not None
    old = dataclasses.replace(pick, version=rel.version, variant="cu132", cuda=cu132.cuda,
                              index_url=cu132.index_url, arch_list=cu132.arch_list)
    after = K.with_wheel(env, tables, old)
    assert isinstance(after.torch, TorchFacts) and isinstance(after.torch.runtime, TorchRuntime)
    after = dataclasses.replace(after, torch=dataclasses.replace(after.torch, runtime=(
        dataclasses.replace(after.torch.runtime, arch_list=("sm_100", "sm_120")))))
    verdicts = {r.check_id: r.finding.status.value for r in run_checks(after, tables).results}
    assert verdicts["GD404"] == "fail"


@pytest.mark.slow
def test_a_machine_without_a_driver_is_told_which_one_and_following_it_closes(
        tables: Tables) -> None:
    """GD101's fix on a machine with a GPU and no driver names the driver (the one torch's CUDA
    needs in full), so the kit can install it: afterwards GD101 passes, and nothing fails or
    warns anew (the test above). Before, the fix said "install the NVIDIA driver" with no
    version, and no driver target was followed at all."""
    followed = []
    for path in _files():
        env = _env(path)
        if env is None:
            continue
        (first,) = run_checks(env, tables, (check_driver_present,)).results
        if not K.bad(first.finding.status, first.severity) or "install the NVIDIA driver" \
                not in (first.finding.fix or ""):
            continue  # a GPU-less host's note names a driver too, but asks for nothing here
        report = run_checks(env, tables)
        asked = [t for t, ids in K.targets(env, tables, report)
                 if t.kind == "driver" and "GD101" in ids]
        assert asked, (path.name, first.finding.fix)
        after = K.apply(env, tables, asked[0])
        assert after is not None, path.name
        (now,) = run_checks(after, tables, (check_driver_present,)).results
        assert now.finding.status is Status.PASS, (path.name, now.finding)
        followed.append(path.name)
    assert {"no-driver-cuda-torch.json", "container-no-gpus-flag.json"} <= set(followed)
