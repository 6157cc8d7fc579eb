"""What ``--diff`` and ``--fix`` add to a CLI run: patches attached to the findings before
they are rendered, then (``--fix``) the files written, a summary and the exit code."""

from __future__ import annotations

import os
from collections.abc import Callable

from gradcheck.check import Options
from gradcheck.config import Config
from gradcheck.fix import safety
from gradcheck.fix.plan import FilePlan, plan_report
from gradcheck.report import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Report


class Fixing:
    """``prepare`` before rendering (the patches go into the output), ``finish`` after."""

    def __init__(
        self,
        report: Report,
        config: Config,
        options: Options,
        *,
        targets: list[str],
        write: bool,
        force: bool,
        fmt: str,
        echo: Callable[[str], None],
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.report = report
        self.config = config
        self.options = options
        self.targets = targets
        self.write = write
        self.force = force
        self.fmt = fmt
        self.echo = echo
        self.progress = progress
        self.plans: list[FilePlan] = []

    def prepare(self) -> None:
        self.plans = plan_report(
            self.report,
            self.config,
            self.options,
            self.targets,
            combine_verified=self.write,
            progress=self.progress,
        )

    def finish(self, exit_zero: bool = False, quiet: bool = False) -> int:
        if self.fmt == "github":
            _job_summary(self.report)
        verified = [f for f in self.report.findings if f.patch is not None and f.patch.verified]
        if not self.write:
            if not quiet and self.report.findings:
                n = len(verified)
                self.echo(
                    f"{n} verified patch{'es' if n != 1 else ''} for {len(self.report.findings)} "
                    f"finding{'s' if len(self.report.findings) != 1 else ''}"
                    + (" (gradcheck --fix applies them)" if n else "")
                )
            return self.report.exit_code(exit_zero)
        fixed, refused = set(), 0
        files = 0
        for plan in self.plans:
            if not plan.applied or plan.text == plan.old_text:
                continue
            why = None if self.force else safety.refusal(plan.target.path, plan.original, plan.target.encoding)
            if why is None:
                why = safety.write(plan.target.path, plan.original, plan.text, plan.target.encoding)
            if why is not None:
                refused += 1
                force = "" if self.force else "; --force fixes it anyway"
                self.echo(
                    f"gradcheck: not fixing {plan.target.display}: {why}{force if 'changed on disk' not in why else ''}"
                )
                continue
            files += 1
            fixed |= {id(f) for f in plan.applied}
        remaining = [f for f in self.report.findings if id(f) not in fixed]
        if not quiet:
            self.echo(
                f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''} in {files} file{'s' if files != 1 else ''}"
                f" ({len(remaining)} remaining)"
            )
        if self.report.errors or refused:
            return EXIT_ERROR
        if remaining and not exit_zero:
            return EXIT_FINDINGS
        return EXIT_CLEAN


def _job_summary(report: Report) -> None:
    """GitHub Actions: the verified patches in the job summary, which the annotations link to."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    from gradcheck.output.github import step_summary

    text = step_summary(report)
    if text:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError:
            pass
