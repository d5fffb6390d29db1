"""`gpudoctor explain`: a pasted error, log or bug report → its cause, confirmed on a machine.

The knowledge base is data (`signatures.toml`, `xids.toml`, loaded by `kb`); `match` finds the
signatures in a text in linear time; `decode` turns the numbers in them into meanings; `core`
confirms each match with the checks it names and ranks the diagnoses.
"""

from __future__ import annotations

from gpudoctor.explain.core import Diagnosis, Explanation, State, explain

__all__ = ["Diagnosis", "Explanation", "State", "explain"]
