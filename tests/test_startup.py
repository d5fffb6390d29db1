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
}


def imported(*args: str) -> set[str]:
    """The modules `gpudoctor ARGS` imports (python -X importtime, on stderr)."""
    p = gpudoctor(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert p.returncode in (0, 1), p.stderr[-2000:]
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \| +(\S+)$", p.stderr, re.M))


def test_check_without_torch_imports_none_of_the_trimmed_modules() -> None:
    modules = imported("check", "--no-torch", "--format", "json", "-o", "/dev/null")
    assert "gpudoctor.checks" in modules  # the run was read: the registry is always loaded
    loaded = {m: why for m, why in KEPT_OUT.items() if m in modules}
    assert not loaded, f"back on the start-up path: {loaded}"


def test_check_host_does_not_import_the_torch_probe() -> None:
    modules = imported("check", "host", "--format", "json", "-o", "/dev/null")
    assert "gpudoctor.probes.host" in modules
    assert "gpudoctor.probes.pytorch" not in modules
