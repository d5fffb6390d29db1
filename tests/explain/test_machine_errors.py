"""Errors provoked on a real GPU machine (tests/fixtures/machines/h200-x1/provoked-errors.json,
captured by `benchmarks/gpu_error_texts.py` on a lent H200 with torch 2.11.0+cu130, NCCL
2.28.9 and nvcc 13.0, in two leases): the texts are torch's, NCCL's, the CUDA runtime's and
nvidia-smi's own, unedited, and each case's cause is the one the capture provoked. Each is
explained as that cause, and the out-of-memory numbers are read as torch 2.11 prints them
("0 bytes is reserved")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain

TABLES = load_tables()
CAPTURED = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "machines"
                       / "h200-x1" / "provoked-errors.json").read_text(encoding="utf-8"))
# case -> (the first diagnosis's signature id, its cause class); None: nothing to explain
EXPECTED: dict[str, tuple[str, str] | None] = {
    "no-visible-gpu": ("no-cuda-gpus-available", "no-gpu-visible"),
    "visible-devices-bad-value": ("no-cuda-gpus-available", "no-gpu-visible"),
    "invalid-ordinal": ("invalid-device-ordinal", "no-gpu-visible"),
    "set-device-ordinal": ("invalid-device-ordinal", "no-gpu-visible"),
    "oom": ("cuda-oom-gpu-capacity", "out-of-memory"),
    "oom-fragmented": ("cuda-oom-gpu-capacity", "out-of-memory"),
    "device-assert": ("index-out-of-range-assert", "not-environment"),  # the kernel's line
    "device-assert-blocking": ("index-out-of-range-assert", "not-environment"),
    "embedding-index": ("index-out-of-range-assert", "not-environment"),
    "cross-entropy-label": ("index-out-of-range-assert", "not-environment"),
    "nccl-two-ranks-one-gpu": ("nccl-duplicate-gpu", "not-environment"),
    "nvidia-smi-missing-gpu": ("nvidia-smi-no-devices", "no-gpu-visible"),
    "mixed-devices": ("shapes-do-not-match", "not-environment"),
    "cudnn-disabled-conv": None,  # it ran: a number, no error
    "nccl-no-socket-interface": ("nccl-warnings-bootstrap-no-socket-interface-found",
                                 "nccl-setup"),
    "kernel-image-missing": ("code-cuda-error-no-kernel-image-for-device", "arch-not-in-build"),
    "triton-ptxas-missing": None,  # it ran: Triton did not need the path
    "checkpoint-cuda-hidden": ("torch-load-cuda-without-cuda", "no-gpu-visible"),
    "oom-other-process": ("cuda-oom-other-processes", "out-of-memory"),
}


def test_every_captured_case_has_an_expectation() -> None:
    assert set(CAPTURED) == set(EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_a_provoked_error_is_explained_as_its_cause(case: str) -> None:
    expl = explain(CAPTURED[case]["text"], TABLES, probe=None)
    want = EXPECTED[case]
    if want is None:
        assert not expl.found
        return
    best = expl.diagnoses[0].match.signature
    assert (best.id, best.cause_class) == want


def test_torch_211s_out_of_memory_numbers_are_read_with_zero_bytes() -> None:
    """torch 2.11 writes a zero as "0 bytes": the numbers are still read, and the cause follows
    them: 400 GiB on a 139.80 GiB card is larger than the GPU; 136 GiB allocated by this process
    with nothing reserved-but-unallocated is this process filling it, not fragmentation."""
    whole = explain(CAPTURED["oom"]["text"], TABLES, probe=None).diagnoses[0]
    assert "larger than the GPU" in whole.match.signature.title
    filled = explain(CAPTURED["oom-fragmented"]["text"], TABLES, probe=None).diagnoses[0]
    assert "this process fills the GPU" in filled.match.signature.title
    assert "fragment" not in filled.match.signature.title
