"""`gpudoctor.actions.childlines`: the line protocol both smoke runners read from their children,
and the environment the children start with."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from gpudoctor.actions.childlines import PREFIX, ChildMessages, child_environ


def line(kind: str, data: object) -> str:
    return PREFIX + json.dumps({"kind": kind, "data": data})


def test_the_last_message_of_each_kind_is_kept() -> None:
    seen = ChildMessages()
    for text in (line("report", {"n": 1}), line("error", "boom"), line("report", {"n": 2})):
        seen(text)
    assert seen.messages == {"report": {"n": 2}, "error": "boom"}
    assert seen.last == "starting"  # no progress message yet


def test_progress_names_where_the_child_was_and_is_passed_on() -> None:
    told: list[dict[str, Any]] = []
    seen = ChildMessages(told.append)
    seen(line("progress", {"label": "lenet/cudnn", "step": 3}))
    seen(line("progress", {"label": "convnet/native"}))
    assert seen.last == "convnet/native"
    assert told == [{"label": "lenet/cudnn", "step": 3}, {"label": "convnet/native"}]
    seen(line("progress", "not a dict"))  # kept as the last progress message, not a label
    assert seen.last == "convnet/native" and seen.messages["progress"] == "not a dict"
    assert len(told) == 2
    ChildMessages()(line("progress", {"label": "x"}))  # no callback: nothing to call


@pytest.mark.parametrize("text", [
    "Epoch 1: loss 2.3",  # torch's own output
    " GPUDOCTOR:" + json.dumps({"kind": "report", "data": 1}),  # not at the line's start
    "0123456789" + json.dumps({"kind": "report", "data": PREFIX}),  # the prefix quoted
    PREFIX + "{not json",
    PREFIX + json.dumps({"kind": "report"}),  # no data
    PREFIX + json.dumps(["report", 1]),  # not an object
    PREFIX + "null",
    PREFIX,
])
def test_lines_that_are_not_the_protocol_are_skipped(text: str) -> None:
    seen = ChildMessages()
    seen(text)
    assert seen.messages == {} and seen.last == "starting"


def test_the_child_environment_is_unbuffered_without_a_startup_file() -> None:
    given = {"PATH": "/usr/bin", "PYTHONSTARTUP": "/home/u/.pythonrc", "PYTHONUNBUFFERED": "0"}
    env = child_environ(given)
    assert env == {"PATH": "/usr/bin", "PYTHONUNBUFFERED": "1"}
    assert given["PYTHONSTARTUP"] == "/home/u/.pythonrc"  # the caller's mapping is untouched


def test_without_an_environment_the_child_gets_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUDOCTOR_TEST_MARK", "here")
    monkeypatch.setenv("PYTHONSTARTUP", "/tmp/startup.py")
    env = child_environ(None)
    assert env["GPUDOCTOR_TEST_MARK"] == "here" and env["PYTHONUNBUFFERED"] == "1"
    assert "PYTHONSTARTUP" not in env and os.environ["PYTHONSTARTUP"] == "/tmp/startup.py"
