"""Downloads: streamed to disk, resumed after a cut, verified by SHA-256."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from faults import FaultProxy
from live import client, live

import prodgraph
from prodgraph._download import file_name


class Downloads(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = client()
        bundle = cls.c.get_scene_bundle(cls.server.refs["sc101-12"])
        cls.version = next(r for a in bundle["assets"] for r in a["released_versions"] if r.get("media_id"))
        cls.meta = cls.c.get_media(cls.version["media_id"])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.close()

    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="prodgraph-dl-"))
        self.proxy = FaultProxy(self.server.url)
        self.via = prodgraph.Client(self.proxy.url, self.server.admin_key)
        self.via._transport.backoff = 0.05

    def tearDown(self) -> None:
        self.via.close()
        self.proxy.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def sha(self, path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    def test_download_media_verifies(self) -> None:
        path = self.c.download_media(self.meta["id"], self.dir / "still.jpg")
        self.assertEqual(path, self.dir / "still.jpg")
        self.assertEqual(self.sha(path), self.meta["sha256"])
        self.assertEqual(path.stat().st_size, self.meta["size"])
        self.assertFalse((self.dir / "still.jpg.part").exists())

    def test_a_cut_download_resumes_with_range_and_verifies(self) -> None:
        content = f"/api/v1/media/{self.meta['id']}/content"
        self.proxy.plan("cut_body", method="GET", path=content)
        path = self.via.download_media(self.meta["id"], self.dir / "cut.jpg")
        self.assertEqual(self.sha(path), self.meta["sha256"])
        tries = self.proxy.requests("GET", content)
        self.assertEqual(len(tries), 2)
        self.assertNotIn("Range", tries[0]["headers"])
        self.assertEqual(tries[1]["headers"].get("Range"), f"bytes={self.meta['size'] // 2}-")

    def test_a_part_left_by_an_earlier_run_is_resumed(self) -> None:
        whole = self.c.get_media_content(self.meta["id"])
        (self.dir / "later.jpg.part").write_bytes(whole[:1000])
        content = f"/api/v1/media/{self.meta['id']}/content"
        path = self.via.download_media(self.meta["id"], self.dir / "later.jpg")
        self.assertEqual(self.sha(path), self.meta["sha256"])
        self.assertEqual(self.proxy.requests("GET", content)[0]["headers"].get("Range"), "bytes=1000-")

    def test_corrupt_bytes_are_refused_and_nothing_is_kept(self) -> None:
        self.proxy.plan("corrupt_body", method="GET", path=f"/api/v1/media/{self.meta['id']}/content")
        with self.assertRaises(prodgraph.ChecksumMismatch):
            self.via.download_media(self.meta["id"], self.dir / "bad.jpg")
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), [])

    def test_a_file_already_there_is_not_fetched_again(self) -> None:
        self.c.download_media(self.meta["id"], self.dir / "same.jpg")
        self.via.download_media(self.meta["id"], self.dir / "same.jpg")
        self.assertEqual(self.proxy.requests("GET", f"/api/v1/media/{self.meta['id']}/content"), [])

    def test_download_media_path_through_a_ticket(self) -> None:
        media_path = self.version["media_path"]
        self.proxy.plan("cut_body", method="GET", path=media_path)
        path = self.via.download_media_path(media_path, self.dir)
        self.assertEqual(self.sha(path), self.meta["sha256"])
        self.assertEqual(path.parent, self.dir)
        tries = self.proxy.requests("GET", media_path)
        self.assertEqual(len(tries), 2)
        self.assertNotIn("Authorization", tries[0]["headers"], "the ticket route needs no key")
        self.assertEqual(path.name, "mara-quinn-v1.jpg", "the server's name, by download_media's rule")

    def test_a_path_ending_in_a_separator_is_a_folder_made_for_the_file(self) -> None:
        dest = str(self.dir / "new" / "deeper") + "/"
        path = self.c.download_media(self.meta["id"], dest)
        self.assertEqual(path, self.dir / "new" / "deeper" / f"{self.meta['id']}-mara-quinn-v1.jpg")
        self.assertEqual(self.sha(path), self.meta["sha256"])
        self.assertEqual(sorted(p.name for p in path.parent.iterdir()), [path.name], "no part file left")
        again = self.c.download_media(self.meta["id"], self.dir / "new" / "deeper")  # an existing folder
        self.assertEqual(again, path)
        ticketed = self.c.download_media_path(self.version["media_path"], str(self.dir / "by-path") + os.sep)
        self.assertEqual(ticketed, self.dir / "by-path" / "mara-quinn-v1.jpg")

    def test_download_media_names_a_file_as_the_mirror_does(self) -> None:
        from prodgraph.mirror import Mirror

        mirrored = self.dir / "mirror"
        Mirror(self.c, mirrored).run()
        (image,) = (mirrored / "media").glob(f"{self.meta['id']}-*")
        self.assertEqual(self.c.download_media(self.meta["id"], self.dir).name, image.name)
        self.assertEqual(
            [file_name(7, "reel1.EDL", "application/octet-stream"), file_name(8, "Dr. Fenn — v2", "image/png"),
             file_name(9, "Plate v1.2", "image/x-exr"), file_name(10, "***", "")],
            ["7-reel1.edl", "8-dr-fenn-v2.png", "9-plate-v1-2.exr", "10-media"],
        )

    def test_vendor_downloads_by_id(self) -> None:
        vendor = client(self.server.vendor_key)
        path = vendor.download_media(self.meta["id"], self.dir / "vendor.jpg")
        self.assertEqual(self.sha(path), self.meta["sha256"])
        vendor.close()


if __name__ == "__main__":
    unittest.main()
