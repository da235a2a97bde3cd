"""verify_webhook against a real delivery from the server, and against forgeries."""

from __future__ import annotations

import queue
import threading
import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Tuple

from live import client, live

import prodgraph
from prodgraph import WebhookSignatureError, verify_webhook


class Receiver:
    """A webhook receiver on 127.0.0.1 that keeps each delivery's signature header and raw body."""

    def __init__(self) -> None:
        self.got: "queue.Queue[Tuple[str, bytes]]" = queue.Queue()
        got = self.got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                got.put((self.headers.get("Prodgraph-Signature") or "", raw))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/prodgraph"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Webhooks(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = client()
        cls.receiver = Receiver()
        cls.hook = cls.c.create_webhook(cls.receiver.url, kinds=["asset"], after="now")
        cls.c.create_asset(f"Hooked {uuid.uuid4().hex[:6]}")
        cls.header, cls.body = cls.receiver.got.get(timeout=30)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.remove_webhook(cls.hook["id"])
        cls.receiver.close()
        cls.c.close()

    def test_a_real_delivery_verifies(self) -> None:
        self.assertTrue(verify_webhook(self.hook["secret"], self.header, self.body))
        self.assertTrue(verify_webhook(self.hook["secret"], self.header, self.body.decode("utf-8")))

    def test_forgeries_are_refused(self) -> None:
        secret = self.hook["secret"]
        cases = {
            "another secret": ("whsec_other", self.header, self.body),
            "an altered body": (secret, self.header, self.body.replace(b"asset", b"assex")),
            "no header": (secret, None, self.body),
            "a malformed header": (secret, "v1=abc", self.body),
            "a wrong signature": (secret, self.header.split(",v1=")[0] + ",v1=" + "0" * 64, self.body),
        }
        for name, (s, h, b) in cases.items():
            with self.subTest(name), self.assertRaises(WebhookSignatureError):
                verify_webhook(s, h, b)

    def test_an_old_delivery_is_a_replay(self) -> None:
        stamp = int(self.header.split(",")[0].split("=")[1])
        with self.assertRaises(WebhookSignatureError):
            verify_webhook(self.hook["secret"], self.header, self.body, now=stamp + 301)
        self.assertTrue(verify_webhook(self.hook["secret"], self.header, self.body, tolerance=600, now=stamp + 301))

    def test_errors_share_a_base(self) -> None:
        self.assertTrue(issubclass(WebhookSignatureError, prodgraph.ProdgraphError))
        self.assertLess(abs(time.time() - int(self.header.split(",")[0][2:])), 300)


if __name__ == "__main__":
    unittest.main()
