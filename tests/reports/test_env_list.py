"""Environment facts pasted as a Markdown list (`gpudoctor.reports.env_list`). The positive
texts are real: reports of tests/fixtures/heldout/round4/reports-C/ (their sources are in its
index.toml and named at each test), each refused ("no report recognised") before this reader.
The negatives are those texts changed by one line, each change named.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.checks import run_checks
from gpudoctor.compat import load_tables
from gpudoctor.model import (
    Environment,
    GpuFacts,
    NvmlFacts,
    Status,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports import env_list
from gpudoctor.reports.read import ReportError, read_reports
from gpudoctor.views import PROSE
from tests.reports.reading_kit import statuses

HELDOUT_C = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round4" / "reports-C"


def _text(name: str) -> str:
    return (HELDOUT_C / name).read_text(encoding="utf-8")


def _read(text: str) -> Environment:
    return read_reports([("paste.md", text)])


def _runtime(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


def _judged(env: Environment) -> dict[str, Any]:
    return {str(r.check_id): r.finding.status for r in run_checks(env, load_tables()).results}


def test_diffusers_cli_env_on_wsl1() -> None:
    """r4-006.md (ShivamShrirao/diffusers#18): "- PyTorch version (GPU?): 1.12.1+cu116 (False)"
    is a CUDA 11.6 build that finds no CUDA; the platform's kernel is WSL 1's."""
    env = _read(_text("r4-006.md"))
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("1.12.1+cu116", "11.6", False)
    assert isinstance(env.torch, TorchFacts) and env.torch.python_version == "3.9.13"
    assert isinstance(env.nvml, Unavailable)  # no driver, no GPU stated
    assert isinstance(env.host, Unavailable) and "WSL 1" in (env.host.detail or "")
    assert env.sources == ("transformers/diffusers/accelerate env in paste.md",)
    assert _judged(env)["GD403"] is Status.FAIL


def test_llamafactory_env_marks_a_torch_that_finds_cuda() -> None:
    """Round 5's r7-027 (its thread in round5/reports-D/index.toml): `llamafactory-cli env`'s
    "- PyTorch version: 2.3.0+cu121 (GPU)" and "- GPU type: NVIDIA A100-SXM4-80GB": a CUDA
    12.1 build that finds CUDA, on an A100 (sm_80, in 2.3.0+cu121's wheel)."""
    text = (HELDOUT_C.parents[1] / "round5" / "reports-D" / "r7-027.md").read_text("utf-8")
    env = _read(text)
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.3.0+cu121", "12.1", True)
    assert isinstance(env.nvml, NvmlFacts)
    judged = _judged(env)
    assert judged["GD402"] is Status.PASS and judged["GD404"] is Status.PASS


@pytest.mark.parametrize(("value", "available", "gd403"), [
    ("True", True, Status.PASS), ("False", False, Status.FAIL)])
def test_stable_baselines3_system_info(value: str, available: bool, gd403: Status) -> None:
    """stable-baselines3's `get_system_info()` (stable_baselines3/common/utils.py) writes
    torch.cuda.is_available() as "- GPU Enabled: True/False" under "- PyTorch: <version>"."""
    env = _read("- OS: Linux-5.15.0-101-generic-x86_64-with-glibc2.35 # 111-Ubuntu SMP\n"
                "- Python: 3.10.12\n- Stable-Baselines3: 2.3.0\n- PyTorch: 2.1.0+cu121\n"
                f"- GPU Enabled: {value}\n- Numpy: 1.26.4\n- Cloudpickle: 3.0.0\n"
                "- Gymnasium: 0.29.1\n")
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.1.0+cu121", "12.1", available)
    assert _judged(env)["GD403"] is gd403


def test_a_gpu_mark_needs_the_plain_key() -> None:
    """"(GPU)" after a "(GPU?)" key is no answer to it: that key's answers are True/False."""
    with pytest.raises(ReportError):  # nothing else in it is a report either
        _read("- PyTorch version (GPU?): 2.3.0+cu121 (GPU)\n- Python version: 3.10.0\n")


def test_app_system_info_bold_keys() -> None:
    """r5-007.md (edenaion/EZ-CorridorKey#87): "- **PyTorch:** 2.9.1+cu130" gives torch's CUDA
    by its tag; "- **CUDA:** 13.0" says nothing more; the GPU's name alone is no driver: it is
    bound as the reporter's words (GD101 skips), and GD404 judges the build against it. The
    log's "CUDA error: no kernel image is available" above the list is torch's CUDA reaching
    the GPU: CUDA is available, so the driver answered (GD101 passes)."""
    env = _read(_text("r5-007.md"))
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.9.1+cu130", "13.0", True)
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding != PROSE
    judged = _judged(env)
    assert judged["GD101"] is Status.PASS
    assert judged["GD404"] is Status.FAIL  # sm_61; the cu130 wheel starts at sm_75
    # "GPU: NVIDIA GeForce GTX 1080 Ti", no driver, no error
    env = _read(re.sub(r"(?m)^.*no kernel image.*$", "", _text("r5-007.md")))
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.binding == PROSE
    judged = _judged(env)
    assert judged["GD101"] is Status.SKIP
    assert judged["GD404"] is Status.FAIL
    assert isinstance(env.host, Unavailable) and "(Windows)" in (env.host.detail or "")


def test_pytorch_issue_template() -> None:
    """r5-029.md (pytorch/pytorch#99812): "8*A100", "Nvidia Driver:450.51.06", and torch's CUDA
    from the conda line that installed 1.7.1 ("cudatoolkit=11.0 -c pytorch")."""
    env = _read(_text("r5-029.md"))
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("1.7.1", "11.0")
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "450.51.06"
    assert [g.name for g in env.nvml.gpus] == ["A100"] * 8  # type: ignore[union-attr]
    judged = _judged(env)
    assert judged["GD103"] is Status.PASS


def test_markdown_environment_section() -> None:
    """r4-023.md (pytorch/pytorch#160804): "- **CUDA Version**: 12.8 (Driver 570.181)" gives
    the driver; the GPU's memory in parentheses is not its name."""
    env = _read(_text("r4-023.md"))
    assert (_runtime(env).version, _runtime(env).cuda) == ("2.2.0+cu121", "12.1")
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "570.181"
    assert [g.name for g in env.nvml.gpus] == ["NVIDIA GeForce RTX 5090"]  # type: ignore[union-attr]
    judged = _judged(env)
    assert (judged["GD103"], judged["GD404"]) == (Status.PASS, Status.FAIL)


def test_a_list_without_versions_stays_refused() -> None:
    """r5-007.md's list without its PyTorch line nor torch's error: an OS, a bare CUDA and a
    GPU name (with torch's "no kernel image" error kept, torch's messages are read)."""
    text = _no_error(_text("r5-007.md")).replace("- **PyTorch:** 2.9.1+cu130\n", "")
    with pytest.raises(ReportError, match="no report recognised"):
        _read(text)


def test_a_bare_cuda_line_is_not_torchs_cuda() -> None:
    """r5-007.md with torch's tag taken off: "- **CUDA:** 13.0" may be the toolkit's or the
    driver's, so whether torch is a CUDA build stays unknown."""
    env = _read(_no_error(_text("r5-007.md")).replace("2.9.1+cu130", "2.9.1"))
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, Unavailable)
    assert "whether torch 2.9.1 is a CUDA build" in env.torch.runtime.message
    # with the log's kernel error: a CUDA build, of a CUDA the list does not say
    rt = _runtime(_read(_text("r5-007.md").replace("2.9.1+cu130", "2.9.1")))
    assert isinstance(rt.cuda, Unavailable) and rt.cuda_available is True


def test_torchs_cuda_stated_twice_differently_is_unread() -> None:
    text = _no_error(_text("r5-007.md")).replace("- **CUDA:** 13.0",
                                                 "- **CUDA used to build PyTorch:** 12.8")
    env = _read(text)  # the tag says 13.0, the key 12.8: neither is taken
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, Unavailable)
    same = _text("r5-007.md").replace("- **CUDA:** 13.0", "- **CUDA used to build PyTorch:** 13.0")
    assert _runtime(_read(same)).cuda == "13.0"


