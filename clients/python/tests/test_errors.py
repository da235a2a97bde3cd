"""The server's refusals as the client's exceptions, from a live server."""

from __future__ import annotations

import os
import tempfile
import unittest
import uuid

from live import MAX_UPLOAD_BYTES, client, live, tokens_in_log

import prodgraph


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.close()

    def test_unauthorized(self) -> None:
        bad = client("pgk_AAAAAAAA_" + "x" * 43)
        with self.assertRaises(prodgraph.Unauthorized) as caught:
            bad.get_production()
        self.assertEqual(caught.exception.status, 401)
        self.assertEqual(caught.exception.code, "unauthorized")
        self.assertEqual(caught.exception.response.status, 401)
        bad.close()

    def test_scope_missing(self) -> None:
        reader = self.c.create_key("py read-only", scopes=["read"])
        ro = client(reader["token"])
        with self.assertRaises(prodgraph.ScopeMissing) as caught:
            ro.create_asset("nope")
        self.assertIsInstance(caught.exception, prodgraph.Forbidden)
        self.assertEqual(caught.exception.code, "scope_missing")
        ro.close()

    def test_engagement_door(self) -> None:
        vendor = client(self.server.vendor_key)
        with self.assertRaises(prodgraph.EngagementDoor):
            vendor.get_production()
        vendor.close()

    def test_not_found_and_route_not_found(self) -> None:
        with self.assertRaises(prodgraph.NotFound) as caught:
            self.c.get_asset(2147483647)
        self.assertEqual(caught.exception.code, "not_found")
        with self.assertRaises(prodgraph.RouteNotFound):
            self.c._get("/no-such-endpoint")

    def test_validation_error_names_its_field(self) -> None:
        with self.assertRaises(prodgraph.ValidationError) as caught:
            self.c.create_asset("x", status="sideways")
        self.assertEqual(caught.exception.field, "status")
        self.assertEqual(caught.exception.body.get("field"), "status", "the server names the field itself")
        self.assertEqual(caught.exception.code, "invalid_field")
        with self.assertRaises(prodgraph.ValidationError) as caught:
            list(self.c.list_assets(updated_since="yesterday"))
        self.assertEqual(caught.exception.field, "updated_since")

    def test_idempotency_key_reused_for_another_request(self) -> None:
        key = str(uuid.uuid4())
        self.c.create_asset(f"Keyed {key[:6]}", idempotency_key=key)
        again = self.c.create_asset(f"Keyed {key[:6]}", idempotency_key=key)
        self.assertEqual(self.c.last_response.headers.get("Idempotent-Replayed"), "true")
        self.assertTrue(again["node_id"])
        with self.assertRaises(prodgraph.IdempotencyKeyReused):
            self.c.create_asset("Something else", idempotency_key=key)

    def test_conflict_on_a_stale_step(self) -> None:
        pending = [a for a in self.c.list_approvals(status="pending") if a["mode"] == "chain"]
        if not pending:
            self.skipTest("no pending chain left in the demo")
        approval = pending[-1]
        step = approval["current_step"]
        person = approval["steps"][step]["person_name"]
        with self.assertRaises(prodgraph.Conflict):
            self.c.decide_approval(approval["id"], "approved", decided_by=person, step=step + 1)

    def test_payload_too_large_while_still_sending(self) -> None:
        made = self.c.create_asset(f"Big {uuid.uuid4().hex[:6]}")
        with tempfile.NamedTemporaryFile(suffix=".jpg", delete=False) as f:
            f.write(os.urandom(MAX_UPLOAD_BYTES * 4))
        try:
            with self.assertRaises(prodgraph.PayloadTooLarge) as caught:
                self.c.land_asset_version(made["node_id"], f.name)
            self.assertEqual(caught.exception.code, "too_large")
        finally:
            os.unlink(f.name)

    def test_unsupported_media_type(self) -> None:
        made = self.c.create_asset(f"Text {uuid.uuid4().hex[:6]}")
        with self.assertRaises(prodgraph.UnsupportedMediaType):
            self.c.land_asset_version(made["node_id"], ("notes.txt", b"not an image at all"))

    def test_no_key_or_ticket_in_the_servers_log(self) -> None:
        self.c.get_production()
        ticket = self.c.get_media_ticket()["ticket"]
        bundle = self.c.get_scene_bundle(self.server.refs["sc101-12"])
        path = next(r["media_path"] for a in bundle["assets"] for r in a["released_versions"] if r.get("media_path"))
        self.c.get_media_file_by_ticket(path, ticket)
        self.assertNotIn(ticket, self.c.last_response.url, "the client masks the ticket too")
        secrets = [self.server.admin_key, self.server.vendor_key, ticket]
        self.assertEqual(tokens_in_log(self.server, secrets), [])

    def test_a_client_needs_a_server(self) -> None:
        saved = os.environ.pop("PRODGRAPH_URL", None)
        try:
            with self.assertRaises(ValueError):
                prodgraph.Client()
        finally:
            if saved is not None:
                os.environ["PRODGRAPH_URL"] = saved

    def test_repr_never_shows_the_key(self) -> None:
        self.assertNotIn(self.server.admin_key, repr(self.c))
        self.assertNotIn(self.server.admin_key[:12], repr(self.c))


if __name__ == "__main__":
    unittest.main()
