"""The change feed: a page, a follower that hears a write while it waits, resuming by cursor."""

from __future__ import annotations

import threading
import time
import unittest
import uuid

from faults import FaultProxy
from live import client, live

import prodgraph


class Changes(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.close()

    def test_list_changes_pages_by_cursor(self) -> None:
        first = self.c.list_changes(limit=2)
        self.assertEqual(len(first["changes"]), 2)
        self.assertTrue(first["more"])
        second = self.c.list_changes(first["next_cursor"], 2)
        self.assertNotEqual(first["changes"][0]["cursor"], second["changes"][0]["cursor"])
        head = self.c.list_changes("now")
        self.assertEqual(head["changes"], [])

    def test_follow_changes_sees_a_write_made_while_it_waits(self) -> None:
        feed = self.c.follow_changes(after="now", wait=20)
        label = f"Followed {uuid.uuid4().hex[:6]}"
        made: dict = {}
        writer = client()

        def write_later() -> None:
            time.sleep(1.0)
            made.update(writer.create_asset(label))

        thread = threading.Thread(target=write_later)
        thread.start()
        started = time.monotonic()
        change = next(feed)
        elapsed = time.monotonic() - started
        thread.join()
        writer.close()
        self.assertEqual((change["kind"], change["op"], change["id"]), ("asset", "created", made["node_id"]))
        self.assertGreaterEqual(elapsed, 0.9, "it waited for the write")
        self.assertLess(elapsed, 10, "the long poll answered when the write committed")
        self.assertEqual(feed.cursor, change["cursor"])

    def test_now_is_when_the_feed_is_opened_so_a_write_before_iterating_is_seen(self) -> None:
        """A script opens the feed, writes, then iterates: it sees its own write."""
        reader = client()
        feed = reader.follow_changes(after="now", wait=1)
        self.assertNotEqual(feed.cursor, "now", "resolved by the call itself")
        made = self.c.create_asset(f"Own write {uuid.uuid4().hex[:6]}")
        got: dict = {}
        thread = threading.Thread(target=lambda: got.update(next(feed)), daemon=True)
        thread.start()
        thread.join(20)  # before the fix the feed started after the write and waited for ever
        self.assertEqual((got.get("kind"), got.get("op"), got.get("id")), ("asset", "created", made["node_id"]))
        reader.close()

    def test_a_persisted_cursor_resumes_exactly_there(self) -> None:
        start = self.c.list_changes("now")["next_cursor"]
        labels = [f"Resume {i} {uuid.uuid4().hex[:6]}" for i in range(3)]
        ids = [self.c.create_asset(label)["node_id"] for label in labels]
        feed = self.c.follow_changes(after=start, wait=1)
        first = next(feed)
        self.assertEqual(first["id"], ids[0])
        saved = feed.cursor
        resumed = self.c.follow_changes(after=saved, wait=1)
        self.assertEqual([next(resumed)["id"], next(resumed)["id"]], ids[1:])

    def test_the_follower_waits_out_a_dropped_connection(self) -> None:
        proxy = FaultProxy(self.server.url)
        via = prodgraph.Client(proxy.url, self.server.admin_key, retries=0)
        start = self.c.list_changes("now")["next_cursor"]
        made = self.c.create_asset(f"Across a drop {uuid.uuid4().hex[:6]}")
        proxy.plan("drop_after_answer", method="GET", path="/api/v1/changes")
        proxy.plan("status:503", method="GET", path="/api/v1/changes", retry_after=0)
        feed = via.follow_changes(after=start, wait=1)
        self.assertEqual(next(feed)["id"], made["node_id"])
        self.assertEqual(len(proxy.requests("GET", "/api/v1/changes")), 3)
        self.assertTrue(all(f"after={start}" in r["path"] for r in proxy.requests("GET", "/api/v1/changes")))
        via.close()
        proxy.close()

    def test_a_cursor_the_server_did_not_issue_raises(self) -> None:
        with self.assertRaises(prodgraph.ValidationError) as caught:
            next(self.c.follow_changes(after="c1.bogus", wait=1))
        self.assertEqual(caught.exception.field, "after")


if __name__ == "__main__":
    unittest.main()
