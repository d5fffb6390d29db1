"""gpudoctor.compat.pick: how this machine's driver runs a CUDA version, and which PyTorch
wheel is picked (the advice's wording of the pick is tested in test_advice.py).

The tables are narrowed to the releases a test names (`only`), so that a refresh adding a newer
release does not move what these rules are shown on."""

from __future__ import annotations

import dataclasses

import tests.checks.envbuilder as B
from gpudoctor.compat import Tables
from gpudoctor.compat.pick import Line, best_fit, pick_torch, runs
from gpudoctor.compat.wheels import Target, pip_line, pythons_text
from gpudoctor.model import Environment, LibcudaFacts, Reason, Unavailable

H100_580 = B.env(nvml=B.nvml("580.65.06", 13000, B.gpu("H100")))  # runs CUDA 13.0 in full
LINE = Line("/usr/bin/python3", None, None, (), "3.11.7")  # torch not installed, Python 3.11


def only(tables: Tables, *versions: str) -> Tables:
    """The tables with only these PyTorch releases."""
    kept = tuple(r for r in tables.torch_releases if r.version in versions)
    assert [r.version for r in kept] == sorted(versions, key=lambda v: [int(x) for x in
                                                                      v.split(".")])
    return dataclasses.replace(tables, torch_releases=kept)


def test_runs_by_the_drivers_own_word_then_its_version(tables: Tables) -> None:
    """Driver 580.65.06 reports CUDA 13.0: an older CUDA runs (backward compatibility), a newer
    13.x only by minor-version compatibility, another major not at all."""
    assert [runs(H100_580, tables, c) for c in ("12.4", "13.0", "13.2", "14.0")] == [
        "full", "full", "mvc", None]
    r550 = B.env(nvml=B.nvml("550.54.14", 12040, B.gpu("RTX3090")),
                 libcuda=LibcudaFacts("libcuda.so.1", 12040, "550.54.14"))
    assert [runs(r550, tables, c) for c in ("11.8", "12.4", "12.6", "13.0")] == [
        "full", "full", "mvc", None]


def test_runs_without_a_driver_version(tables: Tables) -> None:
    """WSL: libcuda reports the CUDA, the driver's version is not readable: that reading alone
    decides. No driver at all: "no-driver", nothing to tell."""
    wsl = B.env(nvml=B.NO_NVML, libcuda=LibcudaFacts("libcuda.so.1", 12080, Unavailable(
        Reason.NOT_INSTALLED, "/proc/driver/nvidia/version is not readable")))
    assert [runs(wsl, tables, c) for c in ("12.4", "12.8", "12.9")] == ["full", "full", None]
    none = B.env(nvml=B.NO_NVML, libcuda=B.NO_LIBCUDA)
    assert runs(none, tables, "12.4") == "no-driver"


def test_the_pick_is_a_wheel_the_driver_runs_in_full(tables: Tables) -> None:
    """torch 2.13.0 on driver 580: cu130 (full, its arch list has sm_90), not cu132 (only by
    minor-version compatibility, and experimental) nor the older cu126."""
    t = only(tables, "2.13.0")
    pick, notes = pick_torch(H100_580, t, ["9.0"], LINE)
    assert pick is not None
    assert (pick.version, pick.variant, pick.runs, pick.arch_confirmed) == (
        "2.13.0", "cu130", "full", True)
    rel = t.torch_release("2.13.0")
    assert rel is not None
    assert pick.command == pip_line(rel, rel.variant("cu130"), LINE.target())
    need = t.cuda_min_driver("13.0")
    assert need is not None and pick.min_driver == need.full
    assert notes == []


def test_a_gpu_outside_the_arch_list_moves_the_pick(tables: Tables) -> None:
    """A GTX 1080 (sm_61): only 2.13.0's cu126 wheel has it."""
    t = only(tables, "2.13.0")
    pick, _ = pick_torch(H100_580, t, ["6.1"], LINE)
    assert pick is not None and pick.variant == "cu126" and pick.arch_confirmed
    rel = t.torch_release("2.13.0")
    assert rel is not None
    best = best_fit(H100_580, t, rel, ["6.1"], LINE)
    assert best is not None and best.variant == "cu126"
    fit = best_fit(H100_580, t, rel, ["9.0"], LINE)
    assert fit is not None and fit.variant == "cu130"
    assert best_fit(H100_580, t, rel, ["3.7"], LINE) is None  # Kepler: no wheel of 2.13.0


