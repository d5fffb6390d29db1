"""torch's own prints of its version, CUDA and availability, quoted in a paste → torch's
facts. Real texts: the corpus's pytorch#85332 body, and Python sessions quoted in public
repositories' notes (found by the code search; quoted verbatim)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.model import (
    Environment,
    GpuFacts,
    NvmlFacts,
    Reason,
    Status,
    TorchFacts,
    TorchRuntime,
    Unavailable,
)
from gpudoctor.reports import torch_prints
from gpudoctor.reports.read import ReportError, read_reports
from tests.reports.reading_kit import statuses

REPORTS = Path(__file__).parents[1] / "fixtures" / "reports"

# a Python session in a notes repository (verbatim): torch.version.cuda printed twice, before
# and after a reinstall with another CUDA
TWO_CUDAS = """\
```
>>> import torch
>>> torch.__version__
'1.12.1+cu102'
>>> torch.version.cuda
'10.2'
```

`$ pip install --upgrade torch torchvision torchaudio --extra-index-url https://download.pytorch.org/whl/cu113`

```
>>> torch.version.cuda
'11.3'
```
"""

# a README's expected output (verbatim): a version without a local tag, its CUDA printed
EXPECTED_OUTPUT = """\
>>> import torch
>>> torch.cuda.is_available()
True
>>> torch.version.cuda
'11.3'
>>> torch.__version__
'1.12.1'
>>> torch.cuda.get_arch_list()
['sm_37', 'sm_50', 'sm_60', 'sm_61', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'compute_37']
"""

# a Chinese note on checking CUDA (verbatim): a comment after the expression
COMMENTED = """\
>>> import torch
>>> torch.__version__
'1.6.0'
>>> torch.version.cuda
'10.2'
>>> torch.cuda.is_available() # check CUDA availablity
True
"""


def _runtime(env: Environment) -> TorchRuntime:
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    return env.torch.runtime


def test_printed_version_beside_a_pasted_nvidia_smi_line() -> None:
    """https://github.com/pytorch/pytorch/issues/85332: "print(torch.__version__)" then
    "1.8.1+cu102", and nvidia-smi's banner for driver 450.51.05: GD103 is judged (and passes:
    driver 450 runs CUDA 11.0 ≥ 10.2)."""
    name = "issue_body-nvidia-smi-one-line-450-cu102.md"
    env = read_reports([(name, (REPORTS / name).read_text(encoding="utf-8"))])
    rt = _runtime(env)
    assert (rt.version, rt.cuda) == ("1.8.1+cu102", "10.2")
    assert isinstance(rt.cuda_available, Unavailable)  # "return False" is prose, not a print
    assert statuses(env)["GD103"] is Status.PASS


@pytest.mark.parametrize(("text", "version", "cuda", "available"), [
    (EXPECTED_OUTPUT, "1.12.1", "11.3", True),
    (COMMENTED, "1.6.0", "10.2", True),
])
def test_a_python_session(text: str, version: str, cuda: str, available: bool) -> None:
    rt = _runtime(read_reports([("session", text)]))
    assert (rt.version, rt.cuda, rt.cuda_available) == (version, cuda, available)


def test_two_values_of_one_expression_leave_it_unread() -> None:
    """Which of '10.2' and '11.3' is the machine's now is not in the text: torch's CUDA is not
    read, not even from the version's tag (the reinstall changed the version too)."""
    env = read_reports([("notes", TWO_CUDAS)])
    assert env.sources == ("torch's prints in notes",)
    assert isinstance(env.torch, TorchFacts)
    rt = env.torch.runtime  # whether it is a CUDA build, and which, is not known
    assert isinstance(rt, Unavailable) and rt.reason is Reason.NOT_REPORTED
    assert "1.12.1+cu102" in rt.message


def test_cuda_none_is_a_build_without_cuda() -> None:
    partial = torch_prints.parse(">>> torch.__version__\n'2.3.1'\n>>> torch.version.cuda\n"
                                 ">>> print(torch.version.cuda)\nNone\n")
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    assert isinstance(rt, TorchRuntime) and rt.version == "2.3.1" and rt.cuda is None


