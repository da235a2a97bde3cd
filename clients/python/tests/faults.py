"""A local HTTP proxy that misbehaves on cue, between the client and the live server.

    proxy = FaultProxy(upstream)          # forwards everything by default
    proxy.plan("drop_after_answer", method="POST")   # the next POST: forwarded, answer dropped
    client = Client(proxy.url, key)

Faults, each used by the next request that matches (method, path prefix):
- ``drop_after_answer``: forward, let the server answer, then close the client's connection
  without a byte (the classic "did my write happen?").
- ``status:<code>`` (optional ``retry_after``): answer that status itself, not forwarding.
- ``status_after_answer:<code>``: forward, then answer that status instead (a gateway that
  timed out after the server did the work).
- ``cut_body``: forward, send the headers and half the body, then close.
- ``corrupt_body``: forward, flip one byte of the body.
- ``stall:<seconds>``: wait that long before forwarding.
- ``stop_reading:<seconds>``: read the request's head and none of its body, hold the
  connection that long (or until the proxy closes), then close it: a server that stopped
  reading an upload.
Every request that reached the proxy is in ``seen``.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

HOP = {"connection", "keep-alive", "transfer-encoding", "host", "proxy-connection", "te", "upgrade"}


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.seen: List[Dict[str, Any]] = []
        self._plans: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                proxy._handle(self)

            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def plan(self, fault: str, *, method: Optional[str] = None, path: str = "", times: int = 1, **options: Any) -> None:
        with self._lock:
            self._plans.append(dict(options, fault=fault, method=method, path=path, times=times))

    def close(self) -> None:
        self._closed.set()
        self.server.shutdown()
        self.server.server_close()

    def requests(self, method: Optional[str] = None, path: str = "") -> List[Dict[str, Any]]:
        return [r for r in self.seen if (method is None or r["method"] == method) and r["path"].startswith(path)]

    # -- inside ----------------------------------------------------------------------------------

    def _take(self, method: str, path: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            for plan in self._plans:
                if (plan["method"] in (None, method)) and path.startswith(plan["path"]):
                    plan["times"] -= 1
                    if plan["times"] <= 0:
                        self._plans.remove(plan)
                    return plan
        return None

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        if h.path.startswith("http://"):  # used as a forward proxy: the absolute URL
            parts = urllib.parse.urlsplit(h.path)
            h.path = urllib.parse.urlunsplit(("", "", parts.path, parts.query, ""))
        path = h.path
        plan = self._take(h.command, urllib.parse.urlsplit(path).path)
        fault = plan["fault"] if plan else "forward"
        if fault.startswith("stop_reading:"):
            self.seen.append({"method": h.command, "path": path, "headers": dict(h.headers.items()), "size": None})
            self._closed.wait(float(fault.split(":")[1]))
            return _drop(h)
        body = _read_body(h)
        self.seen.append({"method": h.command, "path": path, "headers": dict(h.headers.items()), "size": len(body)})
        if fault.startswith("status:"):
            return _answer(h, int(fault.split(":")[1]), plan.get("retry_after") if plan else None)
        if fault.startswith("stall:"):
            time.sleep(float(fault.split(":")[1]))
        status, headers, payload = self._forward(h, body)
        if fault == "drop_after_answer":
            return _drop(h)
        if fault.startswith("status_after_answer:"):
            return _answer(h, int(fault.split(":")[1]), None)
        if fault == "corrupt_body" and payload:
            payload = payload[:-1] + bytes([payload[-1] ^ 0xFF])
        h.send_response(status)
        for name, value in headers:
            if name.lower() not in HOP:
                h.send_header(name, value)
        if fault == "cut_body":
            h.end_headers()
            h.wfile.write(payload[: len(payload) // 2])
            h.wfile.flush()
            return _drop(h)
        h.end_headers()
        h.wfile.write(payload)

    def _forward(self, h: BaseHTTPRequestHandler, body: bytes) -> Tuple[int, List[Tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=60)
        headers = {k: v for k, v in h.headers.items() if k.lower() not in HOP}
        headers["Content-Length"] = str(len(body))
        try:
            conn.request(h.command, h.path, body=body if body or h.command == "POST" else None, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), resp.read()
        finally:
            conn.close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up on a fault is the point of the exercise, not an error."""


def _read_body(h: BaseHTTPRequestHandler) -> bytes:
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        out = bytearray()
        while True:
            size = int(h.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                h.rfile.readline()
                return bytes(out)
            out += h.rfile.read(size)
            h.rfile.readline()
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length else b""


def _answer(h: BaseHTTPRequestHandler, status: int, retry_after: Any) -> None:
    codes = {429: "rate_limited", 502: "upstream_failed", 503: "unavailable", 504: "upstream_failed"}
    body = json.dumps({"detail": f"injected {status}", "code": codes.get(status, "internal")}).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    if retry_after is not None:
        h.send_header("Retry-After", str(retry_after))
    h.end_headers()
    h.wfile.write(body)


def _drop(h: BaseHTTPRequestHandler) -> None:
    h.close_connection = True
    try:
        h.wfile.flush()
        h.connection.shutdown(2)
    except OSError:
        pass
