"""What the explain package's unit tests share: the shipped tables and knowledge base, the
signature a text matches (`one`), the first diagnosis of a text (`best`), the cause
classes of its diagnoses (`classes`) and a large log of noise. Not a test module: the mirrored
files (tests/explain/test_<module>.py) import it."""

from __future__ import annotations

from gpudoctor.compat import load_tables
from gpudoctor.explain import explain
from gpudoctor.explain.kb import load
from gpudoctor.explain.match import find_matches

KB, TABLES = load(), load_tables()


def one(text: str, sig_id: str):  # type: ignore[no-untyped-def]
    found = {m.signature.id: m for m in find_matches(text, KB, TABLES)}
    assert sig_id in found, f"{sig_id} not in {sorted(found)}"
    return found[sig_id]


def best(text: str):  # type: ignore[no-untyped-def]
    expl = explain(text, TABLES, probe=None)
    assert expl.found, text
    return expl.diagnoses[0]


def classes(text: str) -> list[str]:
    """The cause classes of the diagnoses, best first."""
    return [d.match.signature.cause_class for d in explain(text, TABLES, probe=None).diagnoses]


NOISE = "".join(f"2024-05-01 12:00:{i % 60:02d} INFO step {i} loss=0.{i % 97:02d} cuda:0 "
                f"mem {9000 + i % 5000}MiB\n" for i in range(40000))  # about 2.4 MiB
