"""Every method of the client against the live server, each answer checked against its type."""

from __future__ import annotations

import io
import json
import threading
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Set

from live import client, jpeg, live

import prodgraph
import prodgraph.types as T
from prodgraph._operations import OPERATIONS, snake
from shapes import problems

CALLED: Set[str] = set()


def recorded(c: prodgraph.Client) -> prodgraph.Client:
    """The client with every operation's method noting that it was called."""
    for op, *_ in OPERATIONS:
        name = snake(op)
        method = getattr(c, name)

        def wrapper(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            CALLED.add(_name)
            return _method(*args, **kwargs)

        setattr(c, name, wrapper)
    return c


class Surface(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = recorded(client())
        cls.vendor = recorded(client(cls.server.vendor_key))
        cls.refs = cls.server.refs

    def conforms(self, value: Any, tp: Any) -> Any:
        found = problems(value, tp)
        self.assertEqual(found, [], f"answer departs from {getattr(tp, '__name__', tp)}")
        return value

    def rows(self, paged: Any, tp: Any) -> list:
        rows = list(paged)
        for row in rows:
            self.conforms(row, tp)
        return rows

    def test_reads(self) -> None:
        c = self.c
        self.conforms(c.get_health(), T.Health)
        production = self.conforms(c.get_production(), T.Production)
        self.assertEqual(production["title"], "Nightfall")
        departments = self.rows(c.list_departments(), T.Department)
        self.conforms(c.get_department(departments[0]["slug"]), T.DepartmentDetail)
        scenes = self.rows(c.list_scenes(), T.Scene)
        self.assertEqual(len(scenes), production["stats"]["scenes"])
        assets = self.rows(c.list_assets(department="costume"), T.AssetRow)
        self.assertTrue(assets and all(a["department"] == "costume" for a in assets))
        self.conforms(c.get_asset(self.refs["ch-mara"]), T.Asset)
        self.assertTrue(self.rows(c.list_shoot_days(), T.ShootDay))
        self.assertTrue(self.rows(c.list_deliveries(), T.Delivery))
        self.assertTrue(self.rows(c.list_approvals(status="pending"), T.Approval))
        self.rows(c.list_script_changes(all_episodes=True), T.ScriptChange)
        self.assertTrue(self.rows(c.list_activity(limit=5), T.ActivityEntry))
        self.rows(c.list_jobs(), T.Job)
        self.assertTrue(self.rows(c.list_people(), T.Person))
        self.conforms(c.list_changes(limit=3), T.ChangesPage)

    def test_writes(self) -> None:
        c = self.c
        made = self.conforms(c.create_asset(f"Surface {uuid.uuid4().hex[:6]}", kind="prop"), T.CreatedAsset)
        self.conforms(c.add_asset_note(made["node_id"], "from the Python client", author="py"), T.Note)
        landed = c.land_asset_version(made["node_id"], ("still.jpg", io.BytesIO(jpeg(1))), note="v1", variant="Lookdev")
        self.conforms(landed, T.LandedVersion)
        self.assertEqual(landed["variant"], "Lookdev")
        pending = [a for a in c.list_approvals(status="pending") if a["mode"] == "decision"]
        approval = pending[0] if pending else next(iter(c.list_approvals(status="pending")))
        step = approval["current_step"]
        person = approval["steps"][step]["person_name"]
        decided = c.decide_approval(approval["id"], "changes", decided_by=person, note="again", step=step)
        self.conforms(decided, T.Approval)

    def test_round_trip(self) -> None:
        c, v = self.c, self.vendor
        entries = self.rows(v.list_bundles(), T.BundleEntry)
        self.assertIn(("scene", self.refs["sc101-12"]), {(e["kind"], e["node_id"]) for e in entries})
        scene = self.conforms(v.get_scene_bundle(self.refs["sc101-12"]), T.SceneBundle)
        self.conforms(v.get_character_bundle(self.refs["ch-haldane"]), T.CharacterBundle)
        turnovers = self.rows(v.list_turnovers(), T.Turnover)
        target = next(t for t in turnovers if t["can_submit"])
        sub = v.submit_turnover(target["id"], [("comp.jpg", jpeg(2))], title="Surface", note="from Python")
        self.conforms(sub, T.Submission)
        mine = self.rows(v.list_submissions(delivery_id=target["id"]), T.SubmissionRow)
        self.assertEqual(mine[-1]["id"], sub["id"])
        self.assertEqual([f["id"] for f in mine[-1]["media"]], [m["id"] for m in sub["media"]])
        self.assertIn(sub["id"], {s["id"] for s in c.list_submissions()}, "a production-wide key sees every one")
        self.conforms(v.get_purchase_orders(), T.PurchaseOrders)
        media_id = next(r["media_id"] for a in scene["assets"] for r in a["released_versions"] if r.get("media_id"))
        meta = self.conforms(v.get_media(media_id), T.Media)
        self.assertEqual(len(v.get_media_content(media_id)), meta["size"])
        ticket = self.conforms(c.get_media_ticket(), T.MediaTicket)
        path = next(r["media_path"] for a in scene["assets"] for r in a["released_versions"] if r.get("media_path"))
        self.assertEqual(len(c.get_media_file_by_ticket(path, ticket["ticket"])), meta["size"])

    def test_storage_vision_mcp(self) -> None:
        c = self.c
        path = f"shots/{uuid.uuid4().hex}.exr"
        event = {
            "event_type": "create",
            "path": path,
            "source": "manual",
            "dedupe_key": uuid.uuid4().hex,
            "detected_at": "2026-11-20T10:00:00Z",
        }
        result = self.conforms(c.post_storage_events("nightfall-main", [event]), T.StorageEventsResult)
        self.assertEqual(result["accepted"], 1)
        proxy = c.upload_media_proxy("nightfall-main", path, ("proxy.jpg", jpeg(3)))
        self.conforms(proxy, T.MediaProxyResult)
        tasks = self.rows(c.list_storage_tasks(), T.StorageTask)
        ack = c.ack_storage_task(tasks[-1]["id"], True, note="moved")
        self.conforms(ack, T.StorageTaskAck)
        token = self.conforms(c.create_vision_session_token("image-standard"), T.VisionSessionToken)
        self.assertEqual(token["model"], "image-standard")
        bundle = c.get_scene_bundle(self.refs["sc101-12"])
        version_id = next(r["id"] for a in bundle["assets"] for r in a["released_versions"] if r.get("media_id"))
        self.conforms(c.create_look_brief(version_id), T.LookBrief)
        answer = self.conforms(c.call_mcp("tools/list"), T.McpResponse)
        self.assertIn("get_scene_bundle", json.dumps(answer["result"]))

    def test_see_as_vendor(self) -> None:
        c = self.c
        self.assertEqual(self.conforms(c.get_current_key(), T.CurrentKey)["production"]["code"], "nightfall")
        self.assertIsNotNone(self.conforms(self.vendor.get_current_key(), T.CurrentKey)["engagement"])
        self.assertTrue(self.rows(c.list_organisations(), T.Organisation))
        targets = c.search_grant_targets("scene", "corridor")
        self.assertTrue(targets)
        for target in targets:
            self.conforms(target, T.GrantTarget)
        eng = next(e for e in c.list_engagements() if e["ref"] == "eng-pixel")
        view = self.conforms(c.get_engagement_view(eng["id"]), T.EngagementView)
        scene = next(b for b in view["bundles"] if b["kind"] == "scene")
        character = next(b for b in view["bundles"] if b["kind"] == "character")
        bundle = self.conforms(c.get_engagement_scene_bundle(eng["id"], scene["node_id"]), T.SceneBundle)
        self.assertEqual(bundle, self.vendor.get_scene_bundle(scene["node_id"]))
        self.conforms(c.get_engagement_character_bundle(eng["id"], character["node_id"]), T.CharacterBundle)
        media_id = next(r["media_id"] for a in bundle["assets"] for r in a["released_versions"] if r.get("media_id"))
        self.assertEqual(c.get_engagement_media_content(eng["id"], media_id), self.vendor.get_media_content(media_id))

    def test_admin(self) -> None:
        c = self.c
        engagements = self.rows(c.list_engagements(), T.Engagement)
        self.assertTrue(any(e["ref"] == "eng-pixel" for e in engagements))
        made = self.conforms(c.create_engagement(f"eng-{uuid.uuid4().hex[:6]}", self.refs["org-meridian"]), T.Engagement)
        self.assertEqual(self.conforms(c.get_engagement(made["id"]), T.Engagement), made)
        grant = self.conforms(c.create_grant(made["id"], "scene", node_id=self.refs["sc101-1"]), T.Grant)
        self.assertTrue(self.rows(c.list_grants(engagement_id=made["id"]), T.Grant))
        self.assertIsNotNone(self.conforms(c.revoke_grant(grant["id"]), T.Grant)["revoked_at"])
        key = self.conforms(c.create_key("py surface", scopes=["read"]), T.CreatedKey)
        self.assertTrue(key["token"])
        self.assertTrue(any(k["id"] == key["id"] for k in self.rows(c.list_keys(), T.Key)))
        self.conforms(c.revoke_key(key["id"]), T.Key)
        bound = self.conforms(c.create_key("py vendor", engagement_id=made["id"]), T.CreatedKey)
        own = self.rows(c.list_keys(engagement_id=made["id"]), T.Key)
        self.assertEqual([k["id"] for k in own], [bound["id"]])
        self.conforms(c.revoke_key(bound["id"]), T.Key)
        self.conforms(c.archive_engagement(made["id"]), T.Engagement)
        hook = self.conforms(c.create_webhook(_dead_receiver(), kinds=["asset"], after="now"), T.CreatedWebhook)
        self.assertTrue(any(w["id"] == hook["id"] for w in self.rows(c.list_webhooks(), T.Webhook)))
        self.assertFalse(self.conforms(c.pause_webhook(hook["id"]), T.Webhook)["active"])
        self.assertTrue(self.conforms(c.resume_webhook(hook["id"]), T.Webhook)["active"])
        self.rows(c.list_webhook_deliveries(hook["id"], limit=5), T.WebhookDelivery)
        self.conforms(c.remove_webhook(hook["id"]), T.Webhook)

    def test_turnover_admin(self) -> None:
        c, refs = self.c, self.refs
        org = self.conforms(c.create_organisation(f"Py Surface {uuid.uuid4().hex[:6]}"), T.Organisation)
        self.assertEqual(org["engagements"], 0)
        delivery = refs["dl-agnes-uniforms"]  # a draft
        added = self.conforms(c.add_delivery_files(delivery, [("swatch.jpg", jpeg(5))], labels=["swatch-a.jpg"]), T.PackageUpload)
        self.assertEqual([f["label"] for f in added["files"]], ["swatch-a.jpg"])
        left = self.conforms(c.remove_delivery_file(delivery, added["files"][0]["id"]), T.DeliveryPackage)
        self.assertNotIn(added["files"][0]["id"], [f["id"] for f in left["files"]])
        self.assertEqual(self.conforms(c.set_delivery_status(delivery, "blocked", note="py"), T.Delivery)["status"], "blocked")
        self.assertEqual(self.conforms(c.set_delivery_status(delivery, "draft"), T.Delivery)["status"], "draft")
        submitted = self.vendor.submit_turnover(refs["dl-101-comp"], [("review me.jpg", jpeg(6))], title="For review")
        reviewed = self.conforms(c.review_submission(submitted["id"], "changes_requested", "Warmer, please"), T.SubmissionRow)
        self.assertEqual((reviewed["status"], reviewed["review"]["note"]), ("changes_requested", "Warmer, please"))

    def test_people_and_audit(self) -> None:
        c = self.c
        allowed = self.conforms(c.allow_sign_in_person(f"py.{uuid.uuid4().hex[:6]}@studio.example", "viewer"), T.AllowedPerson)
        self.assertIn(allowed["id"], [p["id"] for p in self.rows(c.list_sign_in_people(), T.AllowedPerson)])
        c.withdraw_sign_in_person(allowed["id"])
        self.assertEqual(self.rows(c.list_console_sessions(), T.SessionSummary), [])
        with self.assertRaises(prodgraph.NotFound):
            c.revoke_console_session(2**31 - 1)  # no session signed in here: the server says so
        events = self.rows(c.list_audit(action="sign_in_person", limit=10), T.AuditEvent)
        self.assertIn("sign_in_person.withdraw", [e["action"] for e in events])

    def test_zz_every_operation_was_called(self) -> None:
        """Runs last (by name): the tests above called every method the client has."""
        every = {snake(op) for op, *_ in OPERATIONS}
        self.assertEqual(sorted(every - CALLED), [], "methods no test called against the live server")


def _dead_receiver() -> str:
    """A URL that answers 204 to anything (the webhook is removed before it matters)."""

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/hook"


if __name__ == "__main__":
    unittest.main()
