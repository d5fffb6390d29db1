"""gpudoctor.reports.credible: a driver's CUDA version no such driver reports is set aside (the
reader entry's own tests are in tests/reports/test_reports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.model import NvmlFacts, Reason, Unavailable
from gpudoctor.reports.credible import credible_driver_cuda
from gpudoctor.reports.read import read_inputs, read_reports

ROOT = Path(__file__).resolve().parents[2]
SMI = ROOT / "tests" / "fixtures" / "reports" / "nvidia_smi-k8s-v100s-450-device-plugin.txt"
TABLES = load_tables()


def _nvml(text: str) -> NvmlFacts:
    nvml = read_inputs([("smi.txt", text)], TABLES).nvml
    assert isinstance(nvml, NvmlFacts)
    return nvml


@pytest.mark.parametrize(("cuda", "believed"), [("11.0", True), ("99.9", False),
                                                 ("12.2", False), ("11.1", False)])
def test_a_cuda_version_no_such_driver_reports_is_set_aside(cuda: str, believed: bool) -> None:
    """Driver 450.51.05 (CUDA 11.0) cannot report 99.9, 12.2 or 11.1 (first in driver 455)."""
    text = SMI.read_text().replace("CUDA Version: 11.0 ", f"CUDA Version: {cuda} ")
    stated = _nvml(text).cuda_driver_version
    if believed:
        assert stated == 11000
    else:
        assert isinstance(stated, Unavailable) and stated.reason is Reason.ERROR
        assert stated.message.startswith(f"the report's CUDA Version {cuda} for driver "
                                         "450.51.05 is set aside")


def test_read_reports_alone_believes_it() -> None:
    """The rule is read_inputs' (every command's), not the parser's."""
    text = SMI.read_text().replace("CUDA Version: 11.0 ", "CUDA Version: 99.9 ")
    env = read_reports([("smi.txt", text)])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.cuda_driver_version == 99090
    assert credible_driver_cuda(env, TABLES) != env
