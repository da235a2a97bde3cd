#!/usr/bin/env python3
"""The client's cost per call against plain urllib, measured in one run.

    PRODGRAPH_URL=http://127.0.0.1:8080 PRODGRAPH_KEY=pgk_… python3 clients/python/tools/overhead.py [--calls 300]

Three ways to make the same call (``GET /api/v1/production`` and ``GET /api/v1/assets/{id}``),
interleaved round by round so a busy machine slows them alike:
- urllib: ``urllib.request.urlopen`` + ``json.load``, what a script without the client does
  (a new connection per call);
- http.client kept alive: one connection reused, ``json.loads`` — the floor for any client;
- prodgraph: ``Client.get_production()`` / ``get_asset()`` (kept-alive connection, retries armed,
  errors mapped, ``last_response`` recorded).
Prints the median per call of each and the ratios to urllib and to the floor.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse
import urllib.request
from typing import Callable, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from prodgraph import Client  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300, help="calls per way and path (default 300)")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    base, key = os.environ["PRODGRAPH_URL"].rstrip("/"), os.environ["PRODGRAPH_KEY"]
    client = Client(base, key)
    asset = next(iter(client.list_assets(limit=1)))["node_id"]
    paths = ["/api/v1/production", f"/api/v1/assets/{asset}"]
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    parts = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=30)

    def by_urllib(path: str) -> object:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=30) as r:
            return json.load(r)

    def by_http_client(path: str) -> object:
        conn.request("GET", path, headers=headers)
        return json.loads(conn.getresponse().read())

    def by_prodgraph(path: str) -> object:
        return client.get_production() if path.endswith("/production") else client.get_asset(asset)

    ways: Dict[str, Callable[[str], object]] = {
        "urllib (new connection each call)": by_urllib,
        "http.client, kept alive (floor)": by_http_client,
        "prodgraph client": by_prodgraph,
    }
    for way in ways.values():  # warm up: connections, the server's kept answers
        for path in paths:
            for _ in range(20):
                way(path)
    per_call: Dict[str, List[float]] = {name: [] for name in ways}
    n = max(1, args.calls // args.rounds)
    for _ in range(args.rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            for _ in range(n):
                for path in paths:
                    way(path)
            per_call[name].append((time.perf_counter() - started) / (n * len(paths)))
    medians = {name: statistics.median(v) for name, v in per_call.items()}
    urllib_ms = medians["urllib (new connection each call)"]
    floor = medians["http.client, kept alive (floor)"]
    print(f"{n * len(paths) * args.rounds} calls per way, {args.rounds} interleaved rounds; median per call:")
    for name, value in medians.items():
        print(f"  {name:36s} {value * 1000:7.3f} ms   ×{value / urllib_ms:.2f} of urllib   ×{value / floor:.2f} of the floor")
    print(f"prodgraph's own cost over the floor: {(medians['prodgraph client'] - floor) * 1e6:.0f} µs a call")


if __name__ == "__main__":
    main()
