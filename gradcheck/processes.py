"""Every process a check starts, and ending all of them.

The checked script runs in a child process that leads its own process group and session;
what the script starts may leave both (``subprocess.Popen(..., start_new_session=True)``, a
double-forked daemon) and would outlive a ``killpg``. So the parent follows the child's
descendants while it runs (``/proc/*/stat`` parent links, Linux) and kills every one it saw
at the end of the check. With ``become_subreaper`` (the CLI), an orphan the walk did not
see in time is re-parented to gradcheck instead of init, and is ended too.

No TensorFlow, no third-party dependency. Elsewhere than Linux, only the process group is
killed.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

_PROC = "/proc"
_PR_SET_CHILD_SUBREAPER = 36

#: The child processes checks are running now (pid -> its Tree), across threads (``-j N``).
_ACTIVE: dict[int, Tree] = {}
_LOCK = threading.Lock()


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux ``prctl``), so that
    a daemon a script double-forks stays below gradcheck, where ``end`` finds it. For the
    CLI's own process only: in a user's process (the API, pytest) it would change whom
    their orphans belong to."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def start(popen: Callable[[], Any]) -> tuple[Any, Tree]:
    """Start a check's child (``popen()``, a ``subprocess.Popen``) and register it, as one
    step under the lock the kill rounds read: a child started but not yet registered is an
    unclaimed child of ours in a session of its own, which another check's last kill round
    would take for an orphan and SIGKILL (seen with ``-j 2``). One start at a time also keeps
    forks from several threads apart, where a busy process meets the rare fork failure."""
    with _LOCK:
        proc = popen()
        tree = Tree(proc.pid)
        _ACTIVE[proc.pid] = tree
    return proc, tree


def _stat(pid: int) -> tuple[int, int, int, str] | None:
    """(parent pid, session id, start time, state) of ``pid``, or None when it is gone."""
    try:
        fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    # "pid (comm) state ppid pgrp session ... starttime": comm may hold spaces and parentheses
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[3]), int(fields[19]), fields[0].decode()
    except (IndexError, ValueError):
        return None


def _table() -> dict[int, tuple[int, int, int, str]]:
    """Every process: pid -> (parent pid, session id, start time, state)."""
    table = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return table
    for name in names:
        if name.isdigit():
            entry = _stat(int(name))
            if entry is not None:
                table[int(name)] = entry
    return table


class Tree:
    """The processes one check started: its child (``root``) and every descendant seen."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, int] = {}  # pid -> start time: a reused pid is not ours

    def update(self, table: dict[int, tuple[int, int, int, str]] | None = None) -> None:
        """Add the descendants alive now: of the child, and of every process seen before
        (a daemon whose parent has exited keeps its own children ours)."""
        if not os.path.isdir(_PROC):
            return
        table = _table() if table is None else table
        children: dict[int, list[int]] = {}
        for pid, (ppid, _sid, _start, _state) in table.items():
            children.setdefault(ppid, []).append(pid)
        stack = [self.root, *(p for p, start in self.seen.items() if table.get(p, (0, 0, -1))[2] == start)]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child != self.root and child not in self.seen:
                    self.seen[child] = table[child][2]
                    stack.append(child)

    def end(self, proc) -> None:
        """Kill the child's process group, every descendant seen and the orphans re-parented
        to this process that belong to no other running check; reap what is ours to reap.
        The last check to end also ends the orphans no check could claim (with ``-j N``, a
        double-forked daemon's session names none of them)."""
        try:
            try:
                os.killpg(self.root, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.wait()  # gone: its children are re-parented (to us, the subreaper) before the rounds
            self._kill_rounds()
        finally:
            with _LOCK:
                _ACTIVE.pop(self.root, None)
                last = not _ACTIVE
        if last:
            self._kill_rounds()

    def _kill_rounds(self) -> None:
        for _ in range(50):  # each round may orphan more (their parents die): bounded
            table = _table()
            self.update(table)
            victims = self._victims(table)
            if not victims:
                return
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            _reap(victims)
            time.sleep(0.01)  # a killed parent's children are re-parented when it is gone

    def _victims(self, table: dict[int, tuple[int, int, int, str]]) -> list[int]:
        me = os.getpid()
        my_session = os.getsid(0)
        with _LOCK:
            others = {root for root in _ACTIVE if root != self.root}
        out = []
        for pid, (ppid, sid, start, state) in table.items():
            if pid == self.root or pid in others:
                continue
            ours = self.seen.get(pid) == start
            # an orphan re-parented to us (the subreaper) that the walk did not see in time (a
            # double fork is quick): this check's when it is in this check's session; in a
            # session of its own (``setsid`` then fork), when no other check runs. A process
            # in gradcheck's own session is one gradcheck started (``dot``, ``git``).
            if not ours and ppid == me and sid != my_session:
                ours = sid == self.root or not others
            if ours and not (state == "Z" and ppid != me):
                out.append(pid)
        return out


def _reap(pids: list[int]) -> None:
    """Collect the exit status of the killed processes that are this process's children
    (orphans re-parented to the subreaper), so none is left a zombie."""
    me = os.getpid()
    for pid in pids:
        entry = _stat(pid)
        if entry is None or entry[0] != me:
            continue
        end = time.monotonic() + 2.0  # SIGKILLed: it ends now, unless stuck in the kernel (NFS)
        while True:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] or time.monotonic() > end:
                    break
            except ChildProcessError:
                break
            time.sleep(0.005)
