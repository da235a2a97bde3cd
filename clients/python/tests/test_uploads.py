"""Uploads stream from disk: a file far larger than the memory the client may use, and a server
that stops reading mid-upload (the client gives up after its timeout, not never)."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
import tracemalloc
import unittest
import uuid
from pathlib import Path

from faults import FaultProxy
from live import client, jpeg, live

import prodgraph

# Far more than the client may hold: it reads and sends a quarter of a megabyte at a time.
SIZE = 96 * 1024 * 1024
# What the client may allocate while sending it (chunks, headers, the JSON answer).
MEMORY_ALLOWED = 8 * 1024 * 1024


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Uploads(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.tmp = Path(tempfile.mkdtemp(prefix="prodgraph-upload-"))
        cls.big = cls.tmp / "plate_v001.jpg"
        with open(cls.big, "wb") as f:
            f.write(jpeg(91))  # sniffed as a JPEG by the server
            f.truncate(SIZE)  # the rest a hole: read back as zeros, and no disk written here
        cls.big_sha = sha256_file(cls.big)
        cls.direct = client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.direct.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_file_far_larger_than_the_memory_used_is_streamed_whole(self) -> None:
        # the shared server refuses uploads past a small limit; this one takes the big file
        url = self.server.serve_another(PRODGRAPH_MAX_UPLOAD_BYTES=str(2 * SIZE))
        c = prodgraph.Client(url, self.server.admin_key)
        made = c.create_asset(f"Streamed {uuid.uuid4().hex[:8]}")
        tracemalloc.start()
        try:
            landed = c.land_asset_version(made["node_id"], self.big, note="96 MB, streamed")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            c.close()
        self.assertEqual(landed["size"], SIZE)
        self.assertEqual(landed["sha256"], self.big_sha, "every byte arrived, in order")
        self.assertLess(peak, MEMORY_ALLOWED, f"the client held {peak / 2**20:.1f} MB at its peak")

    def test_an_upload_the_server_stops_reading_times_out(self) -> None:
        proxy = FaultProxy(self.server.url)
        timeout = 1.0
        c = prodgraph.Client(proxy.url, self.server.admin_key, timeout=timeout, retries=1)
        c._transport.backoff = 0.05
        made = self.direct.create_asset(f"Stalled {uuid.uuid4().hex[:8]}")
        path = f"/api/v1/assets/{made['node_id']}/versions"
        # reads the head, never the body: the file (far more than socket buffers hold) stalls
        proxy.plan("stop_reading:120", method="POST", path=path, times=2)
        started = time.monotonic()
        try:
            with self.assertRaises(prodgraph.Timeout):
                c.land_asset_version(made["node_id"], self.big)
            elapsed = time.monotonic() - started
        finally:
            c.close()
            proxy.close()
        # two tries (the first retried under its Idempotency-Key), each given up after `timeout`
        self.assertLess(elapsed, 2 * timeout + 3.0, "the client did not wait on the stalled server")
        tries = proxy.requests("POST", path)
        self.assertEqual(len(tries), 2)
        self.assertEqual(len({t["headers"].get("Idempotency-Key") for t in tries}), 1)
        self.assertEqual(self.direct.get_asset(made["node_id"])["versions"], [], "nothing landed")


if __name__ == "__main__":
    unittest.main()
