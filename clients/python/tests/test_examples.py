"""The first-hour examples (the standard library only, then the client) against the live server,
through a proxy that fails a page once and drops the answer to the note: both must still do
the whole hour, and post the note once."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Set

from faults import FaultProxy
from live import CLIENT_DIR, client, live

EXAMPLES = CLIENT_DIR / "examples"


class FirstHour(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.api = client()
        cls.scene = cls.server.refs["sc101-12"]
        cls.assets = list(cls.api.list_assets())

    @classmethod
    def tearDownClass(cls) -> None:
        cls.api.close()

    def setUp(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="prodgraph-first-hour-"))
        self.proxy = FaultProxy(self.server.url)

    def tearDown(self) -> None:
        self.proxy.close()
        shutil.rmtree(self.work, ignore_errors=True)

    def note_ids(self, asset: int) -> Set[int]:
        return {n["id"] for v in self.api.get_asset(asset)["versions"] for n in v["notes"]}

    def run_example(self, name: str) -> None:
        first = self.assets[0]["node_id"]
        before = self.note_ids(first)
        self.proxy.plan("status:503", method="GET", path="/api/v1/assets", retry_after=0)
        self.proxy.plan("drop_after_answer", method="POST", path=f"/api/v1/assets/{first}/notes")
        env = dict(os.environ, PRODGRAPH_URL=self.proxy.url, PRODGRAPH_KEY=self.server.admin_key, PYTHONPATH=str(CLIENT_DIR))
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / name), str(self.scene)],
            cwd=self.work, env=env, capture_output=True, text=True, timeout=120,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stderr, "")
        lines = done.stdout.splitlines()
        self.assertEqual(len(lines), 4, lines)

        pages = -(-len(self.assets) // 10)
        self.assertEqual(lines[0], f"{len(self.assets)} assets in {pages} pages")
        self.assertEqual(lines[1], f"scene {self.scene}: bundle, then 304 on asking again")

        note = re.fullmatch(rf"note (\d+) on asset {first}", lines[2])
        self.assertIsNotNone(note, lines[2])
        self.assertEqual(self.note_ids(first) - before, {int(note.group(1))}, "the note was written once")  # type: ignore[union-attr]
        tries = self.proxy.requests("POST", f"/api/v1/assets/{first}/notes")
        self.assertEqual(len(tries), 2)
        self.assertEqual(len({t["headers"].get("Idempotency-Key") for t in tries}), 1)

        media = int(re.fullmatch(r"media (\d+): \d+ bytes, SHA-256 checked", lines[3]).group(1))  # type: ignore[union-attr]
        meta = self.api.get_media(media)
        self.assertEqual(lines[3], f"media {media}: {meta['size']} bytes, SHA-256 checked")
        (kept,) = [p for p in self.work.iterdir() if p.is_file()]
        self.assertEqual(hashlib.sha256(kept.read_bytes()).hexdigest(), meta["sha256"])

    # the same four lines from both: the same hour's work
    def test_the_standard_library_script(self) -> None:
        self.run_example("first-hour-stdlib.py")

    def test_the_client_script(self) -> None:
        self.run_example("first-hour-client.py")


if __name__ == "__main__":
    unittest.main()
