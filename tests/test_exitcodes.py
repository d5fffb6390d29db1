"""`gpudoctor.exitcodes.ExitCode`: what a gpudoctor process tells its caller, as the README's
"Exit codes" table promises it (the table is the user contract; the code has one home)."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from gpudoctor.exitcodes import ExitCode

README = Path(__file__).resolve().parent.parent / "README.md"

# each code's meaning, as the README's row for it begins
MEANINGS = {
    ExitCode.OK: "no failure",
    ExitCode.FAILURE: "at least one failure",
    ExitCode.USAGE: "usage error",
    ExitCode.INTERNAL: "internal error in gpudoctor",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C, SIGINT)",
}


def readme_rows() -> dict[int, str]:
    """The README's exit-code table: code → meaning."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+) \| (.*) \|$", section, re.M)}


def test_every_code_is_the_readmes_with_its_meaning() -> None:
    rows = readme_rows()
    assert set(MEANINGS) == set(ExitCode)
    for code, meaning in MEANINGS.items():
        assert rows[code.value].startswith(meaning), (code, rows[code.value])


def test_the_readme_lists_no_other_code_than_the_signal_exits() -> None:
    """143 (SIGTERM) and 129 (SIGHUP) are 128 + the signal, as a shell reports them: not
    ExitCode members."""
    assert set(readme_rows()) - {c.value for c in ExitCode} == {128 + signal.SIGTERM}
    assert ExitCode.INTERRUPTED == 128 + signal.SIGINT


def test_the_codes_are_distinct_plain_ints() -> None:
    assert len({int(c) for c in ExitCode}) == len(ExitCode)
    assert ExitCode.USAGE == 2 and isinstance(ExitCode.USAGE, int)  # sys.exit takes it as is
