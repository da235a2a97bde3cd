"""Retries through a fault-injecting proxy: every retried write happens exactly once."""

from __future__ import annotations

import io
import os
import socket
import threading
import time
import unittest
import uuid

from faults import FaultProxy
from live import client, jpeg, live, wait_for

import prodgraph


class Retries(unittest.TestCase):
    def setUp(self) -> None:
        self.server = live()
        self.proxy = FaultProxy(self.server.url)
        self.c = prodgraph.Client(self.proxy.url, self.server.admin_key, retries=3)
        self.c._transport.backoff = 0.05
        self.direct = client()

    def tearDown(self) -> None:
        self.c.close()
        self.direct.close()
        self.proxy.close()

    def assets_labelled(self, label: str) -> int:
        return sum(1 for a in self.direct.list_assets() if a["label"] == label)

    def assert_one_key(self, method: str, path: str, tries: int) -> None:
        seen = self.proxy.requests(method, path)
        self.assertEqual(len(seen), tries)
        keys = {r["headers"].get("Idempotency-Key") for r in seen}
        self.assertEqual(len(keys), 1, "every try of one call carries the same Idempotency-Key")
        self.assertTrue(next(iter(keys)))

    def test_answer_lost_after_the_write_is_replayed_not_repeated(self) -> None:
        label = f"Dropped {uuid.uuid4().hex[:8]}"
        self.proxy.plan("drop_after_answer", method="POST", path="/api/v1/assets")
        made = self.c.create_asset(label)
        self.assertEqual(made["label"], label)
        self.assert_one_key("POST", "/api/v1/assets", 2)
        self.assertEqual(self.c.last_response.headers.get("Idempotent-Replayed"), "true")
        self.assertEqual(self.assets_labelled(label), 1)

    def test_503_once_then_the_write(self) -> None:
        label = f"Unavailable {uuid.uuid4().hex[:8]}"
        self.proxy.plan("status:503", method="POST", path="/api/v1/assets", retry_after=0)
        self.c.create_asset(label)
        self.assert_one_key("POST", "/api/v1/assets", 2)
        self.assertEqual(self.assets_labelled(label), 1)

    def test_gateway_error_after_the_write_is_replayed(self) -> None:
        label = f"Gateway {uuid.uuid4().hex[:8]}"
        self.proxy.plan("status_after_answer:504", method="POST", path="/api/v1/assets")
        self.c.create_asset(label)
        self.assert_one_key("POST", "/api/v1/assets", 2)
        self.assertEqual(self.c.last_response.headers.get("Idempotent-Replayed"), "true")
        self.assertEqual(self.assets_labelled(label), 1)

    def test_429_waits_its_retry_after(self) -> None:
        label = f"Limited {uuid.uuid4().hex[:8]}"
        self.proxy.plan("status:429", method="POST", path="/api/v1/assets", retry_after=1)
        started = time.monotonic()
        self.c.create_asset(label)
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        self.assert_one_key("POST", "/api/v1/assets", 2)
        self.assertEqual(self.assets_labelled(label), 1)

    def test_a_long_retry_after_is_the_callers_decision(self) -> None:
        self.proxy.plan("status:429", method="GET", path="/api/v1/production", retry_after=3600)
        with self.assertRaises(prodgraph.RateLimited) as caught:
            self.c.get_production()
        self.assertEqual(caught.exception.retry_after, 3600)
        self.assertEqual(len(self.proxy.requests("GET", "/api/v1/production")), 1)

    def test_an_upload_dropped_after_the_answer_lands_one_version(self) -> None:
        made = self.direct.create_asset(f"Upload {uuid.uuid4().hex[:8]}")
        path = f"/api/v1/assets/{made['node_id']}/versions"
        self.proxy.plan("drop_after_answer", method="POST", path=path)
        data = jpeg(7)
        landed = self.c.land_asset_version(made["node_id"], ("plate.jpg", io.BytesIO(data)), note="retried")
        self.assert_one_key("POST", path, 2)
        sizes = {r["size"] for r in self.proxy.requests("POST", path)}
        self.assertEqual(len(sizes), 1, "the retry re-sent the whole file")
        self.assertEqual(landed["size"], len(data))
        self.assertEqual(len(self.direct.get_asset(made["node_id"])["versions"]), 1)

    def test_reads_retry_on_connection_drops_and_gateway_errors(self) -> None:
        self.proxy.plan("drop_after_answer", method="GET", path="/api/v1/production")
        self.proxy.plan("status:502", method="GET", path="/api/v1/production")
        self.assertEqual(self.c.get_production()["title"], "Nightfall")
        self.assertEqual(len(self.proxy.requests("GET", "/api/v1/production")), 3)

    def test_each_page_is_retried_on_its_own(self) -> None:
        self.proxy.plan("drop_after_answer", method="GET", path="/api/v1/scenes", times=1)
        pages = list(self.c.list_scenes(limit=4).pages())
        whole = list(self.direct.list_scenes())
        self.assertEqual([r for p in pages for r in p], whole)
        self.assertEqual(len(self.proxy.requests("GET", "/api/v1/scenes")), len(pages) + 1)

    def test_a_write_without_a_key_is_never_retried(self) -> None:
        # a session token is minted per call and the route takes no Idempotency-Key
        self.proxy.plan("status:503", method="POST", path="/api/v1/vision/session-token", retry_after=0)
        with self.assertRaises(prodgraph.ServerError):
            self.c.create_vision_session_token()
        self.proxy.plan("drop_after_answer", method="POST", path="/api/v1/vision/session-token")
        with self.assertRaises(prodgraph.ConnectionFailed):
            self.c.create_vision_session_token()
        self.assertEqual(len(self.proxy.requests("POST", "/api/v1/vision/session-token")), 2)

    def test_a_stream_that_cannot_rewind_is_sent_once(self) -> None:
        made = self.direct.create_asset(f"Pipe {uuid.uuid4().hex[:8]}")
        path = f"/api/v1/assets/{made['node_id']}/versions"
        self.proxy.plan("status:503", method="POST", path=path, retry_after=0)

        class Pipe(io.RawIOBase):
            def __init__(self, data: bytes) -> None:
                self.data = io.BytesIO(data)

            def readable(self) -> bool:
                return True

            def readinto(self, b: bytearray) -> int:  # type: ignore[override]
                chunk = self.data.read(len(b))
                b[: len(chunk)] = chunk
                return len(chunk)

        with self.assertRaises(prodgraph.ServerError):
            self.c.land_asset_version(made["node_id"], ("pipe.jpg", io.BufferedReader(Pipe(jpeg(8)))))
        self.assertEqual(len(self.proxy.requests("POST", path)), 1)

    def test_timeouts_bound_every_call(self) -> None:
        slow = prodgraph.Client(self.proxy.url, self.server.admin_key, timeout=0.5, retries=1)
        slow._transport.backoff = 0.01
        self.proxy.plan("stall:2", method="GET", path="/api/v1/production", times=2)
        started = time.monotonic()
        with self.assertRaises(prodgraph.Timeout):
            slow.get_production()
        slow.close()
        self.assertLess(time.monotonic() - started, 3.0)

    def test_the_proxy_named_by_the_environment_is_used(self) -> None:
        names = ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY")
        saved = {n: os.environ.pop(n) for n in names if n in os.environ}
        os.environ["http_proxy"] = self.proxy.url
        try:
            proxied = prodgraph.Client(self.server.url, self.server.admin_key)
            os.environ["no_proxy"] = "127.0.0.1"
            bypassed = prodgraph.Client(self.server.url, self.server.admin_key)
        finally:
            for n in names:
                os.environ.pop(n, None)
            os.environ.update(saved)
        self.assertEqual(proxied.get_production()["title"], "Nightfall")
        self.assertEqual(len(self.proxy.requests("GET", "/api/v1/production")), 1)
        bypassed.get_production()
        self.assertEqual(len(self.proxy.requests("GET", "/api/v1/production")), 1, "no_proxy is honoured")
        proxied.close()
        bypassed.close()

    def test_one_client_shared_by_threads(self) -> None:
        shared = client()
        results: list = []
        errors: list = []

        def work(i: int) -> None:
            try:
                rows = list(shared.list_scenes(limit=3))
                bundle = shared.get_scene_bundle(rows[i % len(rows)]["node_id"])
                made = shared.create_asset(f"Thread {i} {uuid.uuid4().hex[:6]}")
                results.append((len(rows), bundle["scene"]["node_id"], made["node_id"], shared.last_response.status))
            except Exception as err:  # noqa: BLE001 - reported below
                errors.append(err)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len({r[2] for r in results}), 8, "eight distinct assets")
        self.assertEqual({r[3] for r in results}, {201}, "each thread sees its own last response")
        self.assertEqual(len({r[0] for r in results}), 1)
        shared.close()

    def test_close_reaches_every_thread_and_an_ended_thread_closes_its_own(self) -> None:
        shared = client()
        transport = shared._transport
        kept: list = []
        called = threading.Barrier(4)
        closed = threading.Event()

        def work(stay: bool) -> None:
            shared.get_production()
            kept.append(transport._local.kept.conn)
            if stay:
                called.wait(30)
                closed.wait(30)

        ended = threading.Thread(target=work, args=(False,))
        ended.start()
        ended.join()
        # the thread is gone: its connection was closed with it, not left to the collector
        wait_for(lambda: kept[0].sock is None and len(transport._kept) == 0)
        staying = [threading.Thread(target=work, args=(True,)) for _ in range(3)]
        for t in staying:
            t.start()
        called.wait(30)  # three threads alive, each with its connection kept open
        shared.get_production()
        mine = transport._local.kept.conn
        self.assertTrue(all(c.sock is not None for c in kept[1:] + [mine]))
        shared.close()
        self.assertTrue(all(c.sock is None for c in kept[1:] + [mine]), "close() closed every thread's connection")
        closed.set()
        for t in staying:
            t.join()
        self.assertEqual(shared.get_production()["title"], "Nightfall", "a closed client opens a new connection")
        with shared:
            pass
        self.assertIsNone(transport._local.kept.conn, "leaving the with block closed it")

    def test_no_server_is_connection_failed_after_the_retries(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dead = prodgraph.Client(f"http://127.0.0.1:{port}", "pgk_x", retries=2)
        dead._transport.backoff = 0.01
        with self.assertRaises(prodgraph.ConnectionFailed):
            dead.get_production()


if __name__ == "__main__":
    unittest.main()
