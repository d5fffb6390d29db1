"""`gpudoctor.renderers.runners`: `disarm`, the choke point that keeps strings from outside from
becoming CI runner commands, changes what a runner sees, never what the format says.
(Every command run as a CI step runs it: tests/ci/test_runner_injection.py.)"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from gpudoctor.renderers.runners import disarm
from tests.hostile.forgery import RUNNER, runner_commands


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit", "prometheus"])
def test_disarm_keeps_each_format(fmt: str) -> None:
    """The choke point's rewriting changes what a runner sees, never what the format says."""
    payload = "\n".join([*RUNNER, "  ::warning::x", "\u00a0\u200b::notice::y", "###[z]"])
    text = json.dumps({"s": payload}) if fmt == "json" else payload
    out = disarm(text, fmt)
    assert runner_commands(out) == []
    if fmt == "json":
        assert json.loads(out) == {"s": payload}
    elif fmt == "junit":
        assert "".join(ET.fromstring(f"<a>{out.replace(chr(0x1b), '')}</a>").itertext()) == (
            payload.replace("\x1b", "").replace("\r\n", "\n").replace("\r", "\n"))
    else:
        assert out.replace("\u2060", "") == payload
    own = "::error title=GD101 driver::##[add-mask]x\n"
    assert disarm(own, "text", own=True).startswith("::error title=GD101 driver::")
    assert "##[" not in disarm(own, "text", own=True)