def test_conda_line_for_another_version_is_unread() -> None:
    """r5-029.md with the conda line pinning 1.7.0 while the version line says 1.7.1."""
    text = _text("r5-029.md").replace("pytorch==1.7.1", "pytorch==1.7.0")
    env = _read(text)
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, Unavailable)


def _no_error(text: str) -> str:
    """The text less its log's kernel error (which says CUDA is available)."""
    return re.sub(r"(?m)^.*no kernel image.*$", "", text)


@pytest.mark.parametrize("value", ["None", "N/A", "AMD Radeon RX 7900 XTX", "Apple M1",
                                   "RTX 3090, RT 2080", "GTX 1080Ti and RT 2080Ti", "yes",
                                   "0x A100", "99*A100", "33x A100, 32x A100"])
def test_what_is_no_nvidia_gpu_name_is_unread(value: str) -> None:
    text = _text("r5-029.md").replace("8*A100", value)
    env = _read(text)
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.gpus == ()


@pytest.mark.parametrize(("value", "names"), [
    ("2x RTX 3090", ["RTX 3090"] * 2),
    # several named, each a GPU (a value read as its first name hid the others)
    ("RTX 3090, RTX 2080", ["RTX 3090", "RTX 2080"]),
    ("GTX 1080 Ti and 2x RTX 2080 Ti", ["GTX 1080 Ti", "RTX 2080 Ti", "RTX 2080 Ti"]),
    ("NVIDIA GeForce RTX 5080, 16GB VRAM", ["NVIDIA GeForce RTX 5080"]),
    ("NVIDIA GeForce RTX 3060 [NVIDIA]", ["NVIDIA GeForce RTX 3060"]),
    ("NVIDIA GeForce RTX 4090 x 2", ["NVIDIA GeForce RTX 4090"] * 2),
    ("GPU 0: NVIDIA H100 80GB HBM3", ["NVIDIA H100 80GB HBM3"]), ("Tesla T4", ["Tesla T4"])])