@pytest.mark.parametrize("text", [
    "print(torch.__version__)\nmodel = Net()\n",  # code, not a session: no value printed
    "print(torch.cuda.is_available())\n\nreturn False\n",  # prose after it
    ">>> torch.version.cuda\n'11.8'\n",  # no version: nothing is read
])
def test_what_is_not_read(text: str) -> None:
    assert torch_prints.parse(text) is None
    with pytest.raises(ReportError):
        read_reports([("issue", text)])


# https://github.com/152334H/tortoise-tts-fast/issues/88 (round 5's development report r6-034):
# a script's prints, arch list and GPU name included
ARCH_AND_NAME = """\
print(torch.cuda.is_available())
True

Some additional information
print(torch.cuda.get_device_name())
NVIDIA GeForce RTX 2060 SUPER
print(torch.__version__)
1.11.0+cu113
print(torch.version.cuda)
11.3
print(torch.cuda.get_arch_list())
['sm_37', 'sm_50', 'sm_60', 'sm_61', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'compute_37']
"""


def test_the_arch_list_and_the_gpu_torch_printed_judge_gd404() -> None:
    env = read_reports([("issue", ARCH_AND_NAME)])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.arch_list == ("sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75",
                                           "sm_80", "sm_86", "compute_37")
    assert isinstance(env.nvml, NvmlFacts)
    (gpu,) = env.nvml.gpus
    assert isinstance(gpu, GpuFacts) and gpu.name == "NVIDIA GeForce RTX 2060 SUPER"
    status = statuses(env)
    assert status["GD404"] is Status.PASS  # sm_75 is in the list
    assert status["GD101"] is Status.PASS  # CUDA is available: the driver answered
    assert status["GD102"] is Status.SKIP  # one GPU through CUDA is not NVML's view of all


def test_the_gpu_torch_printed_with_its_capability_fails_gd404_where_the_list_lacks_it() -> None:
    text = (">>> torch.__version__\n'2.0.1+cu117'\n>>> torch.cuda.is_available()\nTrue\n"
            ">>> torch.cuda.get_device_name(0)\n'NVIDIA H100 PCIe'\n"
            ">>> torch.cuda.get_device_capability(0)\n(9, 0)\n"
            ">>> torch.cuda.get_arch_list()\n['sm_37', 'sm_50', 'sm_60', 'sm_70', 'sm_75', "
            "'sm_80', 'sm_86']\n")
    env = read_reports([("session", text)])
    assert isinstance(env.nvml, NvmlFacts)
    (gpu,) = env.nvml.gpus
    assert isinstance(gpu, GpuFacts) and gpu.compute_capability == "9.0"
    assert statuses(env)["GD404"] is Status.FAIL  # no sm_90, no PTX


@pytest.mark.parametrize("text", [
    # CUDA not available: the name does not show a working driver
    "print(torch.__version__)\n2.1.0+cu118\nprint(torch.cuda.is_available())\nFalse\n"
    "print(torch.cuda.get_device_name())\nNVIDIA GeForce RTX 3090\n",
    # another device than the first: not GPU 0
    "print(torch.__version__)\n2.1.0+cu118\nprint(torch.cuda.is_available())\nTrue\n"
    "print(torch.cuda.get_device_name(3))\nNVIDIA GeForce RTX 3090\n",
])
def test_a_gpu_name_that_shows_no_driver_is_not_a_gpu(text: str) -> None:
    env = read_reports([("session", text)])
    assert not isinstance(env.nvml, NvmlFacts)


def test_one_print_per_python_c_line_after_a_shell_prompt() -> None:
    # round 6's r9-028 (https://github.com/robosense2025/track5/issues/11)
    text = ('(track5-env) u@n1:~/track5$ python -c "import torch; print(torch.__version__)"\n'
            "2.1.0+cu118\n"
            '(env) u@n1:~/track5$ python -c "import torch; print(torch.cuda.is_available())"\n'
            "True\n")
    env = read_reports([("issue", text)])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert (env.torch.runtime.version, env.torch.runtime.cuda_available) == ("2.1.0+cu118", True)
    # two prints on one line of expressions that print one line each: the lines under it
    # are theirs, in order (printed_on_one_line)
    two = ('python -c "import torch; print(torch.__version__); print(torch.version.cuda)"\n'
           "2.1.0+cu118\n11.8\n")
    assert _runtime(read_reports([("issue", two)])).cuda == "11.8"
    # with a print of unknown length among them (a tensor), no output is matched to its print:
    # only the tagged version alone on its line is read (as words), nothing of CUDA
    three = ('python -c "import torch; print(torch.__version__); print(torch.ones(2))"\n'
             "2.1.0+cu118\ntensor([1., 1.])\n")
    assert isinstance(_runtime(read_reports([("issue", three)])).cuda_available, Unavailable)


