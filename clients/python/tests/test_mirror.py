"""``python -m prodgraph mirror DIR`` against the live server, through a counting proxy."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List

from faults import FaultProxy
from live import CLIENT_DIR, client, interruptible, jpeg, live

import prodgraph
from prodgraph.mirror import Mirror


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def answered(api: prodgraph.Client, kind: str, node_id: int) -> bytes:
    """A bundle's body exactly as the API sends it (a fresh, unconditional GET)."""
    _, raw = api._transport.request("GET", api._api(f"/bundles/{kind}/{node_id}"), retryable=True)
    return raw


class MirrorTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.admin = client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.admin.close()

    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="prodgraph-mirror-"))
        self.proxy = FaultProxy(self.server.url)

    def tearDown(self) -> None:
        self.proxy.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def via(self, key: str) -> prodgraph.Client:
        c = prodgraph.Client(self.proxy.url, key)
        c._transport.backoff = 0.05
        return c

    def mirror(self, key: str, **kwargs: Any) -> Dict[str, int]:
        c = self.via(key)
        try:
            return Mirror(c, self.dir, **kwargs).run()
        finally:
            c.close()

    def files(self) -> List[str]:
        return sorted(str(p.relative_to(self.dir)) for p in self.dir.rglob("*") if p.is_file() and ".prodgraph" not in p.parts)

    def assert_equals_the_api(self, key: str) -> None:
        """Every bundle the key may fetch is there as the API answers it, with every image, verified."""
        api = client(key)
        entries = list(api.list_bundles())
        expected = {f"bundles/{e['kind']}/{e['node_id']}.json" for e in entries}
        media_ids = set()
        for e in entries:
            doc = (api.get_scene_bundle if e["kind"] == "scene" else api.get_character_bundle)(e["node_id"])
            on_disk = json.loads((self.dir / "bundles" / e["kind"] / f"{e['node_id']}.json").read_text())
            self.assertEqual(on_disk, doc)
            self.assertEqual(
                (self.dir / "bundles" / e["kind"] / f"{e['node_id']}.json").read_bytes(),
                answered(api, e["kind"], e["node_id"]),
                "the file holds the bytes the API answered, not a re-serialisation",
            )
            for holder in doc.get("assets", []) + doc.get("costumes", []):
                for item in holder.get("released_versions", []) + holder.get("ingredients", []):
                    if item.get("media_id"):
                        media_ids.add(item["media_id"])
        present = set(self.files())
        self.assertTrue(expected <= present, expected - present)
        images = [p for p in present if p.startswith("media/")]
        self.assertEqual(len(images), len(media_ids))
        for media_id in media_ids:
            meta = api.get_media(media_id)
            (path,) = [p for p in images if p.startswith(f"media/{media_id}-")]
            self.assertEqual(sha(self.dir / path), meta["sha256"])
        turnovers = sorted(api.list_turnovers(), key=lambda t: t["id"])
        self.assertEqual(json.loads((self.dir / "turnovers.json").read_text()), turnovers)
        submissions = sorted(api.list_submissions(), key=lambda s: s["id"])
        self.assertEqual(json.loads((self.dir / "submissions.json").read_text()), submissions)
        submitted = [p for p in present if p.startswith("submissions/")]
        self.assertEqual(len(submitted), sum(len(s["media"]) for s in submissions))
        for s in submissions:
            for f in s["media"]:
                (path,) = [p for p in submitted if p.startswith(f"submissions/{s['id']}/{f['id']}-")]
                self.assertEqual(sha(self.dir / path), f["sha256"])
        api.close()

    def test_vendor_mirror_then_only_what_changed(self) -> None:
        counts = self.mirror(self.server.vendor_key)
        self.assertGreater(counts["images_fetched"], 0)
        self.assert_equals_the_api(self.server.vendor_key)
        self.proxy.seen.clear()
        again = self.mirror(self.server.vendor_key)
        self.assertEqual(again.get("images_fetched", 0), 0)
        self.assertEqual(again.get("bundles_changed", 0), 0)
        self.assertEqual([r for r in self.proxy.seen if r["path"].endswith("/content")], [], "no image fetched again")
        bundle_gets = [r for r in self.proxy.seen if "/bundles/scene/" in r["path"] or "/bundles/character/" in r["path"]]
        self.assertTrue(bundle_gets and all("If-None-Match" in r["headers"] for r in bundle_gets))

    def test_production_wide_second_run_is_one_question_to_the_feed(self) -> None:
        self.mirror(self.server.admin_key)
        self.assert_equals_the_api(self.server.admin_key)
        self.proxy.seen.clear()
        self.mirror(self.server.admin_key)
        self.assertEqual([r["path"].split("?")[0] for r in self.proxy.seen], ["/api/v1/changes"] * 2)
        # a change the bundles show: the next run brings it
        approval = next(iter(self.admin.list_approvals(status="pending")), None)
        if approval is not None:
            step = approval["current_step"]
            self.admin.decide_approval(approval["id"], "changes", decided_by=approval["steps"][step]["person_name"], step=step)
        self.mirror(self.server.admin_key)
        self.assert_equals_the_api(self.server.admin_key)

    def test_a_vendor_keeps_its_own_submissions_and_nobody_else_s(self) -> None:
        refs = self.server.refs
        engagements = {e["ref"]: e["id"] for e in self.admin.list_engagements()}
        bramble_key = self.admin.create_key(
            "py bramble", scopes=["read", "submit:turnover"], engagement_id=engagements["eng-bramble"]
        )["token"]
        pixel, bramble = client(self.server.vendor_key), client(bramble_key)
        comp = jpeg(71)
        mine = pixel.submit_turnover(refs["dl-101-comp"], [("Mirror comp.v001.jpg", comp)], title="Mirrored")
        theirs = bramble.submit_turnover(refs["dl-agnes-uniforms"], [("uniform.jpg", jpeg(72))])
        pixel.close()
        bramble.close()
        counts = self.mirror(self.server.vendor_key)
        self.assertGreaterEqual(counts["submitted_fetched"], 1)
        self.assert_equals_the_api(self.server.vendor_key)
        listed = json.loads((self.dir / "submissions.json").read_text())
        self.assertIn(mine["id"], {s["id"] for s in listed})
        self.assertNotIn(theirs["id"], {s["id"] for s in listed}, "another vendor's work is never mirrored")
        self.assertEqual({s["engagement_id"] for s in listed}, {engagements["eng-pixel"]})
        kept = self.dir / "submissions" / str(mine["id"]) / f"{mine['media'][0]['id']}-mirror-comp-v001.jpg"
        self.assertEqual(sha(kept), hashlib.sha256(comp).hexdigest())

        self.proxy.seen.clear()
        again = self.mirror(self.server.vendor_key)
        self.assertEqual(again.get("submitted_fetched", 0), 0)
        self.assertEqual([r for r in self.proxy.seen if r["path"].endswith("/content")], [], "no file fetched again")

        # the submit grant ends: its submissions leave the folder with their files (restored after)
        grant = next(
            g
            for g in self.admin.list_grants(engagement_id=engagements["eng-pixel"])
            if g["kind"] == "delivery" and g["delivery_id"] == refs["dl-101-comp"]
        )
        self.admin.revoke_grant(grant["id"])
        try:
            self.mirror(self.server.vendor_key)
            self.assertFalse(kept.exists())
            self.assertFalse(kept.parent.exists(), "the submission's folder goes once the mirror emptied it")
            self.assertNotIn(mine["id"], {s["id"] for s in json.loads((self.dir / "submissions.json").read_text())})
            self.assert_equals_the_api(self.server.vendor_key)
        finally:
            self.admin.create_grant(
                engagements["eng-pixel"], "delivery", delivery_id=refs["dl-101-comp"], access="submit"
            )

    def test_production_wide_merges_new_submissions_from_the_feed(self) -> None:
        self.mirror(self.server.admin_key)
        self.assert_equals_the_api(self.server.admin_key)
        vendor = client(self.server.vendor_key)
        sent = vendor.submit_turnover(self.server.refs["dl-101-comp"], [("late.jpg", jpeg(73))], title="Late")
        vendor.close()
        self.proxy.seen.clear()
        counts = self.mirror(self.server.admin_key)
        self.assertEqual(counts.get("submitted_fetched"), 1)
        asked = [r["path"] for r in self.proxy.seen if r["path"].startswith("/api/v1/submissions")]
        self.assertTrue(asked and all("updated_since=" in p for p in asked), asked)
        self.assertTrue((self.dir / "submissions" / str(sent["id"]) / f"{sent['media'][0]['id']}-late.jpg").is_file())
        self.assert_equals_the_api(self.server.admin_key)

    def test_files_it_did_not_write_are_never_touched(self) -> None:
        vendor = client(self.server.vendor_key)
        entry = next(iter(vendor.list_bundles()))
        vendor.close()
        theirs = self.dir / "bundles" / entry["kind"] / f"{entry['node_id']}.json"
        theirs.parent.mkdir(parents=True)
        theirs.write_text("my own notes, not a bundle\n")
        (self.dir / "notes.txt").write_text("keep me\n")
        counts = self.mirror(self.server.vendor_key)
        self.assertEqual(counts.get("left_alone"), 1)
        self.assertEqual(theirs.read_text(), "my own notes, not a bundle\n")
        self.assertEqual((self.dir / "notes.txt").read_text(), "keep me\n")

    def test_a_revoked_grant_takes_away_what_it_brought_but_not_edits(self) -> None:
        eng = next(e for e in self.admin.list_engagements() if e["ref"] == "eng-pixel")
        refs = self.server.refs
        grants = [self.admin.create_grant(eng["id"], "scene", node_id=refs[r]) for r in ("sc103-3", "sc103-8")]
        self.mirror(self.server.vendor_key)
        first = self.dir / "bundles" / "scene" / f"{refs['sc103-3']}.json"
        edited = self.dir / "bundles" / "scene" / f"{refs['sc103-8']}.json"
        self.assertTrue(first.exists() and edited.exists())
        edited.write_text(edited.read_text() + "\n")
        for grant in grants:
            self.admin.revoke_grant(grant["id"])
        counts = self.mirror(self.server.vendor_key)
        self.assertFalse(first.exists(), "the mirror's own file goes with the grant")
        self.assertTrue(edited.exists(), "a file edited since is left alone")
        self.assertGreaterEqual(counts.get("removed", 0), 1)
        self.mirror(self.server.vendor_key)
        self.assert_equals_the_api(self.server.vendor_key)

    def test_interrupted_then_resumed(self) -> None:
        vendor = client(self.server.vendor_key)
        bundle = vendor.get_scene_bundle(self.server.refs["sc101-12"])
        media_id = next(r["media_id"] for a in bundle["assets"] for r in a["released_versions"] if r.get("media_id"))
        vendor.close()
        self.proxy.plan("stall:60", method="GET", path=f"/api/v1/media/{media_id}/content")
        env = dict(os.environ, PRODGRAPH_URL=self.proxy.url, PRODGRAPH_KEY=self.server.vendor_key, PYTHONPATH=str(CLIENT_DIR))
        cmd = [sys.executable, "-m", "prodgraph", "mirror", str(self.dir)]
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible
        )
        deadline = time.monotonic() + 60
        while not self.proxy.requests("GET", f"/api/v1/media/{media_id}/content") and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted", err)
        done_before = {r["path"] for r in self.proxy.seen if r["path"].endswith("/content")} - {
            f"/api/v1/media/{media_id}/content"
        }
        self.proxy.seen.clear()
        finish = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(finish.returncode, 0, finish.stderr)
        fetched_now = {r["path"] for r in self.proxy.seen if r["path"].endswith("/content")}
        self.assertIn(f"/api/v1/media/{media_id}/content", fetched_now)
        self.assertEqual(done_before & fetched_now, set(), "what the first run finished is not fetched again")
        self.assert_equals_the_api(self.server.vendor_key)

    def test_a_deleted_file_is_fetched_again_by_the_same_process(self) -> None:
        """What --follow does between syncs: one client, whose kept ETags must not hide a loss."""
        c = self.via(self.server.vendor_key)
        try:
            mirror = Mirror(c, self.dir)
            mirror.run()
            bundle = next(p for p in sorted((self.dir / "bundles").rglob("*.json")))
            image = next(p for p in sorted((self.dir / "media").iterdir()))
            image_bytes = image.read_bytes()
            bundle.unlink()
            image.unlink()
            self.assertEqual(mirror.lost(), {"bundles"})
            mirror.counts = {}
            counts = mirror.run()
        finally:
            c.close()
        self.assertEqual(counts.get("bundles_changed"), 1, "only the deleted bundle is written")
        self.assertEqual(counts.get("images_fetched"), 1, "only the deleted image is fetched")
        kind, node_id = bundle.parent.name, int(bundle.stem)
        api = client(self.server.vendor_key)
        self.assertEqual(bundle.read_bytes(), answered(api, kind, node_id))
        api.close()
        self.assertEqual(image.read_bytes(), image_bytes)
        self.assertEqual(mirror.lost(), set())

    def test_follow_restores_a_deleted_bundle_with_nothing_changed_on_the_server(self) -> None:
        env = dict(os.environ, PRODGRAPH_URL=self.server.url, PRODGRAPH_KEY=self.server.admin_key, PYTHONPATH=str(CLIENT_DIR))
        proc = subprocess.Popen(
            [sys.executable, "-m", "prodgraph", "mirror", str(self.dir), "--follow", "--interval", "1"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible,
        )
        lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
        try:
            self.assertIn("up to date", lines.get(timeout=120))
            bundle = next(p for p in sorted((self.dir / "bundles" / "scene").iterdir()))
            before = bundle.read_bytes()
            bundle.unlink()
            self.assertIn("up to date", lines.get(timeout=60), "a sync followed the deletion")
            self.assertEqual(bundle.read_bytes(), before, "restored, byte for byte")
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
            proc.stderr.close()  # type: ignore[union-attr]
        self.assertEqual(proc.returncode, 130)

    def test_follow_syncs_again_when_something_changes(self) -> None:
        env = dict(os.environ, PRODGRAPH_URL=self.server.url, PRODGRAPH_KEY=self.server.admin_key, PYTHONPATH=str(CLIENT_DIR))
        proc = subprocess.Popen(
            [sys.executable, "-m", "prodgraph", "mirror", str(self.dir), "--follow"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible,
        )
        try:
            first = proc.stderr.readline()  # type: ignore[union-attr]
            self.assertIn("up to date", first)
            label = f"Followed by the mirror {time.time()}"
            self.admin.create_asset(label)
            second = proc.stderr.readline()  # type: ignore[union-attr]
            self.assertIn("up to date", second)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130)
        state = json.loads((self.dir / ".prodgraph" / "mirror.json").read_text())
        head = self.admin.list_changes("now")["next_cursor"]
        self.assertEqual(state["cursor"], head, "the second sync caught up with the feed")

    def test_the_command_reports_on_one_line(self) -> None:
        env = dict(os.environ, PRODGRAPH_URL=self.server.url, PRODGRAPH_KEY=self.server.vendor_key, PYTHONPATH=str(CLIENT_DIR))
        done = subprocess.run(
            [sys.executable, "-m", "prodgraph", "mirror", str(self.dir)],
            env=env, capture_output=True, text=True, timeout=120,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "")
        # one line, and one more for each review of the vendor's submissions it had not seen
        lines = [x for x in done.stderr.splitlines() if not x.startswith("prodgraph mirror: review: ")]
        self.assertEqual(len(lines), 1, lines)
        self.assertRegex(lines[0], r"^prodgraph mirror .*: up to date in [\d.]+ s — \d+ bundles")


if __name__ == "__main__":
    unittest.main()
