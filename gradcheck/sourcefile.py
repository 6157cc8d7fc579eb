"""Whether a path is a file gradcheck may read: a regular file of a sane size.

A ``*.py`` name can be a FIFO (reading it waits for a writer forever), a symlink to
``/dev/zero`` (reading it never ends) or a symlink loop: each is one file's GC901 reason,
decided by ``stat`` before anything opens the file. No TensorFlow, no user code.
"""

from __future__ import annotations

import os
import stat

#: Larger than any hand-written script (a 10,000-line file is under 1 MiB); a generated
#: file of this size would take the static engine minutes and the compiler gigabytes.
MAX_SOURCE_BYTES = 32 * 1024 * 1024
#: Notebooks carry their outputs (images, logs): more room, still bounded.
MAX_NOTEBOOK_BYTES = 256 * 1024 * 1024

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def problem(path: str, limit: int = MAX_SOURCE_BYTES) -> str | None:
    """Why ``path`` must not be read (one line), or None. Follows symlinks, as ``open`` does."""
    try:
        st = os.stat(path)
    except OSError as error:
        return f"cannot read the file: {error.strerror or error}"
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        return f"not a regular file ({kind}): there is no source to read"
    if st.st_size > limit:
        return f"the file is {st.st_size / 2**20:.0f} MiB, over the {limit // 2**20} MiB a source file may have"
    return None
