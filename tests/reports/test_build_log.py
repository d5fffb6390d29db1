"""A build log's nvcc by its release folder → the toolkit a build ran, and nvcc's refusals;
GD204 on them. The texts are round 20's development reports (each file's thread is in its
index.toml), and lines of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import Status, ToolkitsFacts
from gpudoctor.reports import build_log
from gpudoctor.reports.read import read_reports
from tests.reports.reading_kit import statuses

ROUND20 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round20" / "reports-S"


def _read(name: str) -> str:
    return (ROUND20 / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(("line", "version", "root"), [
    # a setup.py build's own error, and ninja's command line
    ("error: command '/usr/local/cuda-8.0/bin/nvcc' failed with exit status 1", "8.0",
     "/usr/local/cuda-8.0"),
    ("[1/9] /usr/local/cuda-11.0/bin/nvcc -I/home/u/torch/include -c x.cu", "11.0",
     "/usr/local/cuda-11.0"),
    # Windows, as setuptools prints the command's repr (backslashes doubled)
    ("error: command 'C:\\\\Program Files\\\\NVIDIA GPU Computing Toolkit\\\\CUDA\\\\v11.2\\\\bin"
     "\\\\nvcc.exe' failed with exit code 1", "11.2",
     "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.2"),
])
def test_the_release_folder_of_the_nvcc_a_build_ran(line: str, version: str, root: str) -> None:
    part = build_log.parse(line)
    assert part is not None and isinstance(part.toolkits, ToolkitsFacts)
    toolkit = part.toolkits.toolkits[0]
    assert (toolkit.version, toolkit.root, toolkit.in_use) == (version, root, True)


@pytest.mark.parametrize("text", [
    "/usr/local/cuda/bin/nvcc -c x.cu",  # no release in the folder
    "/opt/conda/envs/x/bin/nvcc -c x.cu",
    "export PATH=/usr/local/cuda-11.0/bin:$PATH",  # a folder named, not its nvcc run
    # two releases' nvcc: which one built is not told
    "/usr/local/cuda-11.0/bin/nvcc -c a.cu\n/usr/local/cuda-11.3/bin/nvcc -c b.cu",
    "/usr/local/cuda-11.0/bin/nvcc_wrapper",
])
def test_no_release_or_two_releases_state_none(text: str) -> None:
    assert build_log.parse(text) is None


def test_nvcc_refusing_the_gpus_architecture_fails_gd204() -> None:
    """r43-012 (Windows, an RTX 4090): the build's nvcc of CUDA 11.2 refuses compute_89 — the
    build for this GPU fails (a toolkit older than a GPU only warns: PTX of an older
    architecture could still be built for it)."""
    env = read_reports([("r43-012.md", _read("r43-012.md"))])
    toolkit = env.toolkits.in_use if isinstance(env.toolkits, ToolkitsFacts) else None
    assert toolkit is not None and toolkit.version == "11.2"  # the build's, not PATH's 11.6
    assert toolkit.refused_archs == ("8.9",)
    assert statuses(env)["GD204"] is Status.FAIL


def test_without_the_refusal_an_older_toolkit_warns() -> None:
    """r43-026: CUDA 11.0's nvcc building for an RTX 3090 (the words name it), the log cut
    before nvcc's error."""
    env = read_reports([("r43-026.md", _read("r43-026.md"))])
    assert statuses(env)["GD204"] is Status.WARN


def test_the_words_state_the_rest_and_a_refusal_of_no_named_gpu_is_no_pass() -> None:
    """r43-011: the build ran CUDA 8.0's nvcc; the words name the driver (440.31, read as
    before: GD104 passes) and "GTX 1080Ti and RT 2080Ti" (the second misspelt, unread). nvcc
    refused compute_75, which no GPU it names has: GD204 does not pass on the 1080 Ti alone."""
    env = read_reports([("r43-011.md", _read("r43-011.md"))])
    found = statuses(env)
    assert found["GD104"] is Status.PASS and found["GD103"] is Status.PASS
    assert found["GD204"] is Status.SKIP
