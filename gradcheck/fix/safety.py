"""When ``--fix`` may write a file, and writing it.

A file is written only when what it holds now is also somewhere the user can get it back
from, and nobody is editing it:

- *committed*: git knows the file and it has no uncommitted change, staged or not
  (``git status --porcelain``); a file outside any git repository, untracked or ignored
  could not be restored after the patch, so it is refused too;
- *saved*: no editor holds unsaved changes to it (Vim's swap file says "modified",
  Emacs's ``.#NAME`` lock exists while a buffer is modified); editors that leave no trace
  on disk (VS Code, JetBrains IDEs) cannot be seen;
- *UTF-8*: the file decodes as UTF-8 (with or without a BOM). A patch to a file in
  another encoding is written back in that encoding with ``--force``.

``--force`` writes in spite of all three. Whatever ``--force`` says, a file that changed
on disk since it was checked is never written: the patch was verified against the old
content. Writes are atomic (a temporary file renamed over the original, mode kept).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile

#: Vim's swap file: block 0 starts with b"b0"; the byte at 1007 is 0x55 ("U") while the
#: buffer has unsaved changes (``b0_dirty`` in Vim's memline.c).
_VIM_DIRTY_OFFSET, _VIM_DIRTY = 1007, 0x55


def refusal(path: str, original: bytes, encoding: str) -> str | None:
    """Why ``--fix`` will not write ``path`` without ``--force``; None when it may."""
    return _git_refusal(path) or _editor_refusal(path) or _encoding_refusal(original, encoding)


def _git_refusal(path: str) -> str | None:
    git = shutil.which("git")
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if git is None:
        return "git is not installed, so nothing could undo the change"
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    inside = subprocess.run(
        [git, "-C", directory, "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True, env=env
    )
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return "it is not in a git repository, so nothing could undo the change"
    status = subprocess.run(
        [git, "-C", directory, "status", "--porcelain=v1", "--ignored", "--", os.path.abspath(path)],
        capture_output=True,
        text=True,
        env=env,
    )
    if status.returncode != 0:
        return f"git status failed: {status.stderr.strip() or status.returncode}"
    line = status.stdout.strip()
    if not line:
        return None
    code = line[:2]
    if code == "??":
        return "it is not tracked by git, so nothing could undo the change"
    if code == "!!":
        return "git ignores it, so nothing could undo the change"
    return "it has uncommitted changes (git); commit or stash them first"


def _editor_refusal(path: str) -> str | None:
    directory, name = os.path.split(os.path.abspath(path))
    if os.path.lexists(os.path.join(directory, f".#{name}")):
        return "Emacs has unsaved changes to it (.#lock file)"
    for suffix in ("swp", "swo", "swn"):
        swap = os.path.join(directory, f".{name}.{suffix}")
        try:
            with open(swap, "rb") as fh:
                block = fh.read(_VIM_DIRTY_OFFSET + 1)
        except OSError:
            continue
        if block[:2] == b"b0" and len(block) > _VIM_DIRTY_OFFSET and block[_VIM_DIRTY_OFFSET] == _VIM_DIRTY:
            return f"Vim has unsaved changes to it ({os.path.basename(swap)})"
    return None


def _encoding_refusal(original: bytes, encoding: str) -> str | None:
    if encoding not in ("utf-8", "utf-8-sig"):
        return f"it is not UTF-8 ({encoding})"
    try:
        original.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "it is not valid UTF-8"
    return None


def write(path: str, original: bytes, text: str, encoding: str) -> str | None:
    """Replace the file's content by ``text``; None when written, else why not. Refuses
    when the file is no longer ``original`` (changed since it was checked)."""
    try:
        with open(path, "rb") as fh:
            current = fh.read()
    except OSError as error:
        return f"cannot read it again: {error.strerror or error}"
    if current != original:
        return "it changed on disk while gradcheck ran; check it again"
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    if encoding == "utf-8-sig" or original.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data.removeprefix(b"\xef\xbb\xbf")
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".gradcheck-fix", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as error:
        return f"cannot write it: {error.strerror or error}"
    return None