ROUND7 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round7" / "reports-F"


def test_a_scripts_prints_and_their_output_in_the_next_block() -> None:
    # round 7's r12-029 (pytorch/pytorch#31285, development data since): a script of
    # prints in one fence, its output in the next, cut off inside a traceback
    text = (ROUND7 / "r12-029.md").read_text(encoding="utf-8")
    partial = torch_prints.parse(text)
    assert partial is not None
    assert isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    assert isinstance(rt, TorchRuntime)
    assert (rt.version, rt.cuda_available) == ("1.3.1", True)
    assert isinstance(partial.nvml, NvmlFacts)
    (gpu,) = partial.nvml.gpus
    assert isinstance(gpu, GpuFacts)
    assert (gpu.name, gpu.compute_capability) == ("GeForce GT 740", "3.0")
    got = statuses(read_reports([("r12-029.md", text)]))
    assert got["GD404"] is Status.FAIL  # sm_30 below every 1.3.1 build's lowest (sm_37)


def test_pairing_stops_at_a_print_of_unknown_length() -> None:
    text = ("```\nprint(torch.__version__)\nprint(x)\nprint(torch.cuda.is_available())\n```\n"
            "```\n2.1.0+cu118\ntensor([1,\n        2])\nFalse\n```\n")
    assert torch_prints.printed_apart(text) == ">>> torch.__version__\n2.1.0+cu118\n"
    partial = torch_prints.parse(text)
    assert partial is not None and isinstance(partial.torch, TorchFacts)
    rt = partial.torch.runtime
    assert isinstance(rt, TorchRuntime)
    assert isinstance(rt.cuda_available, Unavailable)  # "False" is not paired with anything


ROUND16 = Path(__file__).parents[1] / "fixtures" / "heldout" / "round16" / "reports-O"


def test_labelled_prints_are_read_from_the_lines_their_labels_start() -> None:
    """AI4Finance-Foundation/FinRL#926 (round 16's r36-011, refused when scored):
    print("Torch version:", torch.__version__) and two more, their output pasted below as
    "Torch version: 2.0.0+cu118", "CUDA available: True", "CUDA version: 11.8"."""
    env = read_reports([("r36-011.md", (ROUND16 / "r36-011.md").read_text(encoding="utf-8"))])
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("2.0.0+cu118", "11.8", True)


@pytest.mark.parametrize(("text", "read"), [
    # an f-string's label, its value right after it
    ('print(f"torch {torch.__version__}")\nprint(f"cuda? {torch.cuda.is_available()}")\n'
     "torch 2.4.0+cu121\ncuda? False\n", ("2.4.0+cu121", False)),
    # a label printed for something that is not torch's: not read
    ('print("version:", np.__version__)\nversion: 1.26.4\n', None),
])
def test_a_print_labels_its_value(text: str, read: tuple[str, bool] | None) -> None:
    parsed = torch_prints.parse(text)
    if read is None:
        assert parsed is None
        return
    assert parsed is not None and isinstance(parsed.torch, TorchFacts)
    rt = parsed.torch.runtime
    assert isinstance(rt, TorchRuntime) and (rt.version, rt.cuda_available) == read


def test_several_prints_on_one_shell_line_are_read_from_the_lines_under_it() -> None:
    """Round 16's r36-032 (its thread in round16/reports-O/index.toml): `python -c "import
    torch; print(…__version__); print(…is_available()); print(…get_device_name(0))"`, and
    the three values on the three lines under it."""
    env = read_reports([("r36-032.txt", (ROUND16 / "r36-032.txt").read_text(encoding="utf-8"))])
    rt = _runtime(env)
    assert (rt.version, rt.cuda, rt.cuda_available) == ("1.13.0+cu117", "11.7", True)
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus if isinstance(g, GpuFacts)] == [
        "NVIDIA GeForce RTX 2080 Ti"]


