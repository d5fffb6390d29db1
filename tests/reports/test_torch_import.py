"""`gpudoctor.reports.torch_import`: torch's own import failing, as pasted tracebacks show it.
Each text is a real report from a public issue (round 15's reports-N, scored blind before
this reader and development data since; its index.toml has each thread)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import Reason, Status, TorchFacts, Unavailable
from gpudoctor.reports import torch_import
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

ROUND15 = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round15" / "reports-N"


@pytest.mark.parametrize(("name", "why"), [
    # DeepSpeed's ds_report: the wheel's cuBLAS beside another cuBLASLt
    ("r34-023.md", "symbol cublasLtGetStatusString, version libcublasLt.so.11 not defined"),
    # vLLM's collect_env, and a bare line naming a library in torch's lib directory
    ("r34-024.md", "undefined symbol: __nvJitLinkComplete_12_4"),
    ("r34-025.md", "undefined symbol: __nvJitLinkComplete_12_4"),
    # IPython's frame ("File ~/…/torch/__init__.py:168, in _load_global_deps()")
    ("r34-026.md", "libcurand.so.10: cannot open shared object file"),
    ("r34-027.md", "libcudnn.so.8: cannot open shared object file"),
    # the frame's line cut at its start, beside collect_env's "PyTorch version: N/A"
    ("r34-028.md", "libcudnn.so.9: cannot open shared object file"),
])
def test_torchs_import_failure_fails_gd401(name: str, why: str) -> None:
    env = read_reports([(name, (ROUND15 / name).read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts)
    rt = env.torch.runtime
    assert isinstance(rt, Unavailable) and rt.reason is Reason.ERROR
    assert rt.message.startswith("import torch failed: ") and why in rt.message
    assert statuses(env)["GD401"] is Status.FAIL


@pytest.mark.parametrize("text", [
    # an extension's own import: its frame, not torch's __init__
    'File "/x/site-packages/flash_attn/__init__.py", line 3, in <module>\n'
    "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    # torch's frame, then another error: not the loader's
    'File "/x/site-packages/torch/__init__.py", line 1, in <module>\n'
    "ModuleNotFoundError: No module named 'typing_extensions'",
    # a library of somebody else's directory, no torch frame
    "OSError: /opt/app/lib/libfoo.so: cannot open shared object file: No such file or directory",
])
def test_what_is_not_torchs_import_failure(text: str) -> None:
    assert torch_import.parse(text) is None
