"""The grammar's entry: every scanner runs over the text, and each finding comes back once, in
the scanners' order (loader, logs, out of memory, kernel module, build, codes)."""

from __future__ import annotations

from gpudoctor.explain.derive import derive
from tests.explain.explain_kit import TABLES

PARTS = (
    "RuntimeError: CUDA error 209 at x.cu:1",
    "OSError: libcusparse.so.11: cannot open shared object file: No such file",
    "NVRM: Xid (PCI:0000:44:00): 79, pid='<unknown>', GPU has fallen off the bus.",
    "CUDA out of memory. Tried to allocate 40.00 GiB (GPU 0; 23.69 GiB total capacity; 1.00 GiB "
    "already allocated; 22.00 GiB free; 1.00 GiB reserved in total by PyTorch)",
    "nvcc fatal   : Unsupported gpu architecture 'compute_120'",
    "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
)


def _ids(text: str) -> list[str]:
    return [m.signature.id for m in derive(text, text.lower(), TABLES)]


def test_every_scanner_runs_and_the_findings_come_in_the_scanners_order() -> None:
    text = "\n".join(PARTS)
    assert _ids(text) == [
        "library-missing-libcusparse",  # loader
        "xid-79", "nvrm-gpu-has-fallen-off-the-bus",  # logs
        "cuda-oom-gpu-capacity",  # out of memory
        "kernel-module-nvidia",  # the kernel module's tools
        "nvcc-unsupported-arch",  # the build chain
        "code-cuda-error-no-kernel-image-for-device",  # codes, last
    ]


def test_each_finding_carries_its_span_in_the_text() -> None:
    text = "\n".join(PARTS)
    for m in derive(text, text.lower(), TABLES):
        assert 0 <= m.start < m.end <= len(text)
        assert m.excerpt[:20] in text[m.start:m.end], m.signature.id


def test_a_text_naming_nothing_derives_nothing() -> None:
    assert _ids("the model trained for 3 epochs; loss 0.12; everything is fine") == []


def test_one_scanners_finding_alone_comes_back_alone() -> None:
    assert _ids(PARTS[1]) == ["library-missing-libcusparse"]
    assert _ids(PARTS[0]) == ["code-cuda-error-no-kernel-image-for-device"]
