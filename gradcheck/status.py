"""The live status line on a terminal (stderr): which file is being checked, for how long,
and the last line its script printed, as pytest and ruff show signs of life. Redrawn twice
a second by a thread; nothing is drawn when stderr is not a terminal.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable


class Status:
    """``[2/5] checking train.py … 12 s · Epoch 1/5 ━━━━ 30%``."""

    def __init__(self, stream=None, interval: float = 0.5) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval
        self.total = 0
        self.done = 0
        self._running: dict[str, tuple[float, Callable[[], str]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def running(self, path: str, last_line: Callable[[], str] | None) -> None:
        """A file's check started (``last_line`` gives its script's latest output) or ended (None)."""
        with self._lock:
            if last_line is None:
                self._running.pop(path, None)
            else:
                self._running[path] = (time.monotonic(), last_line)
        if last_line is not None:
            self._draw()  # at once: "checking train.py …" before the first tick
            if self._thread is None:
                self._thread = threading.Thread(target=self._tick, name="gradcheck-status", daemon=True)
                self._thread.start()

    def line(self) -> str:
        with self._lock:
            running = list(self._running.items())
        if not running:
            return ""
        path, (started, last_line) = min(running, key=lambda item: item[1][0])  # the oldest running
        count = f"[{self.done}/{self.total}] " if self.total > 1 else ""
        more = f" (+{len(running) - 1} more)" if len(running) > 1 else ""
        text = f"{count}checking {path}{more} … {time.monotonic() - started:.0f} s"
        try:
            said = last_line()
        except Exception:  # noqa: BLE001 - a status line never fails the run
            said = ""
        return f"{text} · {said}" if said else text

    def clear(self) -> None:
        """Erase the line (before a diagnosis or the summary is printed)."""
        with self._lock:
            if self._shown:
                self.stream.write("\r" + " " * (self._width() - 1) + "\r")
                self.stream.flush()
                self._shown = False

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        self.clear()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self._draw()

    def _draw(self) -> None:
        text = self.line()
        width = self._width() - 1
        with self._lock:
            if not text and not self._shown:
                return
            self.stream.write("\r" + text[:width].ljust(width))
            self.stream.flush()
            self._shown = bool(text)

    @staticmethod
    def _width() -> int:
        return max(40, shutil.get_terminal_size((100, 20)).columns)
