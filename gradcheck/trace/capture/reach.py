"""Which training entry points of the checked file the run has reached.

A training entry point (``gradcheck.trainings``) is reached when a gradient is asked for,
or a Keras ``fit`` starts, while its line is on the call stack: ``model.fit(...)`` is on
the stack while ``fit`` traces the ``train_step`` whose ``tape.gradient`` it reaches, a
``trainer.train()`` line while the trainer's tape is asked. While some entry point is not
reached yet, a step that was checked already runs on unchecked (and un-updated) instead of
ending the program, so a later training (fine-tuning after pre-training, a GAN's
adversarial phase after its warm-up) gets its first step checked too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from gradcheck.trainings import EntryPoint


class Reach:
    def __init__(self, path: str, entries: Iterable[EntryPoint]) -> None:
        self.paths = {os.path.abspath(path), os.path.realpath(path)}
        self.entries = list(entries)
        self.reached: set[EntryPoint] = set()
        self._by_line: dict[int, list[EntryPoint]] = {}
        for entry in self.entries:
            for line in range(entry.line, entry.end_line + 1):
                self._by_line.setdefault(line, []).append(entry)

    def pending(self) -> list[EntryPoint]:
        return [e for e in self.entries if e not in self.reached]

    def mark_lines(self, lines: Iterable[tuple[str, int]]) -> None:
        for filename, line in lines:
            if line in self._by_line and (filename in self.paths or os.path.abspath(filename) in self.paths):
                self.reached.update(self._by_line[line])

    def mark_stack(self, frame=None, extra: Iterable[tuple[str, int]] = ()) -> None:
        """Mark the lines of the live Python stack (from ``frame`` out), and ``extra`` lines
        (a traced function's stack, which autograph's copy hides from the live frames)."""
        if not self._by_line:
            return
        frame = frame if frame is not None else sys._getframe(1)
        lines = []
        while frame is not None:
            lines.append((frame.f_code.co_filename, frame.f_lineno))
            frame = frame.f_back
        self.mark_lines([*lines, *extra])

    def pending_here(self, frame=None) -> bool:
        """Whether an entry point not reached yet lies inside a function of the checked file
        that is running now (a WGAN's ``train_step`` run eagerly: the generator's
        ``tape.gradient`` after the critic's repeated one). Module-level code does not count:
        it spans the whole file."""
        pending = {e.line for e in self.pending()}
        if not pending:
            return False
        frame = frame if frame is not None else sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            if code.co_name != "<module>" and (
                code.co_filename in self.paths or os.path.abspath(code.co_filename) in self.paths
            ):
                lines = [line for _, _, line in code.co_lines() if line is not None]
                if lines and any(min(lines) <= line <= max(lines) for line in pending):
                    return True
            frame = frame.f_back
        return False