def test_gpu_counts_and_names(value: str, names: list[str]) -> None:
    env = _read(_text("r5-029.md").replace("8*A100", value))
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus] == names  # type: ignore[union-attr]


def test_gpus_beside_a_torch_that_finds_cuda() -> None:
    text = "- PyTorch version (GPU?): 2.1.0+cu121 (True)\n- GPU type: NVIDIA A10G\n"
    env = _read(text)
    assert _runtime(env).cuda_available is True
    assert isinstance(env.nvml, NvmlFacts) and isinstance(env.nvml.driver_version, Unavailable)
    assert [g.name for g in env.nvml.gpus] == ["NVIDIA A10G"]  # type: ignore[union-attr]


def test_two_lists_that_differ_read_neither() -> None:
    one = "- PyTorch: 2.1.0+cu121\n- Driver: 535.104.05\n"
    two = "- PyTorch: 2.2.0+cu121\n- Driver: 535.104.05\n"
    assert env_list.parse(f"works on:\n{one}\nfails on:\n{two}") is None
    assert env_list.parse(f"{one}\nagain:\n{one}") is not None


def test_a_collect_env_in_the_paste_is_read_instead() -> None:
    """A list beside a collect_env block: the block states torch; the list is not read."""
    collect = ("PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch:"
               " 12.1\nIs CUDA available: True\n")
    env = _read(f"- PyTorch: 2.0.0+cu117\n- Driver: 535.104.05\n\n```\n{collect}```\n")
    assert _runtime(env).version == "2.1.0+cu121"
    assert not any("list" in s for s in env.sources)


@pytest.mark.parametrize("line", [
    "- " + "a" * 5000 + ": 1.0", "- PyTorch: " + "9" * 5000, "- PyTorch: 1." + "1" * 50,
    "- **" * 2000, "- a:" * 3000, "- PyTorch version (GPU?): 2.1.0 (" + "(" * 3000])