@pytest.mark.parametrize("text", [
    # a print of something else on the line: which value is which is not known
    'python -c "import torch, sys; print(sys.version); print(torch.__version__)"\n3.10.12\n'
    "2.1.0+cu121\n",
    # the command failed: a traceback under it, no values
    'python -c "import torch; print(torch.__version__); print(torch.cuda.is_available())"\n'
    "Traceback (most recent call last):\n  File \"<string>\", line 1\n",
])
def test_what_is_not_read_of_one_line_prints(text: str) -> None:
    assert torch_prints.printed_on_one_line(text) == ""


def test_a_printed_capability_without_a_name_is_the_current_device() -> None:
    """Round 18's r40-014 (its thread in round18/reports-Q/index.toml): one `python -c` line
    printing the version, is_available() and get_device_capability(): "(12, 0)" with CUDA
    available is the GPU torch uses, sm_120, its name unknown: GD404 judges it against the
    2.9.0 cu128 wheel's list (a pass; it skipped). Without CUDA available, no GPU."""
    from gpudoctor.reports.torch_prints import CURRENT_DEVICE

    path = ROUND16.parents[1] / "round18" / "reports-Q" / "r40-014.txt"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts)
    (gpu,) = env.nvml.gpus
    assert isinstance(gpu, GpuFacts) and (gpu.name, gpu.compute_capability) == (
        CURRENT_DEVICE, "12.0")
    assert statuses(env)["GD404"] is Status.PASS
    off = read_reports([("s", 'python -c "import torch; print(torch.__version__); '
                              'print(torch.cuda.is_available()); '
                              'print(torch.cuda.get_device_capability())"\n2.9.0+cu128\nFalse\n'
                              "(12, 0)\n")])
    assert not isinstance(off.nvml, NvmlFacts)


def test_a_printed_device_count_or_name_says_whether_cuda_is_available() -> None:
    # round 21's r45-012 (dmlc/dgl): version, CUDA, cuDNN, device_count() 4 and
    # get_device_name(0) printed, is_available() not: is_available() is device_count() > 0
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round21" / "reports-T" / \
        "r45-012.md"
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    assert env.torch.runtime.cuda_available is True
    got = statuses(env)
    assert got["GD403"] is Status.PASS and got["GD404"] is Status.PASS
    none = torch_prints.parse(">>> torch.__version__\n'2.1.0+cu118'\n>>> "
                              "torch.cuda.device_count()\n0\n")
    assert none is not None and isinstance(none.torch, TorchFacts)
    assert isinstance(none.torch.runtime, TorchRuntime)
    assert none.torch.runtime.cuda_available is False


def test_cuda_and_availability_printed_without_the_version() -> None:
    """round 22's r48-022 (DrewThomasson/ebook2audiobook#847): `python -c "import torch;
    print(torch.cuda.is_available()); print(torch.version.cuda);
    print(torch.cuda.get_device_name(0))"`, its output quoted under "and I got :": a CUDA 11.8
    build whose CUDA initialised on a GTX 1060, of a release the prints do not name."""
    path = (Path(__file__).parents[1] / "fixtures" / "heldout" / "round22" / "reports-U"
            / "r48-022.md")
    env = read_reports([(path.name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.torch, TorchFacts) and isinstance(env.torch.runtime, TorchRuntime)
    rt = env.torch.runtime
    assert isinstance(rt.version, Unavailable)
    assert (rt.cuda, rt.cuda_available) == ("11.8", True)
    assert isinstance(env.nvml, NvmlFacts)
    assert [g.name for g in env.nvml.gpus] == ["NVIDIA GeForce GTX 1060 6GB"]  # type: ignore[union-attr]
    found = statuses(env)
    assert (found["GD103"], found["GD402"], found["GD403"]) == (Status.PASS,) * 3
    # torch.version.cuda None, or availability not printed: nothing is read without a version
    assert torch_prints.parse(path.read_text(encoding="utf-8").replace("11.8", "None")) is None
    assert torch_prints.parse("print(torch.version.cuda)\n11.8\n") is None
