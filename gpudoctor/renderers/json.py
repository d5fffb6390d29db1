"""JSON: a versioned schema, stable key order, every finding and the full Environment."""

from __future__ import annotations

import json
from typing import Any

from gpudoctor import __version__, schemas
from gpudoctor.model import Report, Status
from gpudoctor.renderers.interface import finding_dict
from gpudoctor.snapshot import to_data

# what json.dumps leaves raw but a terminal acts on: C1 controls (0x9b is a CSI) and the
# bidirectional overrides; escaped, the document is the same JSON
_RAW = {c: f"\\u{c:04x}" for c in (*range(0x7F, 0xA0), *range(0x202A, 0x202F),
                                    *range(0x2066, 0x206A))}


def dumps(data: Any) -> str:
    """JSON text as every command writes it: indented, UTF-8, a final newline. Control
    characters in strings come out as `\\u001b` escapes (json's own rule, extended to C1
    controls and bidirectional overrides)."""
    return json.dumps(data, indent=2, ensure_ascii=False).translate(_RAW) + "\n"


def _known_until() -> str | None:
    """The date the compat tables were last checked against their sources (None: unreadable)."""
    from gpudoctor.compat import CompatTableError, known_until

    try:
        return known_until().isoformat()
    except CompatTableError:
        return None


class JsonRenderer:
    """`check --format json`; `check --from-snapshot report.json` reads it back."""

    def render(self, report: Report) -> str:
        """The report as JSON text."""
        return dumps({
            "schema_version": schemas.version(schemas.CHECK),
            "gpudoctor_version": __version__,
            "summary": {s.value: report.count(s) for s in Status},
            "compat_tables_known_until": _known_until(),
            "unknown_selectors": list(report.unknown_selectors),
            "notes": list(report.notes),
            "findings": [finding_dict(r) for r in report.results],
            "environment": to_data(report.environment),
        })
