"""Ctrl-C that a command-line tool cannot lose.

Python turns SIGINT into ``KeyboardInterrupt`` at whatever line the main thread is running. When
that line is inside a finaliser (``__del__`` of an HTTP response being collected, a weakref
callback), Python prints "Exception ignored in ..." and carries on: the interrupt is gone, and a
``--follow`` loop then sits in its next long poll as if nothing was pressed. So once Ctrl-C has
been pressed, the interrupt is repeated every second until the tool says it has stopped.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any, Optional

REPEAT_SECONDS = 1.0


class StickyInterrupt:
    """Installs itself as the SIGINT handler (only over Python's default one, on the main thread)."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._pressed = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> "StickyInterrupt":
        can = hasattr(signal, "pthread_kill") and threading.current_thread() is threading.main_thread()
        # SIG_IGN (a background job) or an embedding application's own handler are left alone
        if can and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._on_interrupt)
            self._installed = True
        return self

    def stopped(self) -> None:
        """The tool has caught the interrupt and is stopping: no more repeats."""
        self._stopped.set()

    def __exit__(self, *exc: Any) -> None:
        self._stopped.set()
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)

    def _on_interrupt(self, signum: int, frame: Optional[FrameType]) -> None:
        if self._stopped.is_set():
            return
        if not self._pressed:
            self._pressed = True
            threading.Thread(target=self._repeat, name="prodgraph-interrupt", daemon=True).start()
        raise KeyboardInterrupt

    def _repeat(self) -> None:
        main = threading.main_thread().ident
        while not self._stopped.wait(REPEAT_SECONDS):
            if main is not None:
                signal.pthread_kill(main, signal.SIGINT)
