"""Lists: the lazy walk page by page equals the whole list, on every list that pages."""

from __future__ import annotations

import unittest
import uuid
from datetime import datetime, timedelta, timezone

from live import client, live


class Paging(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = client()
        for i in range(3):  # a few more rows, so small pages are many
            cls.c.create_asset(f"Paged {i} {uuid.uuid4().hex[:6]}", kind="prop")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.close()

    def whole(self, path: str, **query: object) -> list:
        """The list in one request, without `limit` (how the API answers a whole list)."""
        return self.c._get(path, query or None)

    def test_pages_equal_the_whole_list(self) -> None:
        cases = [
            ("/assets", self.c.list_assets, {}),
            ("/assets", self.c.list_assets, {"kind": "prop"}),
            ("/scenes", self.c.list_scenes, {}),
            ("/approvals", self.c.list_approvals, {}),
            ("/deliveries", self.c.list_deliveries, {}),
        ]
        for path, method, query in cases:
            with self.subTest(path=path, query=query):
                walk = method(limit=2, **query)
                rows = list(walk)
                self.assertEqual(rows, self.whole(path, **query))
                self.assertGreater(walk.pages_fetched, 2)

    def test_pages_yields_whole_pages(self) -> None:
        pages = list(self.c.list_scenes(limit=3).pages())
        self.assertTrue(all(1 <= len(p) <= 3 for p in pages))
        self.assertTrue(all(len(p) == 3 for p in pages[:-1]))
        self.assertEqual([r for p in pages for r in p], self.whole("/scenes"))

    def test_lazy_a_page_at_a_time(self) -> None:
        walk = self.c.list_assets(limit=2)
        self.assertEqual(walk.pages_fetched, 0)
        next(walk)
        next(walk)
        self.assertEqual(walk.pages_fetched, 1)
        next(walk)
        self.assertEqual(walk.pages_fetched, 2)
        rest = [r for p in walk.pages() for r in p]
        self.assertEqual(len(rest) + 3, len(self.whole("/assets")))

    def test_activity_walks_past_its_first_page(self) -> None:
        newest_first = list(self.c.list_activity(limit=4))
        self.assertEqual(newest_first, list(self.c.list_activity()))
        self.assertGreater(len(newest_first), 4)
        self.assertEqual(len({e["id"] for e in newest_first}), len(newest_first))

    def test_updated_since_takes_a_datetime(self) -> None:
        since = datetime.now(timezone.utc) - timedelta(seconds=5)
        label = f"Fresh {uuid.uuid4().hex[:6]}"
        self.c.create_asset(label)
        fresh = [a["label"] for a in self.c.list_assets(updated_since=since)]
        self.assertIn(label, fresh)
        with self.assertRaises(ValueError):
            list(self.c.list_assets(updated_since=datetime.now()))  # no zone: refused before sending

    def test_vendor_lists_page_too(self) -> None:
        vendor = client(self.server.vendor_key)
        self.assertEqual(list(vendor.list_turnovers(limit=1)), vendor._get("/turnovers"))
        vendor.close()


if __name__ == "__main__":
    unittest.main()
