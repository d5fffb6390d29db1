"""A report that names torch's release but not which build it is ("PyTorch Version: 1.7.1",
"torch 2.4.0" in a pip list, no tag, no CUDA, no availability): `TorchFacts.stated_version`
keeps the release, and GD103 / GD404 judge it by what holds for every CUDA build of that
release the tables know. Each text is a real report from a public issue (its link in the
set's index.toml), scored blind before this rule and development data since."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpudoctor import views as V
from gpudoctor.checks.driver import check_driver_vs_torch
from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import load_tables
from gpudoctor.model import Environment, NvmlFacts, Status, TorchFacts, TorchRuntime, Unavailable
from gpudoctor.reports.read import read_reports

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

TABLES = load_tables()
HELDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"


def _read(path: str) -> Environment:
    file = HELDOUT / path
    index = tomllib.loads((file.parent / "index.toml").read_text(encoding="utf-8"))
    assert any(r["file"] == file.name and r["source"].startswith("https://github.com/")
               for r in index["report"])  # a real public report
    return read_reports([(file.name, file.read_text(encoding="utf-8"))])


def test_an_environment_list_naming_the_release_and_the_gpu_with_its_driver() -> None:
    """PyTorch's old issue template: "PyTorch Version: 1.7.1", "CUDA/cuDNN version: CUDA
    11.0, cuDNN 8.0.5" (whose CUDA: the toolkit's or torch's, the words do not say), "GPU
    models and configuration: GeForce RTX 2070, driver 450.102.04". Before, the GPU value
    with its driver was not read and both checks skipped."""
    env = _read("round6/reports-E/r9-016.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, Unavailable)
    assert V.stated_release(env) == "1.7.1"
    assert V.driver_version(env) == "450.102.04"
    assert isinstance(env.nvml, NvmlFacts) and [g.name for g in env.nvml.gpus] == [
        "GeForce RTX 2070"]
    gd103 = check_driver_vs_torch.run(env, TABLES)
    assert gd103.status is Status.PASS, gd103
    assert "whichever CUDA build of torch 1.7.1" in gd103.message
    assert "9.2, 10.1, 10.2, 11.0" in gd103.message  # every build the tables know, named
    gd404 = check_gpu_arch.run(env, TABLES)
    assert gd404.status is Status.PASS, gd404
    assert "every CUDA build of torch 1.7.1 in the tables (cu92, cu101, cu102, cu110)" in \
        gd404.message


def test_a_driver_too_old_for_every_build_of_the_release_fails_gd103() -> None:
    """The rule's other side, on the same report with its driver set to 384.130 (CUDA 9.0's):
    every CUDA build of 1.7.1 needs more (9.2: ≥ 396.26), so whichever it is, it fails; a
    driver between (440.33: runs 10.2, not 11.0 in full) decides nothing."""
    env = _read("round6/reports-E/r9-016.md")
    assert isinstance(env.nvml, NvmlFacts)
    old = replace(env, nvml=replace(env.nvml, driver_version="384.130"))
    f = check_driver_vs_torch.run(old, TABLES)
    assert f.status is Status.FAIL, f
    assert "too old for every CUDA build of torch 1.7.1" in f.message and f.fix
    between = replace(env, nvml=replace(env.nvml, driver_version="440.33.01"))
    f = check_driver_vs_torch.run(between, TABLES)
    assert f.status is Status.SKIP and "runs some of torch 1.7.1's CUDA builds" in f.message


@pytest.mark.parametrize("path", [
    "round13/reports-L/r29-016.md",  # "torch version 2.3", RTX 4080 Laptop, driver 552.22
    "round14/reports-M/r31-007.md",  # "torch 2.4.0" in a pip list, A10G, "NVIDIA-SMI 555.42.02"
])
def test_every_build_of_the_release_runs_on_the_gpu_and_driver(path: str) -> None:
    env = _read(path)
    assert V.stated_release(env) is not None
    for check in (check_driver_vs_torch, check_gpu_arch):
        f = check.run(env, TABLES)
        assert f.status is Status.PASS and "whichever CUDA build" in f.message, f


def test_a_gpu_at_the_oldest_arch_of_the_lists_is_not_vouched_for() -> None:
    """"installed pytorch 1.3 with conda" on a Tesla K40m (sm_35): every pip build of 1.3.0
    lists sm_35, yet conda's 1.3 builds had dropped it (pytorch/pytorch#30532, this very
    report: every job failed). Builds made elsewhere part at the oldest arch of a list, so
    GD404 does not pass a GPU there; it skips."""
    env = _read("round7/reports-F/r13-017.md")
    assert V.stated_release(env) == "1.3"
    f = check_gpu_arch.run(env, TABLES)
    assert f.status is Status.SKIP, f
    assert "which build of torch 1.3 it is" in f.message and "oldest arch" in f.message


def test_no_build_of_the_release_has_the_gpu() -> None:
    """GD404's failing side: a release none of whose CUDA builds holds code for the GPU fails
    whichever build it is: a Fermi "NVS 310" (sm_21) named in words beside "torch   1.2.0" in
    a pip list (NVS products were not read from words before)."""
    env = _read("round8/reports-G/r17-031.md")
    assert V.stated_release(env) == "1.2.0"
    f = check_gpu_arch.run(env, TABLES)
    assert f.status is Status.FAIL, f
    assert "no CUDA build of torch 1.2.0 in the tables (cu92, cu100) has code for sm_21" in \
        f.message and f.fix


def test_a_release_beside_a_message_only_a_cuda_build_prints_is_that_cuda_build() -> None:
    """Lightning's environment details ("PyTorch: 1.5.0", "CUDA available: False") under
    torch's "The NVIDIA driver on your system is too old (found version 10000)": only a CUDA
    build prints it, so the release is read as a CUDA build of 1.5.0 and GD103 fails on
    torch's own words. Before, the block left the build open and GD103 skipped."""
    env = _read("round4/reports-C/r4-022.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "1.5.0"
    assert isinstance(env.torch.runtime.cuda, Unavailable)
    assert V.stated_release(env) is None  # the runtime is known now
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.FAIL and "found version 10000" in f.message, f


def test_a_tag_written_apart_is_the_build() -> None:
    """"**Versions:** PyTorch 2.8.0 + cu129" on a GTX 1070 (sm_61): the tag written with
    spaces is the cu129 build, which has no sm_61 code (CUDA 12.9's builds start at sm_70)."""
    env = _read("round6/reports-E/r11-008.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "2.8.0+cu129"
    f = check_gpu_arch.run(env, TABLES)
    assert f.status is Status.FAIL and "2.8.0+cu129" in f.message, f


def test_torchs_messages_take_the_version_the_words_name_beside_them() -> None:
    """torch's "CUDA initialization: … Error 804" (only a CUDA build prints it) and a pip list
    naming "torch  2.3.1+cu121" (round 3's r1-064): one torch, that build. Before, the
    messages' build of unknown version stood alone and GD103 skipped; now it judges CUDA 12.1
    against driver 525.89.02 (minor-version compatibility: a warning, the GPUs' cubins not
    known)."""
    env = _read("round3/reports-B/r1-064.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert (env.torch.runtime.version, env.torch.runtime.cuda) == ("2.3.1+cu121", "12.1")
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.WARN and "minor-version compatibility" in f.message, f


def test_a_release_written_in_part_beside_it_in_full_is_one_version() -> None:
    """"broken between PyTorch 1.13 and CUDA 11.7" above "pip install torch==1.13.1+cu117"
    (round 4's r5-028): the same release, the second in full, not two versions (an upgrade
    told as a story, which states none)."""
    env = _read("round4/reports-C/r5-028.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "1.13.1+cu117"
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.PASS and "CUDA 11.7" in f.message, f


def test_a_capability_warning_shows_the_driver_runs_torchs_cuda() -> None:
    """FramePack on an RTX 5080 (round 14's r31-011): torch 2.6.0+cu126 warns that sm_120 is
    not compatible, which it prints only after its CUDA initialised, and the report gives no
    driver version: the driver runs CUDA 12.6, so GD103 passes saying why (the log's "CUDA
    error: no kernel image is available", a kernel launched, says so first)."""
    env = _read("round14/reports-M/r31-011.md")
    f = check_driver_vs_torch.run(env, TABLES)
    assert f.status is Status.PASS and "CUDA 12.6 initialised" in f.message, f


def test_a_conda_line_pinning_pytorch_cuda_is_no_longer_a_bare_release() -> None:
    """An image installing "pytorch==2.2.0 … pytorch-cuda=12.1 -c pytorch" on an A800
    (round 9's r19-012): the conda line gives the build's CUDA, so both checks judge that
    build itself, not every build of the release."""
    env = _read("round9/reports-H/r19-012.md")
    assert V.stated_release(env) is None
    assert V.torch_cuda(env) == "12.1"
    for check in (check_driver_vs_torch, check_gpu_arch):
        f = check.run(env, TABLES)
        assert f.status is Status.PASS and "whichever" not in f.message, f
