"""What the compat query tests share: an answer's row sentences as one text."""

from __future__ import annotations

from gpudoctor.compat.query import Answer


def text_of(answer: Answer) -> str:
    return "\n".join(r.text for s in answer.sections for r in s.rows)
