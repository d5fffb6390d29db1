"""`gpudoctor.renderers.prometheus`: node_exporter's textfile format, read back by
prometheus_client's own parser, over every recorded environment; label values escaped.
(`--format prometheus -o FILE` through the real CLI: tests/ci/test_prometheus.py.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.checks import REGISTRY, run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import GpuFacts, NvmlFacts
from gpudoctor.renderers.prometheus import STATUSES, PrometheusRenderer, status_of
from gpudoctor.snapshot import loads
from tests.ci.cikit import FIXTURES, H100, families

ENVS = sorted(FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.stem)
def test_every_environment_parses_with_one_status_per_check(path: Path) -> None:
    report = run_checks(loads(path.read_text()), load_tables(), REGISTRY)
    text = PrometheusRenderer().render(report)
    assert text.endswith("\n")
    found = families(text)
    status = found["gpudoctor_check_status"]
    assert len(status) == len(report.results) * len(STATUSES)
    for r in report.results:
        mine = {lab["status"]: v for lab, v in status if lab["id"] == r.check_id}
        assert mine == {s: float(s == status_of(r)) for s in STATUSES}
    counts = {lab["status"]: v for lab, v in found["gpudoctor_checks"]}
    assert sum(counts.values()) == len(report.results)
    (info, one), = found["gpudoctor_info"]
    assert one == 1 and set(info) == {"gpudoctor_version", "driver_version", "driver_cuda",
                                      "torch_version", "torch_cuda", "cudnn_version"}
    (_, ts), = found["gpudoctor_last_run_timestamp_seconds"]
    assert ts > 1.5e9
    for line in text.splitlines():
        if line.startswith("# TYPE"):
            assert line.endswith(" gauge")


def test_gpu_labels_and_hostile_names_round_trip() -> None:
    env = loads(H100.read_text())
    assert isinstance(env.nvml, NvmlFacts)
    g = env.nvml.gpus[0]
    assert isinstance(g, GpuFacts)
    name = 'Evil "GPU" \\ with\nnewline\x1b[2J\u202e'
    env = dataclasses.replace(env, nvml=dataclasses.replace(
        env.nvml, gpus=(dataclasses.replace(g, name=name), *env.nvml.gpus[1:])))
    text = PrometheusRenderer().render(run_checks(env, load_tables(), REGISTRY))
    assert '\\"GPU\\" \\\\ with\\nnewline' in text
    found = families(text)
    labels = found["gpudoctor_gpu_info"][0][0]
    assert "\x1b" not in text and "\u202e" not in text  # shown escaped, like everywhere
    assert labels["name"] == name.replace("\x1b", "\\x1b").replace("\u202e", "\\u202e")
    assert labels["uuid"] == g.uuid
    assert labels["compute_capability"] == g.compute_capability
    assert found["gpudoctor_gpu_memory_total_bytes"][0][1] == g.memory_total
    info = found["gpudoctor_info"][0][0]
    assert info["driver_version"] == env.nvml.driver_version
