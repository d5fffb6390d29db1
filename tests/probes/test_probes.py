"""`gpudoctor.probes` (the package's __init__): it imports nothing, so that the modules the entry
point loads before anything else (`probes.prestart`, and `probes.interface` that every probe
takes) cost only the child runner, and the model and the probes load when `collect` does."""

from __future__ import annotations

import subprocess
import sys

import pytest
from runner import environment

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]  # a new interpreter: its imports alone

LOADED = "import sys; print(' '.join(sorted(m for m in sys.modules if m.startswith('gpudoctor'))))"


def loaded_by(statement: str) -> set[str]:
    """The gpudoctor modules a fresh interpreter has loaded after `statement`."""
    p = subprocess.run([sys.executable, "-c", f"{statement}\n{LOADED}"], env=environment(),
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


def test_the_package_imports_nothing() -> None:
    assert loaded_by("import gpudoctor.probes") == {"gpudoctor", "gpudoctor.probes"}


def test_the_early_modules_load_only_the_child_runner() -> None:
    assert loaded_by("import gpudoctor.probes.prestart, gpudoctor.probes.interface") == {
        "gpudoctor", "gpudoctor.probes", "gpudoctor.probes.prestart",
        "gpudoctor.probes.interface", "gpudoctor.childproc", "gpudoctor.childargv"}
