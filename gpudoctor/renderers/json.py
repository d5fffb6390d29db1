"""JSON: a versioned schema, stable key order, every finding and the full Environment."""

from __future__ import annotations

import json

from gpudoctor import __version__
from gpudoctor.model import SCHEMA_VERSION, Report, Status
from gpudoctor.renderers.interface import docs_url
from gpudoctor.snapshot import to_data


class JsonRenderer:
    """`check --format json`; `check --from-snapshot report.json` reads it back."""

    def render(self, report: Report) -> str:
        """The report as JSON text."""
        data = {
            "schema_version": SCHEMA_VERSION,
            "gpudoctor_version": __version__,
            "summary": {s.value: report.count(s) for s in Status},
            "unknown_selectors": list(report.unknown_selectors),
            "notes": list(report.notes),
            "findings": [
                {
                    "id": r.check_id,
                    "slug": r.slug,
                    "title": r.title,
                    "layer": r.layer.value,
                    "severity": r.severity.name.lower(),
                    "status": r.finding.status.value,
                    "message": r.finding.message,
                    "fix": r.finding.fix,
                    "evidence": [list(e) for e in r.finding.evidence],
                    "docs_url": docs_url(r.check_id),
                }
                for r in report.results
            ],
            "environment": to_data(report.environment),
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
