"""Ctrl-C stops the mirror even when Python swallowed the first KeyboardInterrupt in a finaliser."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import unittest

from live import CLIENT_DIR, interruptible

# A finaliser that receives the interrupt: Python reports "Exception ignored in ..." and goes on,
# as when Ctrl-C lands while an HTTP response is being collected; then a long wait, as the
# mirror's long poll of the change feed.
SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    from prodgraph._interrupt import StickyInterrupt

    class Collected:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            sum(range(1000))

    def wait():
        Collected()
        sys.stderr.write("swallowed\\n")
        sys.stderr.flush()
        time.sleep(30)

    if sys.argv[1] == "sticky":
        with StickyInterrupt() as interrupts:
            try:
                wait()
            except KeyboardInterrupt:
                interrupts.stopped()
                sys.exit(130)
    else:
        wait()
    """
)


def start(mode: str) -> "subprocess.Popen[str]":
    env = dict(os.environ, PYTHONPATH=str(CLIENT_DIR))
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, mode],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible,
    )


class StickyInterruptTests(unittest.TestCase):
    def test_a_swallowed_interrupt_is_repeated_until_the_tool_stops(self) -> None:
        started = time.monotonic()
        proc = start("sticky")
        _, err = proc.communicate(timeout=20)
        self.assertIn("Exception ignored", err, "the first interrupt was lost in the finaliser")
        self.assertIn("swallowed", err)
        self.assertEqual(proc.returncode, 130, err)
        self.assertLess(time.monotonic() - started, 10, "stopped within a repeat or two, not after the wait")

    def test_without_it_the_process_keeps_waiting(self) -> None:
        proc = start("plain")
        try:
            with self.assertRaises(subprocess.TimeoutExpired):
                proc.communicate(timeout=3)
        finally:
            proc.kill()
            _, err = proc.communicate()
        self.assertIn("Exception ignored", err)


if __name__ == "__main__":
    unittest.main()
