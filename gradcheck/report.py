"""A run's outcome over all files: what the CLI prints, the API returns and pytest asserts."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradcheck.findings import CHECKED, PARTIAL, SKIPPED, FileResult, Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: Nothing to check: no Python file or notebook under the paths given (pytest's "no tests collected").
EXIT_NOTHING = 5


class GradientFlowError(AssertionError):
    """Raised by ``Report.raise_for_findings()``; its message is the full text diagnosis."""


@dataclass
class Report:
    files: list[FileResult] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for result in self.files for f in sorted(result.findings, key=Finding.sort_key)]

    @property
    def errors(self) -> list[FileResult]:
        return [r for r in self.files if r.error is not None]

    @property
    def partial(self) -> list[FileResult]:
        """Files checked only in part: a training entry point was never reached (GC905)."""
        return [r for r in self.files if r.status == PARTIAL]

    @property
    def ok(self) -> bool:
        """No finding, and every file checked whole."""
        return not self.findings and not self.errors and not self.partial

    def exit_code(self, exit_zero: bool = False) -> int:
        """2 when a file could not be checked; 1 with findings; 2 when a file was checked
        only in part (a clean verdict would cover trainings that never ran); else 0."""
        if self.errors:
            return EXIT_ERROR
        if self.findings and not exit_zero:
            return EXIT_FINDINGS
        if self.partial:
            return EXIT_ERROR
        return EXIT_CLEAN

    def summary(self) -> str:
        """``3 findings in 2 files; 1 file could not be checked`` (or ``No findings``)."""
        n = len(self.findings)
        with_findings = sum(1 for r in self.files if r.findings)
        checked = sum(1 for r in self.files if r.status in (CHECKED, PARTIAL))
        parts = []
        if n:
            # a warning (GC201, GC203) fails the run like an error, as flake8's W codes do
            warnings = sum(1 for f in self.findings if f.severity == "warning")
            note = f" ({_plural(warnings, 'warning')})" if warnings else ""
            parts.append(f"{_plural(n, 'finding')}{note} in {_plural(with_findings, 'file')}")
        elif self.partial:
            parts.append(f"No findings in what was reached of {_plural(checked, 'checked file')}")
        else:
            parts.append(f"No findings in {_plural(checked, 'checked file')}")
        if self.partial:
            verb = "file was" if len(self.partial) == 1 else "files were"
            parts.append(f"{len(self.partial)} {verb} checked in part (GC905: a training not reached)")
        if self.errors:
            verb = "file could" if len(self.errors) == 1 else "files could"
            parts.append(f"{len(self.errors)} {verb} not be checked")
        skipped = sum(1 for r in self.files if r.status == SKIPPED)
        if skipped:
            parts.append(f"{_plural(skipped, 'file')} skipped (not training code)")
        return "; ".join(parts)

    def to_text(self, color: bool = False) -> str:
        from gradcheck.output.text import render_full

        return render_full(self, color=color)

    def to_json(self) -> dict:
        from gradcheck.output.json_format import report_json

        return report_json(self)

    def raise_for_findings(self) -> None:
        if not self.ok:
            raise GradientFlowError(self.to_text(color=False))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