def test_hostile_lines_are_unread(line: str) -> None:
    assert env_list.parse(line) is None
    beside = env_list.parse(line + "\n- Driver: 535.104.05\n")
    assert beside is not None and beside.torch is None


def test_hugging_faces_env_with_its_bullets_lost() -> None:
    # round 6's r10-018 (https://github.com/huggingface/sentence-transformers/issues/1975): the
    # stored copy rendered from Markdown, "- " gone; only the "(GPU?)" key is read bare
    text = ("System Info\ntransformers version: 4.30.0.dev0\nPython version: 3.9.16\n"
            "PyTorch version (GPU?): 2.0.1+cu117 (True)\n"
            "Tensorflow version (GPU?): not installed (NA)\n")
    env = _read(text)
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.0.1+cu117", "11.7", True)
    # a bare "key: value" without the hint is no list item: Python's version stays unread
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.python_version, Unavailable)


def test_a_gpu_named_beside_no_driver_is_judged_by_gd404() -> None:
    """https://github.com/huggingface/lerobot/pull/2005 (lerobot-info): "- PyTorch version:
    2.7.1+cu126", "- GPU model: NVIDIA GeForce RTX 4070 Laptop GPU" and no driver: the name is
    the reporter's words (GD101 skips), enough for GD404 (the cu126 wheel's sm_86 runs on
    sm_89)."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round10" / "reports-I"
    env = read_reports([("r22-014.txt", (path / "r22-014.txt").read_text(encoding="utf-8"))])
    judged = _judged(env)
    assert (judged["GD101"], judged["GD402"], judged["GD404"]) == (
        Status.SKIP, Status.PASS, Status.PASS)


def test_torchs_version_named_in_a_bullet_without_a_colon() -> None:
    """https://github.com/unslothai/unsloth/issues/2499 (round 10, r22-007): "- PyTorch
    2.3.0+cu121" beside "- Driver: 520.56.06" and "- GPU: NVIDIA RTX 4060 Ti (16GB VRAM)": an
    R520 driver runs CUDA 11.8 at most, so a cu121 build fails GD103."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round10" / "reports-I"
    env = read_reports([("r22-007.md", (path / "r22-007.md").read_text(encoding="utf-8"))])
    assert _runtime(env).version == "2.3.0+cu121"
    judged = _judged(env)
    assert (judged["GD103"], judged["GD402"], judged["GD404"]) == (
        Status.FAIL, Status.PASS, Status.PASS)


HELDOUT_L = Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round13" / "reports-L"


def test_a_two_column_table_is_a_list_of_facts() -> None:
    """r30-009.md (deepgenteam/deepgen PR 4): a test-environment table, "| **GPU** | NVIDIA
    L20 (14 GB VRAM) |", "| **Driver** | 535.161.07 |", "| **PyTorch** | 2.8.0+cu128 |", its
    header and its "|---|---|" rule between. Refused before ("no report recognised")."""
    env = _read((HELDOUT_L / "r30-009.md").read_text(encoding="utf-8"))
    assert _runtime(env).version == "2.8.0+cu128"
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "535.161.07"
    assert [g.name for g in env.nvml.gpus] == ["NVIDIA L20"]
    judged = _judged(env)
    assert (judged["GD103"], judged["GD402"], judged["GD404"]) == (Status.PASS,) * 3


@pytest.mark.parametrize("text", [
    "| Model | PyTorch | Score |\n|---|---|---|\n| a | 2.8.0+cu128 | 1 |\n",  # three columns
    "| **PyTorch** | 2.8.0+cu128 | extra |\n",  # a row of three cells
])
def test_what_is_no_two_column_table(text: str) -> None:
    assert env_list.parse(text) is None


