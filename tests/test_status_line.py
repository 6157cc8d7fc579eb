"""Signs of life on a terminal: ``checking train.py … N s`` at once, with the last line the
script printed, while a slow script gets to its first step; nothing of it off a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import textwrap
import time

from gradcheck.status import Status
from tests.conftest import ROOT

SLOW = textwrap.dedent(
    """\
    import time
    print("loading the dataset", flush=True)
    time.sleep(4)
    import tensorflow as tf
    w = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        loss = tf.square(w)
    tape.gradient(loss, w)
    """
)


def test_a_terminal_sees_the_file_its_time_and_its_last_output(tmp_path):
    script = tmp_path / "slow_train.py"
    script.write_text(SLOW)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcheck", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(leader)
    text = seen.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "checking " in text and "slow_train.py" in text
    assert "loading the dataset" in text  # the script's last line, while it loads
    assert " s" in text.split("checking", 1)[1]
    assert "No findings in 1 checked file" in text


def test_the_status_line_names_the_oldest_running_file_and_counts():
    status = Status(stream=open(os.devnull, "w"), interval=60)
    status.total, status.done = 3, 1
    status.running("a.py", lambda: "epoch 2")
    status.running("b.py", lambda: "")
    text = status.line()
    assert text.startswith("[1/3] checking a.py (+1 more) … ") and text.endswith(" · epoch 2")
    status.running("a.py", None)
    assert status.line().startswith("[1/3] checking b.py … ")
    status.running("b.py", None)
    assert status.line() == ""
    status.stop()


def test_no_status_line_off_a_terminal(tmp_path):
    script = tmp_path / "slow_train.py"
    script.write_text(SLOW.replace("time.sleep(4)", "time.sleep(0)"))
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck", str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0
    assert "checking" not in done.stderr and "\r" not in done.stderr
