"""Shared by the CI tests: the recorded environments (the CLI runs through `runner`), and
the metric families of a Prometheus textfile as prometheus_client's own parser reads them."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "envs"
H100 = FIXTURES / "h100-healthy.json"
GPU_LESS = FIXTURES / "gpu-less-ci-cuda-torch.json"


def families(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    return {f.name: [(s.labels, s.value) for s in f.samples]
            for f in text_string_to_metric_families(text)}
