"""What CI runners read as commands in a job's log, made inert in everything gpudoctor prints.

A CI runner parses every line a step writes to stdout and stderr, and some of what it finds
there are commands that change the job:

- GitHub Actions: `::command args::data` at a line's start, after any leading white space
  (`::add-mask::`, `::stop-commands::`, `::error title=…::`), and the older `##[command]`
  anywhere in a line (https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions;
  the runner's `ActionCommand.TryParseV2` trims the line's start, `TryParse` looks for `##[`
  anywhere);
- Azure Pipelines: `##vso[area.action]` and `##[group]`-style formatting commands anywhere;
  TeamCity: `##teamcity[message]`;
- GitLab: collapsible sections, `section_start:<time>:<name>\\r\\e[0K`, which need a raw
  carriage return and ESC; Jenkins and GitLab act on ANSI escape sequences.

A string from outside (a GPU name in a pasted snapshot, a file name in `fleet DIR`, an error
text given to `explain`) may hold any of these. Control characters never reach the output raw
(`interface.clean`, and JSON's own escapes), which disarms GitLab's markers and ANSI; this
module disarms the rest, in the one place every byte of output passes (`cli.output`):

- `##` followed by letters and `[` anywhere, and `::` at a line's start after white space or
  invisible characters, are broken up, in a form that keeps each format's meaning: JSON gets
  `\\u0023` / `\\u003a` escapes (the same document), XML `&#35;` / `&#58;` references (the
  same text), and the text formats a WORD JOINER (U+2060, invisible) between the two
  characters. Always, not only when `GITHUB_ACTIONS=true`: a job that runs gpudoctor inside a
  container does not pass that variable in, and its runner parses the output all the same.
- gpudoctor's own workflow commands (`check` under GitHub Actions) are written with `own=True`:
  their `::command::` stays, the data in them is disarmed like everything else.
"""

from __future__ import annotations

import re
import unicodedata

WORD_JOINER = "\u2060"

# the second "#" of "##" + a command name + "[": GitHub's and Azure's `##[…]`, `##vso[…]`,
# TeamCity's `##teamcity[…]`
_HASH_COMMAND = re.compile(r"(?<=#)#(?=[A-Za-z]*\[)")
# a line, as any reader splits them (str.splitlines' breaks: a superset of the runners')
_LINE = re.compile(r"[^\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
# the second "#" and the first ":" as each format writes them inertly
_HASH = {"json": "\\u0023", "junit": "&#35;"}
_COLON = {"json": "\\u003a", "junit": "&#58;"}


def _blank(c: str) -> bool:
    """White space, or a character a runner's trim might drop or a reader cannot see."""
    return c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def disarm(text: str, fmt: str = "text", own: bool = False) -> str:
    """`text` (written as `fmt`: text, json, markdown, junit, prometheus) with every runner
    command made inert. With `own`, a line's leading `::command::` is gpudoctor's own
    workflow command and stays (what follows it on the line is disarmed)."""
    if "##" in text:
        inert = _HASH.get(fmt, WORD_JOINER + "#")
        text = _HASH_COMMAND.sub(lambda _: inert, text)
    if own or "::" not in text:
        return text
    colon = _COLON.get(fmt, ":" + WORD_JOINER)

    def line(m: re.Match[str]) -> str:
        s = m.group()
        i = 0
        while i < len(s) and _blank(s[i]):
            i += 1
        return s[:i] + colon + s[i + 1:] if s.startswith("::", i) else s

    return _LINE.sub(line, text)
