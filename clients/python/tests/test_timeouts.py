"""What ``timeout`` and ``deadline`` bound, against real sockets that never answer or trickle.

No server of prodgraph is needed: a listening socket that accepts and then says nothing is the
server that never answers; one that sends a head and then a byte now and then is the one that
never finishes. Nothing of urllib or http.client is replaced.
"""

from __future__ import annotations

import socket
import threading
import time
import unittest
from typing import List

import live  # noqa: F401  # puts the client's folder on sys.path

import prodgraph


class Silent:
    """Accepts every connection, reads what it is sent, and never answers (``trickle``: sends an
    answer's head, then one byte of its body every 0.2 s, never the end)."""

    def __init__(self, trickle: bool = False) -> None:
        self.trickle = trickle
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted: List[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            self.accepted.append(conn)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        head_sent = False
        while not self.stop.is_set():
            try:
                if not conn.recv(65536):
                    return  # the client closed it
            except socket.timeout:
                pass
            except OSError:
                return
            if self.trickle:
                try:
                    if not head_sent:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
                        head_sent = True
                    conn.sendall(b" ")
                except OSError:
                    return

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()
        for conn in self.accepted:
            conn.close()


class Timeouts(unittest.TestCase):
    def setUp(self) -> None:
        self.silent = Silent()

    def tearDown(self) -> None:
        self.silent.close()

    def call(self, client: prodgraph.Client, fn: str = "get_production", *args: object) -> float:
        """Seconds until the call raised Timeout (the test fails if it returned)."""
        started = time.monotonic()
        try:
            with self.assertRaises(prodgraph.Timeout) as caught:
                getattr(client, fn)(*args)
        finally:
            client.close()
        self.raised = caught.exception
        return time.monotonic() - started

    def test_timeout_bounds_each_attempt_and_every_attempt_is_made(self) -> None:
        """No deadline: each of the 1 + retries attempts waits ``timeout``, then the next one."""
        c = prodgraph.Client(self.silent.url, "pgk_test", timeout=0.5, retries=2)
        c._transport.backoff = 0.05
        elapsed = self.call(c)
        self.assertEqual(len(self.silent.accepted), 3, "three attempts, each on its own connection")
        self.assertGreaterEqual(elapsed, 1.5)
        self.assertLess(elapsed, 3.0)
        self.assertIn("3 attempts", str(self.raised))

    def test_a_deadline_bounds_the_call_retries_included(self) -> None:
        """``Client(timeout=2, deadline=3)``: with 5 retries allowed the call would wait 12 s and
        more; the deadline ends it at 3 s."""
        c = prodgraph.Client(self.silent.url, "pgk_test", timeout=2, deadline=3, retries=5)
        elapsed = self.call(c)
        self.assertGreaterEqual(elapsed, 2.0, "the first attempt had its whole timeout")
        self.assertLess(elapsed, 3.5, "raised within the deadline")
        self.assertGreaterEqual(len(self.silent.accepted), 2, "a retry was made in the time left")
        self.assertIn("deadline of 3 s", str(self.raised))

    def test_a_deadline_bounds_a_write_too(self) -> None:
        c = prodgraph.Client(self.silent.url, "pgk_test", timeout=5, deadline=1.5, retries=3)
        elapsed = self.call(c, "create_asset", "Never lands")
        self.assertGreaterEqual(elapsed, 1.4)
        self.assertLess(elapsed, 2.0)

    def test_a_deadline_bounds_an_answer_that_trickles(self) -> None:
        """A byte every 0.2 s never trips a 1 s timeout; the deadline still ends the call."""
        trickling = Silent(trickle=True)
        try:
            c = prodgraph.Client(trickling.url, "pgk_test", timeout=1, deadline=2, retries=3)
            elapsed = self.call(c)
        finally:
            trickling.close()
        self.assertGreaterEqual(elapsed, 1.9)
        self.assertLess(elapsed, 2.5)

    def test_timeout_and_deadline_are_positive(self) -> None:
        with self.assertRaises(ValueError):
            prodgraph.Client(self.silent.url, "pgk_test", deadline=0)
        with self.assertRaises(ValueError):
            prodgraph.Client(self.silent.url, "pgk_test", timeout=-1)


if __name__ == "__main__":
    unittest.main()
