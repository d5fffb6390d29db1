"""The one reader entry (`gpudoctor.reports`): the blocks of every input merged into one
Environment, the block that states a fact best winning; an input with nothing recognised
refused in one line naming it; and what no machine has refused (`possible`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpudoctor.compat import load_tables
from gpudoctor.model import NvmlFacts, Reason, TorchFacts, Unavailable
from gpudoctor.reports import read
from gpudoctor.reports.read import ReportError, read_inputs, read_reports
from tests.reports.report_excerpts import (
    COLLECT_ENV_4090_CU117,
    ISSUE,
    SMI_MISMATCH,
    TABLE_550_A10,
)

ENVS = Path(__file__).resolve().parent.parent / "fixtures" / "envs"
HEALTHY = ENVS / "h100-healthy.json"
TABLES = load_tables()


def test_an_issue_merges_torchs_side_and_the_drivers() -> None:
    env = read_reports([("issue-123.md", ISSUE)])
    assert isinstance(env.torch, TorchFacts)  # from collect_env
    assert isinstance(env.nvml, NvmlFacts)  # from the table, which states more than collect_env
    assert env.nvml.driver_version == "550.127.05" and env.nvml.cuda_driver_version == 12040
    assert env.sources == ("collect_env (cut off) in issue-123.md", "nvidia-smi in issue-123.md")


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


def test_a_snapshot_reads_as_itself() -> None:
    text = HEALTHY.read_text()
    assert read_inputs([("h100.json", text)], TABLES) == read_reports([("h100.json", text)])


def test_what_no_machine_has_is_refused_naming_the_field() -> None:
    data = json.loads(HEALTHY.read_text())
    data["environment"]["nvml"]["gpus"][0]["memory_total"] = -1
    with pytest.raises(ReportError, match=r"memory_total"):
        read_inputs([("bad.json", json.dumps(data))], TABLES)


def test_nothing_recognised_names_the_input() -> None:
    with pytest.raises(ReportError, match=r"^notes\.txt: no report recognised"):
        read_inputs([("notes.txt", "just notes\n")], TABLES)


def test_a_snapshot_wins_over_the_other_inputs() -> None:
    text = HEALTHY.read_text()
    env = read_reports([("collect_env.txt", COLLECT_ENV_4090_CU117), ("h100.json", text)])
    assert env == read_reports([("h100.json", text)])


def test_a_fact_no_block_states_is_not_reported_naming_it() -> None:
    env = read_reports([("nvidia-smi.txt", TABLE_550_A10)])
    assert isinstance(env.nvml, NvmlFacts)
    for fact, names in ((env.torch, "PyTorch"), (env.cudnn, "cuDNN"), (env.toolkits, "toolkit")):
        assert isinstance(fact, Unavailable) and fact.reason is Reason.NOT_REPORTED
        assert names in fact.message


def test_read_inputs_passes_a_possible_report_on_unchanged() -> None:
    items = [("collect_env.txt", COLLECT_ENV_4090_CU117), ("nvidia-smi.txt", TABLE_550_A10)]
    env, read = read_inputs(items, TABLES), read_reports(items)
    assert isinstance(env.torch, TorchFacts) and replace(env, created=read.created) == read


def test_a_cut_q_keeps_its_driver_and_takes_the_gpus_of_a_complete_list() -> None:
    """nvidia-smi -L (two GTX 1080 Ti) then -q cut after its header (driver 391.01), pasted on
    Windows (MultiPoolMiner/MultiPoolMiner#1851, round 9's r20-028): the -q block states the
    driver best, the -L block every GPU; GD101 and GD102 both judge."""
    name = "r20-028.txt"
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round9" / "reports-H" / name
    env = read_reports([(name, path.read_text(encoding="utf-8"))])
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.driver_version == "391.01"
    assert [g.name for g in env.nvml.gpus if not isinstance(g, Unavailable)] == [
        "GeForce GTX 1080 Ti", "GeForce GTX 1080 Ti"]


def test_htmls_line_breaks_typed_into_markdown_are_taken_out() -> None:
    """Round 7's r12-026: collect_env with "<br>" typed at each line's end ("PyTorch version:
    1.2.0<br>", "Nvidia driver version: 410.79<br>"), which GitHub renders as line breaks. It
    was refused ('410.79<br>' is not a version); read without them, it is the report it is,
    and a <br> inside a line breaks it there."""
    path = Path(__file__).parents[1] / "fixtures" / "heldout" / "round7" / "reports-F" / \
        "r12-026.md"
    env = read_inputs([(path.name, path.read_text(encoding="utf-8"))], load_tables())
    assert isinstance(env.nvml, NvmlFacts) and env.nvml.driver_version == "410.79"
    assert isinstance(env.torch, TorchFacts)
    inline = read_reports([("t", "PyTorch version: 1.2.0<br>Is debug build: No<BR/>CUDA used "
                                 "to build PyTorch: 10.0.130<br />")])
    assert isinstance(inline.torch, TorchFacts) and not isinstance(inline.torch.runtime,
                                                                   Unavailable)
    assert (inline.torch.runtime.version, inline.torch.runtime.cuda) == ("1.2.0", "10.0.130")


def test_htmls_escapes_from_a_reply_by_mail_are_undone() -> None:
    # round 21's r46-017: `nvidia-smi -q -x` stored by GitHub from an e-mail reply, its markup
    # escaped ("<driver_version&gt;591.74", "&nbsp; &nbsp;")
    name = "r46-017.xml"
    text = (Path(__file__).parents[1] / "fixtures" / "heldout" / "round21" / "reports-T"
            / name).read_text(encoding="utf-8")
    assert "&gt;" in text
    env = read_reports([(name, text)])
    assert isinstance(env.nvml, NvmlFacts)
    assert env.nvml.driver_version == "591.74"
    # a doubly escaped one is undone once; text without escaped markup is left as it is
    assert read._unbroken("a &amp;gt; b &lt;x&gt;") == "a &gt; b <x>"
    assert read._unbroken("AT&amp;T") == "AT&amp;T"
