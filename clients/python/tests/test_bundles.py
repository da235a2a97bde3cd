"""Bundles are conditional, and a vendor key sees its grants and nothing more."""

from __future__ import annotations

import unittest

from live import client, live

import prodgraph


class Bundles(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.refs = cls.server.refs
        cls.c = client()
        cls.vendor = client(cls.server.vendor_key)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.close()
        cls.vendor.close()

    def test_a_repeat_is_a_304_with_the_kept_document(self) -> None:
        for get, ref in ((self.vendor.get_scene_bundle, "sc101-12"), (self.vendor.get_character_bundle, "ch-haldane")):
            with self.subTest(ref=ref):
                first = get(self.refs[ref])
                self.assertEqual(self.vendor.last_response.status, 200)
                etag = self.vendor.last_response.headers.get("ETag")
                again = get(self.refs[ref])
                self.assertEqual(self.vendor.last_response.status, 304)
                self.assertEqual(again, first)
                self.assertEqual(self.vendor.last_response.headers.get("ETag"), etag)
                again["edited"] = True  # the caller's copy: the kept one is untouched
                self.assertNotIn("edited", get(self.refs[ref]))

    def test_a_change_to_the_bundle_is_a_200_with_the_new_document(self) -> None:
        pending = {a["id"]: a for a in self.c.list_approvals(status="pending")}
        found = None
        for scene in self.c.list_scenes():
            bundle = self.c.get_scene_bundle(scene["node_id"])
            shown = [a["id"] for a in bundle["approvals"] if a["id"] in pending]
            if shown:
                found = (scene["node_id"], pending[shown[0]])
                break
        if found is None:
            self.skipTest("no pending approval left in any scene")
        scene_id, approval = found
        before = self.c.get_scene_bundle(scene_id)
        self.assertEqual(self.c.last_response.status, 304)
        step = approval["current_step"]
        person = approval["steps"][step]["person_name"]
        self.c.decide_approval(approval["id"], "changes", decided_by=person, step=step)
        after = self.c.get_scene_bundle(scene_id)
        self.assertEqual(self.c.last_response.status, 200)
        self.assertNotEqual(after, before)
        status = next(a["status"] for a in after["approvals"] if a["id"] == approval["id"])
        self.assertEqual(status, "changes_requested")
        self.c.get_scene_bundle(scene_id)
        self.assertEqual(self.c.last_response.status, 304)

    def test_vendor_out_of_reach_is_not_found(self) -> None:
        v = self.vendor
        v.get_scene_bundle(self.refs["sc101-12"])  # granted
        for ungranted in ("sc101-1", "sc102-21"):  # nobody's, and another vendor's
            with self.subTest(scene=ungranted), self.assertRaises(prodgraph.NotFound) as caught:
                v.get_scene_bundle(self.refs[ungranted])
            self.assertEqual(caught.exception.code, "not_found")
        with self.assertRaises(prodgraph.NotFound):
            v.get_character_bundle(self.refs["ch-agnes"])
        with self.assertRaises(prodgraph.NotFound):
            v.get_scene_bundle(2147483647)
        with self.assertRaises(prodgraph.EngagementDoor):
            list(v.list_assets())

    def test_vendor_media_is_clamped_to_its_bundles(self) -> None:
        mine = self.vendor.get_scene_bundle(self.refs["sc101-12"])
        media_id = next(r["media_id"] for a in mine["assets"] for r in a["released_versions"] if r.get("media_id"))
        self.assertEqual(self.vendor.get_media(media_id)["id"], media_id)
        theirs = self.c.get_character_bundle(self.refs["ch-agnes"])
        other = next(
            r["media_id"] for c in theirs["costumes"] for r in c["released_versions"] if r.get("media_id")
        )
        shown = {r.get("media_id") for a in mine["assets"] for r in a["released_versions"]}
        if other in shown:
            self.skipTest("the demo shares this image")
        with self.assertRaises(prodgraph.NotFound):
            self.vendor.get_media(other)
        with self.assertRaises(prodgraph.NotFound):
            self.vendor.get_media_content(other)

    def test_a_revoked_grant_is_gone_on_the_next_request(self) -> None:
        eng = next(e for e in self.c.list_engagements() if e["ref"] == "eng-pixel")
        scene = self.refs["sc101-4"]
        grant = self.c.create_grant(eng["id"], "scene", node_id=scene)
        self.assertEqual(self.vendor.get_scene_bundle(scene)["scene"]["node_id"], scene)
        self.c.revoke_grant(grant["id"])
        with self.assertRaises(prodgraph.NotFound):
            self.vendor.get_scene_bundle(scene)  # kept ETag or not, the clamp answers first


if __name__ == "__main__":
    unittest.main()
