"""What an issue body states in words (no tool's output pasted) → the facts the words state.
Real texts: round 7's reports that no reader recognised when it was scored (development data
since; each file's index entry has its thread), and short passages reworded from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.checks.pytorch import check_gpu_arch
from gpudoctor.compat import load_tables
from gpudoctor.model import GpuFacts, NvmlFacts, Status, TorchFacts, TorchRuntime, Unavailable
from gpudoctor.reports import prose
from gpudoctor.reports.read import ReportError, read_reports
from gpudoctor.views import PROSE, toolkit_version
from tests.reports.reading_kit import statuses

ROUND7 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round7" / "reports-F"


def _read(name: str) -> tuple[NvmlFacts, TorchRuntime]:
    env = read_reports([(name, (ROUND7 / name).read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.binding == PROSE
    assert isinstance(env.torch, TorchFacts)
    rt = env.torch.runtime
    assert isinstance(rt, TorchRuntime)
    return env.nvml, rt


def test_an_apps_own_dump_and_the_gpu_the_reporter_names() -> None:
    # brycedrennan/imaginAIry#398: "i have NVIDIA GeForce GTX 1060" above torch_version 1.13.1+cpu
    nvml, rt = _read("r12-003.md")
    assert [g.name for g in nvml.gpus if isinstance(g, GpuFacts)] == ["NVIDIA GeForce GTX 1060"]
    assert rt.version == "1.13.1+cpu"
    assert rt.cuda is None
    env = read_reports([("r12-003.md", (ROUND7 / "r12-003.md").read_text(encoding="utf-8"))])
    got = statuses(env)
    assert got["GD402"] is Status.FAIL  # a CPU build where the reporter has an NVIDIA GPU
    assert got["GD101"] is Status.SKIP  # naming a GPU is no sign that a driver runs it
    assert got["GD102"] is Status.SKIP


def test_a_pip_line_and_a_kepler_gpu_fail_by_the_releases_builds() -> None:
    # pytorch/pytorch#31314: GeForce GT 740M with torch==1.3.1+cu92
    nvml, rt = _read("r12-013.md")
    assert [g.name for g in nvml.gpus if isinstance(g, GpuFacts)] == ["GeForce GT 740M"]
    assert rt.version == "1.3.1+cu92"
    assert rt.cuda == "9.2"
    env = read_reports([("r12-013.md", (ROUND7 / "r12-013.md").read_text(encoding="utf-8"))])
    assert statuses(env)["GD404"] is Status.FAIL


def test_an_untagged_version_fails_where_no_build_of_the_release_has_the_code() -> None:
    # pytorch/pytorch#31319: torch 1.3.1 on Tesla K40c (sm_35) beside a K80; no tag, so which
    # build it is stays open, but neither 1.3.1 build (cu92, cu101) runs on sm_35
    env = read_reports([("r12-012.md", (ROUND7 / "r12-012.md").read_text(encoding="utf-8"))])
    finding = check_gpu_arch.run(env, load_tables())
    assert finding.status is Status.FAIL
    assert "no CUDA build of torch 1.3.1 in the tables (cu92, cu101) has code for sm_35" in (
        finding.message)


@pytest.mark.parametrize("text", [
    "I have a GeForce GTX 1060 and nothing works",  # a GPU alone is no report
    "torch 2.1.0 is installed",  # a version alone neither
    "my M.2 drive and 2019 laptop; pytorch 1.10.1; see H2 heading",  # no GPU product named
])
def test_too_few_facts_are_no_report(text: str) -> None:
    with pytest.raises(ReportError, match="no report recognised"):
        read_reports([("text", text)])


def test_two_versions_told_as_a_story_state_none() -> None:
    text = ("with torch 1.2.0 on my GTX 1070 it worked; after upgrading to torch 1.4.0 "
            "torch.cuda.is_available() returns False")
    assert prose.parse(text, load_tables()) is None  # no version: a GPU alone is too few
    partial = prose.parse(text + " (driver version 440.33.01)", load_tables())
    assert partial is not None
    assert partial.torch is None  # which version is installed now, the words leave open
    assert isinstance(partial.nvml, NvmlFacts)
    assert partial.nvml.driver_version == "440.33.01"


def test_availability_in_words_and_device_properties() -> None:
    text = ("PyTorch 1.3.1 here, torch.cuda.is_available() returns True\n"
            "_CudaDeviceProperties(name='GeForce GT 740', major=3, minor=0, total_memory=1991MB,"
            " multi_processor_count=2)\n")
    partial = prose.parse(text, load_tables())
    assert partial is not None
    assert isinstance(partial.nvml, NvmlFacts)
    gpu = partial.nvml.gpus[0]
    assert isinstance(gpu, GpuFacts)
    assert (gpu.name, gpu.compute_capability) == ("GeForce GT 740", "3.0")
    assert partial.torch is not None
    assert isinstance(partial.torch.runtime, TorchRuntime)
    assert partial.torch.runtime.cuda_available is True


@pytest.mark.parametrize(("said", "available"), [
    ("torch.cuda.is_available() return true", True),  # round 17's r38-008, as written
    ("torch.cuda.is_available() returns FALSE", False),
])
def test_availability_in_lower_or_upper_case(said: str, available: bool) -> None:
    assert prose._torch_said(f"pytorch 2.1.0\n{said}\n") == ("2.1.0", available)


def test_a_list_of_products_is_not_a_machine() -> None:
    names = ", ".join(f"GeForce RTX {n}" for n in (2060, 2070, 2080, 3060, 3070, 3080, 3090,
                                                  4060, 4070, 4080, 4090, 5070, 5080, 5090))
    text = f"torch 2.7.0 supports {names}, Tesla T4, A100, H100, L40S"
    # more than MAX_GPUS products: a list, not this machine; then too few facts remain
    assert prose.parse(text, load_tables()) is None
    assert prose.parse(text + "; torch.cuda.is_available() is False", load_tables()) is not None
    # a tagged version is read alone (it states the build), the list's GPUs still are not
    tagged = prose.parse(text.replace("2.7.0", "2.7.0+cu128"), load_tables())
    assert tagged is not None and tagged.nvml is None and tagged.torch is not None


ROUND9 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round9" / "reports-H"


@pytest.mark.parametrize(("name", "gpu"), [
    # torch's "Torch not compiled with CUDA enabled" as the title, the reporter's GPU in
    # the body's words: dbolya/yolact#25 ("I have NVIDIA GeForce RTX 2080 Ti"),
    # riffusion/riffusion-hobby#145 ("on RTX2060": the words joined), chenfei-wu/TaskMatrix#161
    ("r18-019.md", "NVIDIA GeForce RTX 2080 Ti"),
    ("r18-020.md", "RTX2060"),
    ("r18-035.md", "RTX 4090"),
    # 16lemoing/dot#9: "My gpu is  4070ti": a bare model number after the words "my gpu is"
    ("r18-028.md", "4070ti"),
])
def test_torchs_cpu_build_message_and_the_gpu_the_words_name(name: str, gpu: str) -> None:
    """torch's own message is a tool's output, so the words alone are not read as a report;
    but that message states no GPU and no driver, so the GPUs the words name are read beside
    it (bound as the reporter's words): a CPU-only build where the reporter has an NVIDIA GPU
    fails GD402, and GD101 still skips."""
    env = read_reports([(name, (ROUND9 / name).read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding == PROSE
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == [gpu]
    got = statuses(env)
    assert (got["GD402"], got["GD101"]) == (Status.FAIL, Status.SKIP)


def test_full_width_colons_a_tag_without_its_plus_and_a_lower_case_line() -> None:
    # open-mmlab/mmdetection#9781: "gpu：rtx3060", "torch version：1.8.2cu111" (a Chinese input
    # method's full-width colons, the local tag written without "+", "rtx" in lower case)
    env = read_reports([("r18-036.md", (ROUND9 / "r18-036.md").read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert (env.torch.runtime.version, env.torch.runtime.cuda) == ("1.8.2+cu111", "11.1")
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == ["rtx3060"]
    assert statuses(env)["GD402"] is Status.PASS


@pytest.mark.parametrize("text", ["I bought it in 2019 for 1080p games", "gpu: 99999",
                                  "the GPU is 2019 vintage"])
def test_a_bare_number_is_no_gpu_unless_the_catalogue_places_it_after_gpu(text: str) -> None:
    assert prose.named_gpus(text, load_tables()) is None


def test_a_json_dump_of_versions_and_a_gpu_model_in_capitals() -> None:
    # https://github.com/invoke-ai/InvokeAI/issues/7934 (round 10, r22-021): '"torch" :
    # "2.6.0+cu124"' in the app's JSON, "RTX 5060 TI" under "### GPU model": CUDA 12.4 cannot
    # hold sm_120 code (GD404 fails by the arch rule)
    path = ROUND9.parents[1] / "round10" / "reports-I" / "r22-021.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "2.6.0+cu124"
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == ["RTX 5060 TI"]
    got = statuses(env)
    assert (got["GD402"], got["GD404"]) == (Status.PASS, Status.FAIL)


# deepspeedai/DeepSpeed#2055 (round 12's r28-022): tools' output that states no torch, and the
# torch the reporter names beside it
DEEPSPEED_2055 = """\
I am getting `nvcc missing` when executing `ds_report` instruction
But `nvcc --version` can print the following information:
```
nvcc: NVIDIA (R) Cuda compiler driver
Cuda compilation tools, release 11.3, V11.3.109
Build cuda_11.3.r11.3/compiler.29920130_0
```
`nvidia-smi` shows：
```
NVIDIA-SMI 470.129.06   Driver Version: 470.129.06   CUDA Version: 11.4
```
My environment is `pytorch==1.7.1+cu110` and `deepspeed==0.6.5`
"""


def test_the_torch_the_words_name_beside_tools_that_state_none() -> None:
    env = read_reports([("ds-2055", DEEPSPEED_2055)])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "1.7.1+cu110" and env.torch.runtime.cuda == "11.0"
    found = statuses(env)
    assert found["GD103"] is Status.PASS  # driver 470 runs CUDA 11.0
    # two versions named (an upgrade told as a story): the words state none
    story = DEEPSPEED_2055.replace("and `deepspeed", "(was `torch==1.6.0`) and `deepspeed")
    assert read_reports([("story", story)]).torch.reason.value == "not-reported"  # type: ignore[union-attr]


HELDOUT = Path(__file__).parents[1] / "fixtures" / "heldout"


def _env(path: str):  # type: ignore[no-untyped-def]
    file = HELDOUT / path
    return read_reports([(file.name, file.read_text(encoding="utf-8"))])


def test_a_version_with_torchs_tag_alone_in_a_list_is_torchs() -> None:
    """ComfyUI's issue (round 13's r30-018): "- NVIDIA GeForce GTX 1080 Ti", "- Windows 10",
    "- 2.8.0+cu128": no word says torch, but only torch's own version carries that tag (a
    torchvision's is 0.x). Before, nothing was read; now GD404 fails (cu128 starts at sm_70)."""
    env = _env("round13/reports-L/r30-018.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "2.8.0+cu128"
    assert statuses(env)["GD404"] is Status.FAIL


def test_a_web_uis_quoted_version_is_the_cpu_build() -> None:
    """SD.Next (round 5's r6-023): 'in the "System Info" section it says "2.0.0+cpu Autocast
    half"' on an RTX2060: a CPU build on an NVIDIA GPU."""
    env = _env("round5/reports-D/r6-023.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "2.0.0+cpu"
    assert statuses(env)["GD402"] is Status.FAIL


def test_a_conda_line_from_pytorchs_channel_gives_the_builds_cuda() -> None:
    """"GPU3090，" and "pytorch：python=3.7 pytorch==1.7.0 cudatoolkit=10.1 torchvision -c
    pytorch" (round 14's r31-004): the GPU named with its number run on, and the conda line
    pinning this very torch's CUDA: 1.7.0's CUDA 10.1 build, which has no sm_86 (GD404)."""
    env = _env("round14/reports-M/r31-004.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert (env.torch.runtime.version, env.torch.runtime.cuda) == ("1.7.0", "10.1")
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == ["3090"]
    assert statuses(env)["GD404"] is Status.FAIL


@pytest.mark.parametrize(("text", "version"), [
    ("my environment is linux, tesla K40c, pytorch1.4, cuda101, python3.7.", "1.4"),
    ("pip install torchvision==0.19.0+cu121\n", None),  # torchvision's tag is no torch
    ("- 0.19.0+cu121\n", None),
    ("- 2.1.0+cu121\n- 2.2.0+cu121\n", None),  # two releases with torch's tag: which one?
])
def test_what_names_a_torch_version(text: str, version: str | None) -> None:
    assert prose._torch_said(text)[0] == version


def test_a_conda_line_for_another_version_or_cpuonly_gives_no_cuda() -> None:
    assert prose._conda_cuda("conda install pytorch==1.7.1 cudatoolkit=11.0 -c pytorch",
                             "1.7.0") is None
    assert prose._conda_cuda("conda install pytorch==1.7.0 cpuonly -c pytorch", "1.7.0") is None
    assert prose._conda_cuda("conda install pytorch==1.7.0 cudatoolkit=11.0 -c conda-forge",
                             "1.7.0") is None
    assert prose._conda_cuda("conda install pytorch==1.7.0 cudatoolkit=11.0 -c pytorch",
                             "1.7.0") == "11.0"


def test_the_gpu_the_words_name_beside_a_torch_the_tools_state_without_one() -> None:
    """"Ubuntu16.04、TITAN V 、driver 418.56、cuda 10.1" beside "python 3.6、torch 1.4.0" (round
    15's r33-028) and a Hugging Face env list whose only GPU is the "Tesla T4" above it
    (r33-032): the tools state torch and no GPU, so the words' GPU is read (as words: GD404
    judges it, GD101 does not). Before, only a CPU build's GPU was taken from the words, and
    "TITAN V" (no model number) was not read as a GPU at all."""
    titan = _env("round15/reports-N/r33-028.md")
    assert isinstance(titan.nvml, NvmlFacts) and titan.nvml.binding == PROSE
    assert [g.name for g in titan.nvml.gpus if isinstance(g, GpuFacts)] == ["TITAN V"]
    assert statuses(titan)["GD404"] is Status.PASS
    t4 = _env("round15/reports-N/r33-032.md")
    assert isinstance(t4.nvml, NvmlFacts)
    got = statuses(t4)
    assert got["GD404"] is Status.PASS and got["GD101"] is Status.SKIP


def test_a_driver_named_without_a_gpu_judges_torchs_cuda() -> None:
    """Round 17's r38-004 (its thread in round17/reports-P/index.toml): "The GPU driver version
    is 520.61.05 … torch=2.1.1+cu118", no GPU named. The driver is stated (GD103 passes: 520
    runs CUDA 11.8), its state stays unknown (GD101 skips, naming it), and no GPU is listed
    (GD102 does not judge words; GD404 says the GPUs are not in the report)."""
    path = ROUND7.parents[1] / "round17" / "reports-P" / "r38-004.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding == PROSE
    assert (env.nvml.driver_version, env.nvml.gpus) == ("520.61.05", ())
    got = statuses(env)
    assert (got["GD103"], got["GD101"], got["GD102"], got["GD404"]) == (
        Status.PASS, Status.SKIP, Status.SKIP, Status.SKIP)
    # an old driver named beside a newer CUDA build fails as it would in a table
    old = read_reports([("w", "My driver version is 450.80.02 and I installed "
                              "torch==2.1.1+cu121\n")])
    assert statuses(old)["GD103"] is Status.FAIL


def test_torchs_prints_without_a_device_name_take_the_gpu_the_words_name() -> None:
    """Round 18's r39-024 (its thread in round18/reports-Q/index.toml): "My Tesla V100 GPU
    shows the following error", then torch's labelled prints of its version (2.11.0+cu128)
    and availability, no get_device_name(): the V100 the words name is judged (GD404 fails:
    the 2.11.0 cu128 wheel's list has no sm_70 code; it skipped). GD101 still skips."""
    path = ROUND7.parents[1] / "round18" / "reports-Q" / "r39-024.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding == PROSE
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == ["Tesla V100"]
    got = statuses(env)
    assert (got["GD404"], got["GD101"]) == (Status.FAIL, Status.SKIP)


def test_a_tagged_version_alone_states_release_and_build() -> None:
    """Round 15's r34-030 ("Torch version: torch==2.3.0+rocm6.0" beside an AMD card) and round
    13's r30-007 (a DGX Spark installer's "2.9.1+cpu" under "NVIDIA GB10"): a version with its
    local tag states the build as well as the release, so it is read alone. Before, both were
    refused ("no report recognised"); the ROCm one is AMD's to judge (GD402 skips, nothing
    fails), the CPU build beside an NVIDIA GB10 fails GD402."""
    rocm = _env("round15/reports-N/r34-030.md")
    assert isinstance(rocm.torch, TorchFacts) and isinstance(rocm.torch.runtime, TorchRuntime)
    assert rocm.torch.runtime.version == "2.3.0+rocm6.0"
    assert Status.FAIL not in statuses(rocm).values()
    spark = _env("round13/reports-L/r30-007.md")
    assert isinstance(spark.nvml, NvmlFacts)
    assert [g.name for g in spark.nvml.gpus if isinstance(g, GpuFacts)] == ["NVIDIA GB10"]
    assert statuses(spark)["GD402"] is Status.FAIL
    # an untagged version alone is still no report
    with pytest.raises(ReportError):
        read_reports([("w", "I use torch 2.3.0 and it crashes\n")])


@pytest.mark.parametrize(("text", "names"), [
    ("I run the code on an nvidia gpu A6000", ["A6000"]),
    ("a Quadro K5000 (Compute Capability 3.0)", ["Quadro K5000"]),
    ("Measured on a Jetson Thor (L4T R38.4)", ["Jetson Thor"]),
    ("NVIDIA Jetson AGX Orin and a Jetson Orin Nano", ["NVIDIA Jetson AGX Orin",
                                                      "Jetson Orin Nano"]),
    ("GB200 and GH200 nodes", ["GB200", "GH200"]),
    ("batch 4096 at step M2048 in H1000", []),  # numbers the catalogue places nowhere
    # the brand and a four-digit model (round 17's r38-005: "NVIDIA：5090  Driver: 570.172.08")
    ("NVIDIA: 5090  Driver: 570.172.08", ["5090"]),
    ("nvidia 590 driver, NVIDIA-610", []),  # three digits after the brand: driver branches
    # datacenter boards in lower case, as typed on a cluster (round 20's r43-010, r43-031)
    ("build the env on slurm with v100/h100 GPUs", ["v100", "h100"]),
    ("3090/a100 operating environment Driver Version: 495.29.05", ["a100"]),
    ("the b123 and p999 flags; node-h100-01; v10", []),  # unplaced, or inside a name
])
def test_workstation_grace_and_jetson_names_are_candidates_the_catalogue_places(
        text: str, names: list[str]) -> None:
    got = [g.name for g in prose._gpus(text, load_tables()) if isinstance(g, GpuFacts)]
    assert got == names


def test_the_gpus_a_design_note_names_are_judged_by_the_build_it_names() -> None:
    """Round 18's r40-018: a Jetson Thor (sm_110) with torch 2.9.1+cu128, whose aarch64 list
    the text quotes; the text names GB10, GB200/GH200 and Thor. Before, no GPU was read
    (GD404 skipped); now Thor is among them and the cu128 build has no sm_110 code."""
    env = _env("round18/reports-Q/r40-018.md")
    assert isinstance(env.nvml, NvmlFacts)
    assert "NVIDIA Thor" in {g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)} or \
        "Jetson Thor" in {g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)}
    assert statuses(env)["GD404"] is Status.FAIL


def test_a_conda_line_without_a_version_states_the_builds_cuda() -> None:
    """Round 14's r32-008 (its thread in round14/reports-M/index.toml): "conda install pytorch
    torchvision cudatoolkit=10.2 -c pytorch" above an nvidia-smi table of driver 418.67 (CUDA
    10.1): PyTorch's channel gives the CUDA 10.2 build, of a version the line does not pin, and
    GD103 fails (it skipped: no torch was read)."""
    env = _env("round14/reports-M/r32-008.md")
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.cuda == "10.2"
    assert not isinstance(env.torch.runtime.version, str)
    assert statuses(env)["GD103"] is Status.FAIL
    unpinned = [("conda install pytorch cpuonly cudatoolkit=10.2 -c pytorch", None),
                ("conda install pytorch=1.7 cudatoolkit=10.2 -c pytorch", None),
                ("conda install pytorch cudatoolkit=10.2 -c conda-forge", None),
                ("conda install pytorch pytorch-cuda=12.1 -c pytorch -c nvidia", "12.1")]
    for line, cuda in unpinned:
        assert prose._conda_cuda(line, None) == cuda


def test_a_driver_named_alone_is_the_gpu_sign_a_cpu_build_fails_by() -> None:
    # the sign names the driver (it said "the report names" and nothing after)
    env = read_reports([("w", "My driver version is 535.54.03 and I installed "
                              "torch==2.1.0+cpu\n")])
    finding = next(r.finding for r in run_checks(env, load_tables()).results
                   if str(r.check_id) == "GD402")
    assert finding.status is Status.FAIL
    assert finding.message.endswith("but the report names NVIDIA driver 535.54.03")


def test_torchs_warning_cut_before_its_gpu_takes_the_gpu_the_words_name() -> None:
    """Round 8's r15-011 (its thread in round8/reports-G/index.toml): "When trying to use a
    Nvidia RTX A6000 we get this error message:" and torch's warning from its arch list on
    ("The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70"), its
    line naming the GPU not pasted. torch's messages name no GPU, so the words' one is judged:
    GD404 fails (sm_86 has no code there); it skipped, the driver not being in the report."""
    env = _env("round8/reports-G/r15-011.md")
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding == PROSE
    assert statuses(env)["GD404"] is Status.FAIL


HELD = Path(__file__).parents[1] / "fixtures" / "heldout"


@pytest.mark.parametrize(("text", "cuda"), [
    # round 14's r31-004 (its thread in the index): the field quoted on the tool's line
    ("GPU3090，\nnvidia-smi：CUDA Version: 12.4，\nnvcc-V:nvcc: NVIDIA (R) Cuda compiler", 12040),
    # round 20's r43-007: the tool named above a fence holding the field alone
    ("nvidia-smi version\n```\nCUDA Version: 11.3 \n```", 11030),
    ("my nvidia-smi shows CUDA Version 12.2, nvcc 11.8", 12020),
    # another program's CUDA between the tool and the field: not the driver's
    ("nvidia-smi works. torch CUDA Version: 11.8", None),
    ("nvidia-smi ok\n\nnvcc --version\nCUDA Version: 11.8", None),
    # a "CUDA Version" the words do not tie to nvidia-smi (a script's print of torch's)
    ("CUDA is available.\nCUDA Version: 11.8\nNumber of GPU devices: 1", None),
    # two values: none
    ("nvidia-smi: CUDA Version: 12.2 … later nvidia-smi: CUDA Version: 12.4", None),
])
def test_nvidia_smis_cuda_version_quoted_in_words(text: str, cuda: int | None) -> None:
    assert prose.smi_cuda(text) == cuda


def test_the_quoted_cuda_version_judges_the_toolkit_beside_nvccs_version_line() -> None:
    # r43-007 (round 20): conda's torch 1.4.0 for CUDA 10.0, nvcc's version line alone
    # ("Cuda compilation tools, release 10.0, V10.0.130", no banner) and nvidia-smi's CUDA
    # Version 11.3 in words: the toolkit is read and the driver runs it (GD104)
    name = "r43-007.md"
    text = (HELD / "round20" / "reports-S" / name).read_text(encoding="utf-8")
    env = read_reports([(name, text)])
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.cuda_driver_version == 11030
    assert env.nvml.binding == PROSE  # the words: GD101 does not judge the driver
    assert toolkit_version(env) == "10.0"
    got = statuses(env)
    assert got["GD104"] is Status.PASS
    assert got["GD101"] is Status.SKIP


T21 = HELD / "round21" / "reports-T"


def test_a_templates_example_gpu_is_not_the_reporters() -> None:
    # r45-035 (dmlc/dgl): DGL's template "GPU models and configuration (e.g. V100):" left empty
    # beside "Torch not compiled with CUDA enabled" on macOS: no GPU named, GD402 does not fail
    text = (T21 / "r45-035.md").read_text(encoding="utf-8")
    env = read_reports([("r45-035.md", text)])
    assert statuses(env)["GD402"] is not Status.FAIL
    tables = load_tables()
    assert prose._gpus("- GPU models and configuration (e.g. V100):", tables) == []
    assert [g.name for g in prose._gpus("- GPU models and configuration (e.g. V100): RTX 3090",
                                        tables)] == ["RTX 3090"]


def test_a_wheels_name_and_a_gpu_at_a_sentences_end() -> None:
    # r45-034 (pyg-team): "via pip (torch-2.5.0+cu124) with CUDA 12.8 and RTX 5080." — the
    # version in a file's name, the GPU before a full stop: a cu124 build has no sm_120
    text = (T21 / "r45-034.txt").read_text(encoding="utf-8")
    env = read_reports([("r45-034.txt", text)])
    assert statuses(env)["GD404"] is Status.FAIL
    assert prose._torch_said("/tmp/build-via-sdist-x/torch-2.2.1+cu121/aten/src")[0] \
        == "2.2.1+cu121"
    assert prose._torch_said("libtorch-1.13.0 and torch-2.1.0.dist-info")[0] == "2.1.0"
    assert [g.name for g in prose._gpus("an A100.5 or a GTX 1080.", load_tables())] \
        == ["GTX 1080"]


def test_what_torch_shows_beats_a_wheel_tried_on_the_way() -> None:
    # round 14's r31-021: "torch shows 2.8.0+cpu" and, among what was tried, "Installing
    # torch-2.5.1+cu121": the torch in use is the CPU build (GD402 fails beside nvidia-smi)
    name = "r31-021.md"
    text = (HELD / "round14" / "reports-M" / name).read_text(encoding="utf-8")
    assert prose._torch_said(text)[0] == "2.8.0+cpu"
    assert statuses(read_reports([(name, text)]))["GD402"] is Status.FAIL


def test_torchs_availability_said_true_is_a_report_alone() -> None:
    # round 16's r36-037 (nerfstudio-project/gsplat): "PyTorch: 2.x (CUDA-enabled,
    # torch.cuda.is_available() = True)", no version: a CUDA build whose CUDA initialised
    name = "r36-037.md"
    text = (HELD / "round16" / "reports-O" / name).read_text(encoding="utf-8")
    got = statuses(read_reports([(name, text)]))
    assert got["GD402"] is Status.PASS and got["GD403"] is Status.PASS
    # another library's is_available(), or torch's said False, alone is no report
    for words in ("cupy.cuda.is_available() = True on my box", "torch.cuda.is_available() "
                  "returns False"):
        with pytest.raises(ReportError):
            read_reports([("t", words)])


def test_a_version_a_package_asks_for_is_not_the_installed_one() -> None:
    """round 22's r47-012 (isaac-sim/IsaacLab#2431): "strict dependency on ```torch==2.5.1```"
    is what isaaclab's setup.py asks for, not what the B200 machine runs; read as installed it
    failed GD404 on a healthy report (no 2.5.1 build holds sm_100)."""
    env = _env("round22/reports-U/r47-012.md")
    assert env.torch is None or isinstance(env.torch, Unavailable)
    assert statuses(env)["GD404"] is not Status.FAIL
    text = "GPU: B200, driver 570.133.20\nI installed torch==2.5.1+cu124 with pip.\n"
    rt = read_reports([("t", text)]).torch.runtime  # type: ignore[union-attr]
    assert isinstance(rt, TorchRuntime) and rt.version == "2.5.1+cu124"
    asked = text.replace("I installed", "isaaclab requires")
    assert isinstance(read_reports([("t", asked)]).torch, Unavailable)


def test_a_driver_version_before_a_sentences_full_stop() -> None:
    """round 22's r48-018 (isaac-sim/IsaacLab#2301): "my env is windows 11 and cuda12.8,pytorch
    nightly version,driver version 572.83." beside "a RTX5090d": the full stop ends the
    sentence, not the version (a decimal part would go on: "572.83.01")."""
    env = _env("round22/reports-U/r48-018.md")
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "572.83"
    assert [g.name for g in env.nvml.gpus] == ["RTX5090d"]  # type: ignore[union-attr]
    assert [m["v"] for m in prose.DRIVER.finditer("driver 572.83.01 and driver 572.83.x")] == [
        "572.83.01"]


def test_a_four_digit_model_with_geforces_ti_is_a_gpu() -> None:
    """round 22's r48-020 (m-bain/whisperX#983): "Torch not compiled with CUDA enabled" and "I have
    4060ti.": a number joined to "Ti" (or "SUPER") names a GeForce card as no year or count
    is written; the CPU-only torch where it is fails GD402."""
    env = _env("round22/reports-U/r48-020.md")
    assert statuses(env)["GD402"] is Status.FAIL
    assert [m["m"] for m in prose.SUFFIXED.finditer("I have 4060ti. In 2024 I bought a 1080 Ti")
            ] == ["4060ti", "1080 Ti"]
    assert not list(prose.SUFFIXED.finditer("v1.4060ti, 2024tix, 12345ti"))
