"""What `gpudoctor check` imports before it answers (issue 22 item 6).

Timings are not deterministic; the set of modules imported is. `benchmarks/check_speed.py`
measures the time; this keeps out of the check path the modules trimmed from it, each of which
cost start-up time for something a plain `check` never uses.
"""

from __future__ import annotations

import re

import pytest
from runner import gpudoctor

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # gpudoctor in a new process: ~1 s here

# module → why a plain `check` has no use for it
KEPT_OUT = {
    "socket": "the host name comes from os.uname()",
    "statistics": "one median of three or more numbers, computed inline (checks/health.py)",
    "concurrent.futures": "the cuDNN probe's children run in threads of its own",
    "gpudoctor.compat.gpu_names": "imported where a GPU name is matched; no GPU here",
    "gpudoctor.reports.nvidia_smi": "the pasted nvidia-smi reader (its patterns cost ~5 ms to "
                                    "compile): GD505 reads its one message from reports.interface",
}


def imported(*args: str) -> set[str]:
    """The modules `gpudoctor ARGS` imports (python -X importtime, on stderr)."""
    p = gpudoctor(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert p.returncode in (0, 1), p.stderr[-2000:]
    # threads import while the main thread does: one line's write can land inside another's,
    # so a line is read wherever it starts, and a name ends where the next line begins; and a
    # module a thread imported while another thread's import was timed gets a negative self
    # time ("import time:     -4004 |       3332 |   gpudoctor.probes.host")
    return set(re.findall(r"import time:\s+-?\d+ \|\s+-?\d+ \| +([\w.]+?)(?=import time:|\s|$)",
                          p.stderr))


def test_check_without_torch_imports_none_of_the_trimmed_modules() -> None:
    modules = imported("check", "--no-torch", "--format", "json", "-o", "/dev/null")
    assert "gpudoctor.checks" in modules  # the run was read: the registry is always loaded
    loaded = {m: why for m, why in KEPT_OUT.items() if m in modules}
    assert not loaded, f"back on the start-up path: {loaded}"


def test_check_host_does_not_import_the_torch_probe() -> None:
    modules = imported("check", "host", "--format", "json", "-o", "/dev/null")
    assert "gpudoctor.probes.host" in modules
    assert "gpudoctor.probes.pytorch" not in modules


def test_judge_waits_for_the_tables_the_warm_up_is_loading(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` loads the compat tables in a warm-up thread; with the probes started early,
    the command can reach `judge` while that thread is still at it. `judge` then waits for
    it: the tables are read once, not a second time beside it (~50 ms of CPU)."""
    import threading
    import time
    from pathlib import Path

    from gpudoctor import compat
    from gpudoctor.checks import REGISTRY
    from gpudoctor.cli import common
    from gpudoctor.renderers.interface import OutputFormat
    from gpudoctor.snapshot import loads

    env = loads((Path(__file__).parent / "fixtures/envs/driver-lib-mismatch.json").read_text())
    real, reading, calls = compat.load_rows, threading.Event(), []

    def slow(path: Path) -> dict[str, object]:
        calls.append(path)
        reading.set()
        time.sleep(0.5)
        return real(path)

    monkeypatch.setattr(compat, "load_rows", slow)
    monkeypatch.setattr(common, "_TABLES_WARM", [], raising=False)
    compat._default_tables.cache_clear()
    try:
        common.warm_up(OutputFormat.JSON)
        assert reading.wait(10)  # the warm-up thread is reading them now
        report = common.judge(env, REGISTRY)
    finally:
        compat._default_tables.cache_clear()
    assert len(calls) == 1
    assert len(report.results) == len(REGISTRY)


@pytest.mark.parametrize(("fmt", "read"), [("json", True), ("text", False), ("junit", False)])
def test_the_warm_up_reads_the_tables_date_a_json_report_states(fmt: str, read: bool) -> None:
    """The JSON report states the date the tables are known until, read from cuda.toml apart
    from the tables: read in the warm-up thread, it is off the path after torch's child
    (~8 ms); the other formats do not state it, and it is not read for them."""
    import threading

    from gpudoctor import compat
    from gpudoctor.cli import common
    from gpudoctor.renderers.interface import OutputFormat

    compat.known_until.cache_clear()
    common.warm_up(OutputFormat(fmt))
    for thread in threading.enumerate():
        if thread.name == "gpudoctor-warm-up":
            thread.join(30)
    assert compat.known_until.cache_info().currsize == (1 if read else 0)
