"""Every Python snippet of the client's README, run as a user would run it, against the live server.

A snippet runs in a fresh interpreter in a scratch folder holding the files it names, with
PRODGRAPH_URL and PRODGRAPH_KEY set (the vendor key where the README says
``<!-- key: vendor -->``). ``<!-- runs: forever -->`` snippets run until they print what a
write made meanwhile; ``<!-- runs: webhook -->`` is handed a real delivery.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid
from pathlib import Path
from typing import Dict, List, Tuple

from live import CLIENT_DIR, client, jpeg, live, wait_for
from test_webhooks import Receiver

README = CLIENT_DIR / "README.md"
BLOCK = re.compile(r"(?:<!-- (\w+): (\w+) -->\n)?```python\n(.*?)```", re.S)


def snippets() -> List[Tuple[Dict[str, str], str]]:
    text = README.read_text(encoding="utf-8")
    return [({m.group(1): m.group(2)} if m.group(1) else {}, m.group(3)) for m in BLOCK.finditer(text)]


class Readme(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.work = Path(tempfile.mkdtemp(prefix="prodgraph-readme-"))
        names = ("renders/coat_v004.jpg", "comps/ep101_sc12_v003.jpg", "comps/ep101_sc12_v003_matte.jpg",
                 "plates/ep102_sh010_plate.jpg", "edit/ep102_turnover.edl")
        for name in names:
            (cls.work / name).parent.mkdir(parents=True, exist_ok=True)
            (cls.work / name).write_bytes(jpeg(hash(name) % 1000))
        (cls.work / "downloads").mkdir()

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.work, ignore_errors=True)

    def env(self, marks: Dict[str, str]) -> Dict[str, str]:
        key = self.server.vendor_key if marks.get("key") == "vendor" else self.server.admin_key
        return dict(os.environ, PRODGRAPH_URL=self.server.url, PRODGRAPH_KEY=key, PYTHONPATH=str(CLIENT_DIR))

    def test_there_are_snippets_for_the_first_hour(self) -> None:
        self.assertGreaterEqual(len(snippets()), 10)

    def test_snippets_run(self) -> None:
        for marks, code in snippets():
            title = code.strip().splitlines()[-1][:60]
            with self.subTest(snippet=title):
                if marks.get("runs") == "forever":
                    self.run_forever(marks, code)
                elif marks.get("runs") == "webhook":
                    self.run_webhook(code)
                else:
                    done = subprocess.run(
                        [sys.executable, "-c", code], cwd=self.work, env=self.env(marks),
                        capture_output=True, text=True, timeout=120,
                    )
                    self.assertEqual(done.returncode, 0, f"{done.stdout}\n{done.stderr}")

    def run_forever(self, marks: Dict[str, str], code: str) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-c", code], cwd=self.work, env=self.env(marks),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
        writer = client()
        made = []
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                made.append(writer.create_asset(f"Feed snippet {uuid.uuid4().hex[:6]}")["node_id"])
                try:
                    line = lines.get(timeout=1.5)
                except queue.Empty:
                    continue
                op, kind, ident = line.split()[:3]
                self.assertEqual((op, kind), ("created", "asset"))
                self.assertIn(int(ident), made)
                break
            else:
                self.fail("the feed snippet printed nothing while assets were created")
            wait_for(lambda: (self.work / "feed.cursor").exists())  # written just after the print
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()  # type: ignore[union-attr]
            proc.stderr.close()  # type: ignore[union-attr]
            writer.close()

    def run_webhook(self, code: str) -> None:
        receiver = Receiver()
        admin = client()
        hook = admin.create_webhook(receiver.url, kinds=["asset"], after="now")
        try:
            admin.create_asset(f"Webhook snippet {uuid.uuid4().hex[:6]}")
            header, body = receiver.got.get(timeout=30)
            os.environ["PRODGRAPH_WEBHOOK_SECRET"] = hook["secret"]
            namespace: Dict[str, object] = {"__name__": "receiver"}
            exec(compile(code, "README receiver", "exec"), namespace)
            on_delivery = namespace["on_delivery"]
            self.assertEqual(on_delivery({"Prodgraph-Signature": header}, body), 204)  # type: ignore[operator]
            self.assertEqual(on_delivery({"Prodgraph-Signature": header}, body + b" "), 401)  # type: ignore[operator]
            self.assertEqual(on_delivery({}, body), 401)  # type: ignore[operator]
        finally:
            os.environ.pop("PRODGRAPH_WEBHOOK_SECRET", None)
            admin.remove_webhook(hook["id"])
            admin.close()
            receiver.close()


if __name__ == "__main__":
    unittest.main()
