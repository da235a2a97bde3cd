"""Keys that expire, the audit trail, and who may sign in to the console, from a live server."""

from __future__ import annotations

import datetime
import unittest

from live import client, live, wait_for

import prodgraph


def _soon(seconds: float) -> str:
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Audit(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = live()
        cls.c = client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.c.close()

    def test_an_expired_key_is_refused_as_key_expired(self) -> None:
        minted = self.c.create_key("py short-lived", scopes=["read"], expires_at=_soon(1.5))
        self.assertIsNotNone(minted["expires_at"])
        short = client(minted["token"])
        try:
            short.get_production()

            def refused() -> bool:
                try:
                    short.get_production()
                    return False
                except prodgraph.KeyExpired as caught:
                    self.assertIsInstance(caught, prodgraph.Unauthorized)
                    self.assertEqual(caught.status, 401)
                    self.assertIn("expired on", caught.detail)
                    return True

            wait_for(refused, timeout=15)
        finally:
            short.close()

    def test_the_audit_trail_names_who_minted_a_key(self) -> None:
        minted = self.c.create_key("py audited", scopes=["read"])
        rows = [r for r in self.c.list_audit(action="key.mint", limit=50) if minted["prefix"] in r["summary"]]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["object_id"], minted["id"])
        self.assertEqual(rows[0]["outcome"], "ok")
        self.assertEqual(rows[0]["actor"], "py admin")
        self.assertNotIn(minted["token"], repr(rows))

    def test_who_may_sign_in_is_allowed_listed_and_withdrawn(self) -> None:
        allowed = self.c.allow_sign_in_person("py.coordinator@studio.example", "coordinator")
        self.assertEqual(allowed["role"], "coordinator")
        self.assertIn(allowed["id"], [p["id"] for p in self.c.list_sign_in_people()])
        self.c.withdraw_sign_in_person(allowed["id"])
        self.assertNotIn(allowed["id"], [p["id"] for p in self.c.list_sign_in_people()])
        with self.assertRaises(prodgraph.NotFound):
            self.c.withdraw_sign_in_person(allowed["id"])
        self.assertEqual(list(self.c.list_console_sessions()), [])
        actions = [r["action"] for r in self.c.list_audit(action="sign_in_person", limit=50)]
        self.assertIn("sign_in_person.allow", actions)
        self.assertIn("sign_in_person.withdraw", actions)


if __name__ == "__main__":
    unittest.main()
