"""``--format json``: the report contract, version 1 (design §4; schema in
``gradcheck/schema/report-v1.json``)."""

from __future__ import annotations

import json

from gradcheck._version import __version__

SCHEMA_VERSION = 1


def report_json(report) -> dict:
    files = [result.to_json() for result in report.files]
    for file in files:
        for finding in file["findings"]:
            # the template fields travel from the checker process only; the report's
            # findings say the same in ``message`` and ``fix``
            finding.pop("fields", None)
    return {
        "version": SCHEMA_VERSION,
        "gradcheck": __version__,
        "files": files,
        "summary": {
            "files": len(report.files),
            "findings": len(report.findings),
            "errors": len(report.errors),
        },
    }


def render_json(report) -> str:
    return json.dumps(report_json(report), indent=2, ensure_ascii=False) + "\n"
