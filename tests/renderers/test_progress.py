"""`gpudoctor.renderers.progress`: the transient progress bars of install-cudnn and smoke-test on
a terminal: none when not enabled, the names shown escaped, the bar gone when the action ends."""

from __future__ import annotations

import io

from rich.console import Console

from gpudoctor.actions.smoke import SmokeProgress
from gpudoctor.renderers.progress import byte_progress, step_progress

MB = 1_000_000


def terminal() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=100, color_system=None)


def shown(console: Console) -> str:
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_not_enabled_nothing_is_shown() -> None:
    console = terminal()
    with byte_progress(console, "cudnn.tgz", 800 * MB, enabled=False) as update:
        assert update is None
    with step_progress(console, enabled=False) as on_step:
        assert on_step is None
    assert shown(console) == ""


def test_bytes_read_with_the_tarballs_name_escaped() -> None:
    console = terminal()
    with byte_progress(console, "cudnn\x1b[2J\n.tgz", 800 * MB, enabled=True) as update:
        assert update is not None
        update(400 * MB, 800 * MB)
    out = shown(console)
    assert "reading cudnn\\x1b[2J\\n.tgz " in out and "\x1b[2J\n" not in out
    assert "400.0/800.0 MB" in out
    assert out.endswith("\x1b[2K")  # transient: the last line is erased at the end


def test_smoke_steps_with_their_label_escaped() -> None:
    console = terminal()
    with step_progress(console, enabled=True) as on_step:
        assert on_step is not None
        on_step(SmokeProgress(12, 20, "lenet cudnn\x1b[31m"))
    out = shown(console)
    assert "lenet cudnn\\x1b[31m " in out and "\x1b[31m" not in out
    assert "12/20" in out and out.endswith("\x1b[2K")
