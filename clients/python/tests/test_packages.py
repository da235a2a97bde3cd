"""The turnover both ways, from Python: an organisation engaged, a package uploaded (streamed,
with progress), sent, pulled by the vendor's mirror (verified, resumed, files taken out removed),
the vendor's submission reviewed and the review reported by the mirror."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
import tracemalloc
import unittest
import uuid
from pathlib import Path
from typing import Any, Dict, List, Tuple

from faults import FaultProxy
from live import client, jpeg, live
from test_webhooks import Receiver

import prodgraph
from prodgraph import verify_webhook
from prodgraph._download import file_name
from prodgraph.mirror import Mirror, Progress

# A package file far larger than what the client may hold while it sends it.
BIG = 64 * 1024 * 1024
MEMORY_ALLOWED = 8 * 1024 * 1024


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Packages(unittest.TestCase):
    """One new vendor, engaged from Python, with a submit grant on a delivery no one else holds."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.admin = client()
        tag = uuid.uuid4().hex[:6]
        cls.org = cls.admin.add_organisation(f"Py Package Co {tag}", f"org-py-{tag}")
        cls.eng = cls.admin.create_engagement(f"eng-py-{tag}", cls.org["id"], ["vfx"])
        cls.delivery = cls.server.refs["dl-101-preview"]  # a draft, granted to no one in the demo
        cls.admin.create_grant(cls.eng["id"], "delivery", delivery_id=cls.delivery, access="submit")
        cls.key = cls.admin.create_key(
            f"py package vendor {tag}", scopes=["read", "submit:turnover"], engagement_id=cls.eng["id"]
        )["token"]
        cls.tmp = Path(tempfile.mkdtemp(prefix="prodgraph-packages-"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.admin.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self) -> None:
        self.proxy = FaultProxy(self.server.url)
        self.dir = Path(tempfile.mkdtemp(prefix="prodgraph-mirror-", dir=self.tmp))

    def tearDown(self) -> None:
        self.proxy.close()

    def status(self) -> str:
        return next(d for d in self.admin.list_deliveries() if d["id"] == self.delivery)["status"]

    def move(self, target: str) -> None:
        """To ``ready`` or ``sent`` by allowed moves, from wherever the delivery stands."""
        path = {
            ("draft", "ready"): ["ready"], ("blocked", "ready"): ["ready"], ("sent", "ready"): ["ready"],
            ("draft", "sent"): ["ready", "sent"], ("blocked", "sent"): ["sent"], ("ready", "sent"): ["sent"],
        }.get((self.status(), target), [])
        for status in path:
            self.admin.set_delivery_status(self.delivery, status, note=f"py: {status}")

    def mirror(self, **kwargs: Any) -> Tuple[Dict[str, int], Mirror]:
        c = prodgraph.Client(self.proxy.url, self.key)
        c._transport.backoff = 0.05
        try:
            run = Mirror(c, self.dir, **kwargs)
            return run.run(), run
        finally:
            c.close()

    def package_dir(self) -> Path:
        (folder,) = (self.dir / "turnovers").iterdir()
        return folder

    def fetched(self) -> List[str]:
        return [r["path"] for r in self.proxy.seen if r["path"].endswith("/content")]

    # -- the production side --------------------------------------------------------------------

    def test_an_organisation_twice_is_a_conflict(self) -> None:
        with self.assertRaises(prodgraph.Conflict):
            self.admin.add_organisation(self.org["name"].upper())
        self.assertIn(self.org["id"], {o["id"] for o in self.admin.list_organisations()})

    def test_a_big_package_file_is_streamed_from_disk_with_progress(self) -> None:
        url = self.server.serve_another(PRODGRAPH_MAX_UPLOAD_BYTES=str(2 * BIG))
        big = self.tmp / "ep101_sh010_plate.jpg"
        with open(big, "wb") as f:
            f.write(jpeg(31))
            f.truncate(BIG)  # a hole: zeros read back, no disk written
        seen: List[Tuple[int, Any]] = []
        c = prodgraph.Client(url, self.server.admin_key)
        tracemalloc.start()
        try:
            added = c.add_delivery_files(self.delivery, big, progress=lambda sent, total: seen.append((sent, total)))
            _, peak = tracemalloc.get_traced_memory()
            (file,) = added["files"]
            c.remove_delivery_file(self.delivery, file["id"])
        finally:
            tracemalloc.stop()
            c.close()
        self.assertEqual((file["label"], file["size"]), ("ep101_sh010_plate.jpg", BIG))
        self.assertLess(peak, MEMORY_ALLOWED, f"the client held {peak / 2**20:.1f} MB at its peak")
        sent = [s for s, _ in seen]
        self.assertEqual(sent, sorted(sent), "progress only goes forward")
        self.assertGreater(len(seen), 100, "reported as the chunks leave, not once at the end")
        self.assertEqual({t for _, t in seen}, {seen[-1][0]}, "the total is known up front: the body's length")
        self.assertGreater(seen[-1][0], BIG)

    def test_labels_pair_with_their_files_and_a_bad_move_names_the_allowed_ones(self) -> None:
        plate, edl = jpeg(32), b"TITLE: EP101 PREVIEW\n001  AX  V  C  01:00:00:00 01:00:01:00\n"
        added = self.admin.add_delivery_files(
            self.delivery,
            [("plate.jpg", plate), ("cut.edl", io.BytesIO(edl))],
            labels=[None, f"ep101_preview_{uuid.uuid4().hex[:4]}.edl"],
        )
        self.assertEqual(added["delivery_id"], self.delivery)
        self.assertEqual(added["files"][0]["label"], "plate.jpg", "no label: its file name")
        self.assertTrue(added["files"][1]["label"].startswith("ep101_preview_"))
        self.assertEqual([f["sha256"] for f in added["files"]], [sha(plate), sha(edl)])
        with self.assertRaises(ValueError):
            self.admin.add_delivery_files(self.delivery, [plate], labels=["a.jpg", "b.jpg"])
        left = self.admin.remove_delivery_file(self.delivery, added["files"][0]["id"])
        self.assertNotIn(added["files"][0]["id"], {f["id"] for f in left["files"]})
        self.admin.remove_delivery_file(self.delivery, added["files"][1]["id"])
        status = self.status()
        with self.assertRaises(prodgraph.InvalidTransition) as refused:
            self.admin.set_delivery_status(self.delivery, "draft" if status in ("ready", "sent") else "accepted")
        self.assertEqual(refused.exception.code, "invalid_transition")
        self.assertIn("blocked", refused.exception.detail, "the detail names where it may go")

    def test_an_engagement_webhook_hears_its_turnover_and_carries_its_engagement(self) -> None:
        receiver = Receiver()
        hook = self.admin.create_webhook(receiver.url, engagement_id=self.eng["id"], after="now")
        try:
            self.assertEqual(hook["engagement_id"], self.eng["id"])
            self.move("sent")
            added = self.admin.add_delivery_files(self.delivery, [("hooked.jpg", jpeg(70))])["files"]
            self.admin.remove_delivery_file(self.delivery, added[0]["id"])
            header, raw = receiver.got.get(timeout=30)
            self.assertTrue(verify_webhook(hook["secret"], header, raw))
            body = json.loads(raw)
            self.assertEqual(body["engagement_id"], self.eng["id"])
            self.assertIn(body["change"]["kind"], {"delivery", "media"})
        finally:
            self.admin.remove_webhook(hook["id"])
            receiver.close()

    # -- the vendor's mirror ----------------------------------------------------------------------

    def test_the_mirror_pulls_a_sent_package_end_to_end(self) -> None:
        plates = {f"sh{n:03d}_plate.jpg": jpeg(40 + n) for n in range(1, 4)}
        lut = b"TITLE \"show\"\nLUT_3D_SIZE 2\n" + b"0 0 0\n" * 8
        added = self.admin.add_delivery_files(self.delivery, [*plates.items(), ("show.cube", lut)])["files"]
        by_label = {f["label"]: f for f in added}
        try:
            self._walk(by_label, {**plates, "show.cube": lut})
        finally:
            for f in added:
                self.admin.remove_delivery_file(self.delivery, f["id"])

    def _walk(self, files: Dict[str, Dict[str, Any]], data: Dict[str, bytes]) -> None:
        # a package not yet sent stays private: nothing to pull
        self.move("ready")
        counts, _ = self.mirror()
        self.assertEqual(counts.get("package_fetched", 0), 0)
        self.assertEqual(sorted(self.dir.glob("turnovers/*/*")), [])

        self.move("sent")
        counts, _ = self.mirror()
        self.assertEqual(counts["package_fetched"], len(files))
        folder = self.package_dir()
        self.assertEqual(folder.name, f"{self.delivery}-episode-101-preview-cut")
        for label, f in files.items():
            path = folder / file_name(f["id"], label, f["content_type"])
            self.assertEqual(path.read_bytes(), data[label], label)
            self.assertEqual(sha(path.read_bytes()), f["sha256"])
        self.assertEqual(folder.joinpath(file_name(files["show.cube"]["id"], "show.cube")).suffix, ".cube")

        # nothing changed: nothing fetched (and the list itself answered 304)
        self.proxy.seen.clear()
        counts, _ = self.mirror()
        self.assertEqual((counts.get("package_fetched", 0), self.fetched()), (0, []))
        turnovers = [r for r in self.proxy.seen if r["path"].startswith("/api/v1/turnovers")]
        self.assertEqual(len(turnovers), 1)
        self.assertIn("If-None-Match", turnovers[0]["headers"])

        # a file taken out of the package is removed here; the others stay
        out = files.pop("sh002_plate.jpg")
        self.admin.remove_delivery_file(self.delivery, out["id"])
        counts, _ = self.mirror()
        self.assertFalse((folder / file_name(out["id"], "sh002_plate.jpg", out["content_type"])).exists())
        self.assertGreaterEqual(counts.get("removed", 0), 1)
        self.assertEqual(len(list(folder.iterdir())), len(files))

        # a part left by a cut download is resumed from where it stopped; a part of other bytes
        # is dropped and the file fetched whole again
        one, two = files["sh001_plate.jpg"], files["sh003_plate.jpg"]
        path_one = folder / file_name(one["id"], "sh001_plate.jpg", one["content_type"])
        path_two = folder / file_name(two["id"], "sh003_plate.jpg", two["content_type"])
        half = len(data["sh001_plate.jpg"]) // 2
        path_one.unlink()
        Path(str(path_one) + ".part").write_bytes(data["sh001_plate.jpg"][:half])
        path_two.unlink()
        Path(str(path_two) + ".part").write_bytes(b"\0" * 100)
        self.proxy.seen.clear()
        counts, _ = self.mirror()
        self.assertEqual(path_one.read_bytes(), data["sh001_plate.jpg"])
        self.assertEqual(path_two.read_bytes(), data["sh003_plate.jpg"])
        ranges = [r["headers"].get("Range") for r in self.proxy.requests("GET", f"/api/v1/media/{one['id']}/content")]
        self.assertEqual(ranges, [f"bytes={half}-"], "resumed, not fetched again")
        self.assertEqual(len(self.proxy.requests("GET", f"/api/v1/media/{two['id']}/content")), 2)
        self.assertEqual(sorted(p.name for p in folder.iterdir() if p.name.endswith(".part")), [])

        # the mirror's own record lost: files already here with the right bytes are kept, not fetched
        (self.dir / ".prodgraph" / "mirror.json").unlink()
        self.proxy.seen.clear()
        counts, _ = self.mirror()
        self.assertEqual(self.fetched(), [], "a complete file with the right hash is not fetched again")

        # recalled: the package is no longer shared, and leaves the folder
        self.move("ready")
        counts, _ = self.mirror()
        self.assertFalse(folder.exists())
        self.assertEqual(counts.get("left_alone", 0), 0, "its lost record did not make its own files strangers")

    def test_the_mirror_reports_reviews_of_its_own_submissions(self) -> None:
        self.move("sent")
        vendor = client(self.key)
        submitted = vendor.submit_turnover(self.delivery, [("preview_v1.jpg", jpeg(60))], title="Preview v1")
        vendor.close()
        self.mirror()  # not yet reviewed: nothing to report
        self.admin.review_submission(submitted["id"], "changes_requested", "Trim the tail by 12 frames")
        log = io.StringIO()
        counts, run = self.mirror(progress=Progress(quiet=False, stream=log))
        self.assertEqual(counts.get("reviews_new"), 1)
        (review,) = [r for r in run.new_reviews if r["submission_id"] == submitted["id"]]
        self.assertEqual((review["decision"], review["note"]), ("changes_requested", "Trim the tail by 12 frames"))
        self.assertIn(f'review: submission {submitted["id"]} "Preview v1"', log.getvalue())
        self.assertIn("changes requested", log.getvalue())
        self.assertRegex(log.getvalue(), r"\d+ reviews? \(1 new\)")
        rows = json.loads((self.dir / "turnovers.json").read_text())
        own = next(s for r in rows for s in r["submissions"] if s["id"] == submitted["id"])
        self.assertEqual(own["review"]["decision"], "changes_requested")

        counts, run = self.mirror()
        self.assertEqual((counts.get("reviews_new", 0), run.new_reviews), (0, []), "a review is reported once")
        reviewed = self.admin.review_submission(submitted["id"], "accepted", "Lovely")
        self.assertEqual(reviewed["status"], "accepted")
        counts, run = self.mirror()
        self.assertEqual([r["decision"] for r in run.new_reviews], ["accepted"], "a second review is news again")


if __name__ == "__main__":
    unittest.main()