def test_a_table_names_the_driver_beside_topo_listing_the_gpus() -> None:
    """Round 18's r40-012 (its thread in round18/reports-Q/index.toml): an environment table
    ("| **Driver** | 595.71.05 (open kernel module) |", the word on it in parentheses) beside
    `nvidia-smi topo -m`, which lists the GPUs but no driver: the merged view has both, and
    GD103 judges torch 2.11.0+cu130 against driver 595 (a pass; it skipped)."""
    path = (Path(__file__).resolve().parents[1] / "fixtures" / "heldout" / "round18"
            / "reports-Q" / "r40-012.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "595.71.05"
    assert len(env.nvml.gpus) == 2
    assert statuses(env)["GD103"] is Status.PASS


def test_a_gpu_with_its_compute_capability_in_parentheses() -> None:
    """Round 6's r9-027: "- GPU: NVIDIA GeForce GTX 1050 (compute capability 6.1)", "- Driver:
    550.163.01", "- PyTorch: 2.8.0+cu128": the parenthesis kept the name from being read, so
    GD404 skipped ("the GPUs are not in the report"); the 2.8.0 cu128 wheel has no sm_61 code
    and it fails."""
    file = HELDOUT_C.parents[1] / "round6" / "reports-E" / "r9-027.md"
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts)
    [gpu] = env.nvml.gpus
    assert (getattr(gpu, "name", None), getattr(gpu, "compute_capability", None)) == (
        "NVIDIA GeForce GTX 1050", "6.1")
    found = {str(r.check_id): r.finding.status for r in run_checks(env, load_tables()).results}
    assert found["GD404"] is Status.FAIL
    assert env_list._gpu_names("RTX 3090 (sm_86)") == [("RTX 3090", "8.6")]
    assert env_list._gpu_names("2x A100 (cc 8.0)") == [("A100", "8.0"), ("A100", "8.0")]
    assert env_list._gpu_names("NVIDIA L20 (14 GB VRAM)") == [("NVIDIA L20", None)]


