"""Blocks found inside Markdown (fences, <details>, quotes, bare pastes) and merged into one
Environment; garbage is refused with one line naming the input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.model import NvmlFacts, Reason, TorchFacts, Unavailable
from gpudoctor.reports import ReportError, read_reports
from gpudoctor.reports.issue_body import find_blocks
from gpudoctor.snapshot import dumps, loads
from tests.reports.report_excerpts import (
    COLLECT_ENV_4090_CU117,
    COLLECT_ENV_WSL_4070,
    SMI_MISMATCH,
    TABLE_550_A10,
)

ENVS = Path(__file__).resolve().parent.parent / "fixtures" / "envs"

# the shape of pytorch/pytorch's bug template: prose, a trace, "### Versions" and a fenced
# collect_env; a reply below adds nvidia-smi inside <details>, in a fence with a language
ISSUE = f"""### 🐛 Describe the bug

Training crashes on my RTX 4090:

```python
import torch
torch.zeros(1).cuda()
```

### Versions

```
{COLLECT_ENV_4090_CU117}```

<details>
<summary>nvidia-smi</summary>

```text
{TABLE_550_A10}```

</details>
"""


def test_blocks_in_a_markdown_issue() -> None:
    kinds = [b.kind for b in find_blocks(ISSUE)]
    assert kinds == ["collect_env", "nvidia-smi"]


def test_an_issue_merges_torchs_side_and_the_drivers() -> None:
    env = read_reports([("issue-123.md", ISSUE)])
    assert isinstance(env.torch, TorchFacts)  # from collect_env
    assert isinstance(env.nvml, NvmlFacts)  # from the table, which states more than collect_env
    assert env.nvml.driver_version == "550.127.05" and env.nvml.cuda_driver_version == 12040
    assert env.sources == ("collect_env (cut off) in issue-123.md", "nvidia-smi in issue-123.md")


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


def test_an_nvidia_smi_error_beats_collect_envs_driver_line() -> None:
    """collect_env ran before the upgrade; nvidia-smi's error is the state being reported."""
    body = f"```\n{COLLECT_ENV_4090_CU117}```\n\nnow nvidia-smi says:\n\n```\n{SMI_MISMATCH}```\n"
    env = read_reports([("issue", body)])
    assert isinstance(env.nvml, Unavailable) and env.nvml.reason is Reason.VERSION_MISMATCH
    assert isinstance(env.torch, TorchFacts)


def test_several_inputs_merge() -> None:
    env = read_reports([("collect_env.txt", COLLECT_ENV_4090_CU117),
                        ("nvidia-smi.txt", TABLE_550_A10)])
    assert env.sources == ("collect_env (cut off) in collect_env.txt",
                           "nvidia-smi in nvidia-smi.txt")


@pytest.mark.parametrize(
    "text",
    ["", "hello world\n", "\x00\x01\x02 binary-ish", '{"a": 1}', "PyTorch is great: yes\n",
     "```\nnothing here\n```\n", "<nvidia_smi_log>"],
)
def test_garbage_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ReportError) as e:
        read_reports([("paste.txt", text)])
    message = str(e.value)
    assert message.startswith("paste.txt: no report recognised") and "\n" not in message


def test_one_unrecognised_input_among_good_ones_is_named() -> None:
    with pytest.raises(ReportError, match=r"^notes\.txt: no report recognised"):
        read_reports([("good.txt", TABLE_550_A10), ("notes.txt", "just notes\n")])


def test_snapshot_read_exactly_as_today() -> None:
    text = (ENVS / "h100-healthy.json").read_text()
    assert read_reports([("h100-healthy.json", text)]) == loads(text)


def test_snapshot_in_an_issue_fence() -> None:
    text = (ENVS / "lost-gpu.json").read_text()
    env = read_reports([("issue.md", f"my snapshot:\n\n```json\n{text}```\n")])
    assert env == loads(text)


def test_broken_snapshot_is_named() -> None:
    data = json.loads((ENVS / "h100-healthy.json").read_text())
    data["environment"]["nvml"]["gpus"][0]["compute_capability"] = 90
    with pytest.raises(ReportError, match=r"^broken\.json is not a usable gpudoctor snapshot"):
        read_reports([("broken.json", json.dumps(data))])


def test_a_report_snapshot_keeps_its_sources() -> None:
    env = read_reports([("issue-123.md", ISSUE)])
    again = read_reports([("snap.json", dumps(env))])
    assert again == env and again.sources == env.sources