def test_an_arch_list_not_in_the_tables_is_picked_only_unconfirmed(tables: Tables) -> None:
    """sm_110 (Thor): of 2.13.0's wheels only cu129 may hold it, and the tables lack its arch
    list. best_fit wants a confirmed list (None); the pick takes it, and says so."""
    t = only(tables, "2.13.0")
    rel = t.torch_release("2.13.0")
    assert rel is not None
    assert best_fit(H100_580, t, rel, ["11.0"], LINE) is None
    pick, notes = pick_torch(H100_580, t, ["11.0"], LINE)
    assert pick is not None and (pick.variant, pick.arch_confirmed) == ("cu129", False)
    assert any(n.startswith("the arch list of torch 2.13.0 cu129 is not in the tables: it may "
                            "not include sm_110") for n in notes), notes


def test_a_wheel_run_in_full_beats_a_newer_release_run_by_minor_version_compat(
        tables: Tables) -> None:
    """Driver 550.54.14 runs CUDA ≤ 12.4 in full: 2.5.1's cu124 wheel, not 2.13.0's cu126
    (minor-version compatibility only: GD103 would warn), which the note names."""
    t = only(tables, "2.5.1", "2.13.0")
    r550 = B.env(nvml=B.nvml("550.54.14", 12040, B.gpu("RTX3090")),
                 libcuda=LibcudaFacts("libcuda.so.1", 12040, "550.54.14"))
    pick, notes = pick_torch(r550, t, ["8.6"], LINE)
    assert pick is not None and (pick.version, pick.variant, pick.runs) == (
        "2.5.1", "cu124", "full")
    (why,) = notes
    assert why.startswith("driver 550.54.14 runs torch 2.13.0's wheels only by minor-version "
                          "compatibility ("), why
    assert why.endswith("GD103 would warn): the pick is the newest release it runs in full")


def test_nothing_to_pick_is_said_not_guessed(tables: Tables) -> None:
    none = dataclasses.replace(tables, torch_releases=())
    assert pick_torch(H100_580, none, ["9.0"], LINE) == (None, ["no PyTorch release in the "
                                                                "tables"])
    ancient: Environment = B.env(nvml=B.nvml("340.10", 6050, B.gpu("H100")))
    t = only(tables, "2.13.0")
    pick, notes = pick_torch(ancient, t, ["9.0"], LINE)
    assert pick is None and len(notes) == 1
    assert notes[0].startswith("driver 340.10 is too old for torch 2.13.0: its wheels need "
                               "driver ≥ "), notes


def test_a_python_without_wheels_rules_a_release_out(tables: Tables) -> None:
    """Python 3.8: 2.13.0 has no wheel for it, 1.7.1 has; the note says why not the newest."""
    t = only(tables, "1.7.1", "2.13.0")
    line = dataclasses.replace(LINE, python_version="3.8.10")
    pick, notes = pick_torch(H100_580, t, [], line)
    assert pick is not None and pick.version == "1.7.1"
    r213 = t.torch_release("2.13.0")
    assert r213 is not None
    assert notes[0] == (f"torch 2.13.0 has wheels for {pythons_text(r213)}, not for this "
                        "interpreter's Python 3.8.10")


def test_an_unknown_interpreter_gets_a_bare_python_and_a_note(tables: Tables) -> None:
    t = only(tables, "2.13.0")
    pick, notes = pick_torch(H100_580, t, ["9.0"], Line(None, None, None, ()))
    assert pick is not None and pick.command.startswith("python -m pip install torch==2.13.0")
    rel = t.torch_release("2.13.0")
    assert rel is not None
    assert notes == [f"the interpreter's Python version is not known: torch 2.13.0 has wheels "
                     f"for {pythons_text(rel)}"]


def test_the_line_is_the_builders_target() -> None:
    line = Line("/venv/bin/python", "2.5.1+cu124", "no cuDNN", (("torchvision", "0.20.1"),))
    assert line.target() == Target("/venv/bin/python", "2.5.1+cu124", True,
                                   (("torchvision", "0.20.1"),))
    assert Line(None, None, None, ()).target() == Target("python", None, False, ())
