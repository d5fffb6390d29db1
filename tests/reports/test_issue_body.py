"""Blocks found inside Markdown (fences, <details>, quotes, bare pastes); their merging into one
Environment and the refusal of garbage are the reader entry's (tests/reports/test_reports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Reason, TorchFacts, TorchRuntime, Unavailable
from gpudoctor.reports import issue_body
from gpudoctor.reports.issue_body import find_blocks
from gpudoctor.reports.read import read_reports
from gpudoctor.snapshot import loads
from tests.reports.report_excerpts import (
    COLLECT_ENV_WSL_4070,
    ISSUE,
    TABLE_550_A10,
)

ENVS = Path(__file__).resolve().parent.parent / "fixtures" / "envs"


def test_blocks_in_a_markdown_issue() -> None:
    kinds = [b.kind for b in find_blocks(ISSUE)]
    assert kinds == ["collect_env", "nvidia-smi"]


def test_quoted_bare_paste_and_crlf() -> None:
    quoted = "\r\n".join("> " + line for line in COLLECT_ENV_WSL_4070.splitlines())
    env = read_reports([("reply.md", "Same here:\r\n\r\n" + quoted)])
    assert isinstance(env.torch, TorchFacts)
    assert env.nvml.driver_version == "551.88"  # type: ignore[union-attr]


def test_unclosed_fence_runs_to_the_end() -> None:
    frame = "+-----------------------------------------+-------"
    cut = "### Versions\n\n```\n" + TABLE_550_A10.split(frame)[0]
    blocks = find_blocks(cut)
    assert [b.kind for b in blocks] == ["nvidia-smi"]
    env = read_reports([("cut.md", cut)])
    assert env.sources == ("nvidia-smi (cut off) in cut.md",)


def test_snapshot_in_an_issue_fence() -> None:
    text = (ENVS / "lost-gpu.json").read_text()
    env = read_reports([("issue.md", f"my snapshot:\n\n```json\n{text}```\n")])
    assert env == loads(text)


def test_a_tool_report_logged_line_by_line_is_read_without_the_log_prefix() -> None:
    # round 6's r9-009 (https://github.com/open-mmlab/mmdeploy/issues/1355): mmdeploy logs
    # OpenMMLab's environment report through Python's logging
    prefix = "2022-11-11 08:08:37,084 - mmdeploy - INFO - "
    lines = ["sys.platform: linux", "Python: 3.8.13 (default, Oct 21 2022, 23:50:54) [GCC 11.2.0]",
             "CUDA available: True", "GPU 0,1,2,3,4,5,6: GeForce GTX 1080 Ti",
             "CUDA_HOME: /usr/local/cuda", "NVCC: Cuda compilation tools, release 11.2, V11.2.152",
             "PyTorch: 1.12.1"]
    env = read_reports([("log", "".join(f"{prefix}{line}   \n" for line in lines))])
    assert env.sources == ("OpenMMLab's collect_env in log",)
    assert isinstance(env.torch, TorchFacts)


ROUND8 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round8" / "reports-G"


def test_an_issues_title_is_read_too() -> None:
    # Syllo/nvtop#95 (round 8's r17-013, development data since): the error is only in the
    # issue's title, a Markdown heading
    text = (ROUND8 / "r17-013.md").read_text(encoding="utf-8")
    kinds = [b.kind for b in find_blocks(text)]
    assert "nvidia-smi (error)" in kinds
    env = read_reports([("r17-013.md", text)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.VERSION_MISMATCH
    # a heading without such words is still no block
    assert find_blocks("# Help needed\n\nsome words\n") == []


ROUND9 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round9" / "reports-H"


@pytest.mark.parametrize(("name", "prefix"), [
    ("r18-001.txt", "INFO:root:"),  # logging's default format: open-mmlab/mmdeploy#17
    ("r18-005.txt", "10/07 17:11:54 - mmengine - INFO - "),  # mmengine's: open-mmlab/mmdeploy#2469
])
def test_other_log_prefixes_before_an_openmmlab_report(name: str, prefix: str) -> None:
    text = (ROUND9 / name).read_text(encoding="utf-8")
    assert text.startswith(prefix)
    env = read_reports([(name, text)])
    assert env.sources == (f"OpenMMLab's collect_env in {name}",)
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.cuda_available is True


def test_a_compose_services_prefix_is_taken_off_its_lines() -> None:
    """Round 19's r41-011: Docker Compose's log, each line of the service's nvidia-smi after
    "frigate    | ": the table's GPU rows were not read under the prefix (no GPU); with it
    taken off they are. A table row's first cell is no service (it needs three lines)."""
    file = Path(__file__).parents[1] / "fixtures" / "heldout" / "round19" / "reports-R" / \
        "r41-011.txt"
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and len(env.nvml.gpus) == 1
    assert issue_body._unprefixed(["a | b", "c"]) == ["a | b", "c"]