def test_a_key_whose_hint_is_the_command_that_printed_it() -> None:
    """THUDM's issue template (round 19's r41-025): "- PyTorch:2.0.0+cu117", "- CUDA Support
    (`python -c "import torch; print(torch.cuda.is_available())"`) :True": the availability is
    read (GD403 passes; it skipped)."""
    file = HELDOUT_C.parents[1] / "round19" / "reports-R" / "r41-025.md"
    env = read_reports([(file.name, file.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.cuda_available is True
    found = {str(r.check_id): r.finding.status for r in run_checks(env, load_tables()).results}
    assert found["GD403"] is Status.PASS


def test_a_template_of_bold_and_plain_fields_set_apart_by_blank_lines() -> None:
    # round 21's r45-029 (NVIDIA/TensorRT's template): "**NVIDIA GPU**: 3090", a blank line,
    # "**NVIDIA Driver Version**: 510.47.03", …, then plain "Tensorflow Version (if
    # applicable):" (empty) and "PyTorch Version (if applicable): 1.13.1": one list
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round21" / "reports-T" / \
        "r45-029.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "510.47.03"
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == ["3090"]
    assert isinstance(env.torch, TorchFacts) and env.torch.stated_version == "1.13.1"
    assert statuses(env)["GD404"] is Status.PASS  # every 1.13.1 CUDA build has sm_86
    # two blank lines end a list; a bare line of prose does not join one
    two = env_list.parse("**NVIDIA Driver Version**: 510.47.03\n\n\nPyTorch Version: 1.13.1\n")
    assert two is not None and two.torch is None
    bare = env_list.parse("PyTorch Version: 1.13.1\n")
    assert bare is None


def test_a_framework_key_with_torchs_tagged_version() -> None:
    # round 10's r23-021 (its thread in round10/reports-I/index.toml): "- Framework & Version:
    # 2.6.0+cu124" beside "- NVIDIA Driver Version: 575.64.03"; a 0.x tag is torchvision's
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round10" / "reports-I" / \
        "r23-021.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.version == "2.6.0+cu124"
    assert statuses(env)["GD103"] is Status.PASS
    other = env_list.parse("- Framework: 0.21.0+cu124\n- NVIDIA Driver Version: 575.64.03\n")
    assert other is not None and other.torch is None


HELDOUT_U = HELDOUT_C.parents[1] / "round22" / "reports-U"


def test_a_block_of_plain_key_value_lines() -> None:
    """r47-003.md (leggedrobotics/legged_gym#12): "OS Version: …", "Nvidia Driver: 495",
    "Graphics: GTX 1660 Ti", "Pytorch: PyTorch version 1.10.1+cu102", no bullets: a block of
    plain lines is a list where two of its keys are the lists' own; a value that repeats its
    key's words is read past them."""
    env = _read((HELDOUT_U / "r47-003.md").read_text(encoding="utf-8"))
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("1.10.1+cu102", "10.2")
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus] == ["GTX 1660 Ti"]  # type: ignore[union-attr]
    # one known key alone in plain lines is no list ("Driver: …" in a log)
    with pytest.raises(ReportError):
        _read("Some text\nDriver: 535.54.03\nUptime: 3 days\n")


def test_a_tools_padded_fields_are_not_a_persons_list() -> None:
    """nvidia-smi -q's "Driver Version                            : 535.54.03" is its own
    reader's (tests/reports/test_nvidia_smi_q.py), not a list of plain lines."""
    text = ("Driver Version                            : 535.54.03\n"
            "CUDA Version                              : 12.2\n"
            "Product Name                              : NVIDIA A100-SXM4-80GB\n")
    assert env_list.parse(text) is None


def test_an_issue_forms_fields() -> None:
    """r47-034.md (isaac-sim/IsaacSim#517): GitHub's issue form renders each field as a
    heading and its answer ("### GPU Name", blank, "RTX5070"); "GPU Driver and CUDA versions"
    names the driver among other things, and "595.71" has the driver's form."""
    env = _read((HELDOUT_U / "r47-034.md").read_text(encoding="utf-8"))
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "595.71"
    assert Status.FAIL not in _judged(env).values()
    # a field left empty ("_No response_") or answered over several lines is not read
    text = "### GPU Driver version\n\n_No response_\n\n### GPU Name\n\nRTX 5070\n"
    assert env_list.parse(text) is None


def test_a_key_naming_the_driver_among_other_things() -> None:
    """r48-007.md (NVIDIA/DeepLearningExamples#548): "* CUDA driver version (e.g. 418.67):
    418.67": the template's example is the hint, the value has the driver's form."""
    env = _read((HELDOUT_U / "r48-007.md").read_text(encoding="utf-8"))
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "418.67"
    # CUDA's versions never have the driver's form: "CUDA driver version: 12.2" is unread
    assert env_list._driver([("cuda driver version", "cuda driver version", "12.2")]) is None


def test_a_kernel_error_says_cuda_is_available() -> None:
    """r48-013.md (meta-pytorch/torchrec#2708): "Pytorch version: 2.5", "Cuda: 11.8" and
    fbgemm's "CUDA error: no kernel image is available": the kernel is an extension's, but it
    ran on torch's CUDA, so torch is a CUDA build whose CUDA is available (GD402 passes); its
    own arch list is not judged from an extension's error."""
    env = _read((HELDOUT_U / "r48-013.md").read_text(encoding="utf-8"))
    assert _runtime(env).cuda_available is True
    judged = _judged(env)
    assert judged["GD402"] is Status.PASS and judged["GD404"] is not Status.FAIL


def test_the_words_around_the_list_quote_torchs_availability() -> None:
    """r48-016.md (ray-project/ray#11291, Ray's template): "Torch: 1.6" in the list, and above it
    "returns true when calling torch.cuda.is_available()": torch's answer quoted (in either
    order) makes the list's torch a CUDA build whose CUDA is available."""
    env = _read((HELDOUT_U / "r48-016.md").read_text(encoding="utf-8"))
    rt = _runtime(env)
    assert (rt.version, rt.cuda_available) == ("1.6", True)
    assert _judged(env)["GD403"] is Status.PASS
    from gpudoctor.reports.interface import torch_says_available

    assert torch_says_available("torch.cuda.is_available() returns False") is False
    assert torch_says_available("it returned `True` for torch.cuda.is_available()") is True
    assert torch_says_available("cupy.cuda.is_available() returns True") is None
    assert torch_says_available("torch.cuda.is_available() returns True; after the update "
                                "torch.cuda.is_available() returns False") is None
