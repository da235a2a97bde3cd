#!/usr/bin/env python3
"""The client's cost per call against plain urllib, measured in one run.

    PRODGRAPH_URL=http://127.0.0.1:8080 PRODGRAPH_KEY=pgk_… python3 clients/python/tools/overhead.py [--calls 300]

Three ways to make the same call (``GET /api/v1/production`` and ``GET /api/v1/assets/{id}``),
interleaved call by call (each way in turn, the order rotating) so a busy machine slows them
alike:
- urllib: ``urllib.request.urlopen`` + ``json.load``, what a script without the client does
  (a new connection per call);
- http.client kept alive: one connection reused, ``json.loads`` — the floor for any client;
- prodgraph: ``Client.get_production()`` / ``get_asset()`` (kept-alive connection, retries armed,
  errors mapped, ``last_response`` recorded).
Prints, for each, the median time per call (wall clock: mostly the server's answer, and what
the machine's load does to it) and the median CPU time the calling thread spent per call
(the client's own work, which the load on the machine barely moves), with ratios to urllib
and to the floor.
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
    parser.add_argument("--calls", type=int, default=600, help="calls per way, the two paths alternating (default 600)")
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
    for way in ways.values():  # warm up: connections, the server's cached answers
        for path in paths:
            for _ in range(20):
                way(path)
    wall: Dict[str, List[float]] = {name: [] for name in ways}
    cpu: Dict[str, List[float]] = {name: [] for name in ways}
    order = list(ways.items())
    for i in range(args.calls):
        path = paths[i % len(paths)]
        for name, way in order[i % len(order):] + order[: i % len(order)]:
            started, started_cpu = time.perf_counter(), time.thread_time()
            way(path)
            cpu[name].append(time.thread_time() - started_cpu)
            wall[name].append(time.perf_counter() - started)
    conn.close()
    client.close()
    print(f"{args.calls} calls per way, interleaved one by one; median per call:")
    print(f"  {'':36s} {'wall':>9s} {'×urllib':>8s} {'×floor':>7s}   {'CPU':>9s} {'×urllib':>8s} {'×floor':>7s}")
    for name in ways:
        cells = []
        for series in (wall, cpu):
            value = statistics.median(series[name])
            base_u = statistics.median(series["urllib (new connection each call)"])
            base_f = statistics.median(series["http.client, kept alive (floor)"])
            cells.append(f"{value * 1000:6.3f} ms {value / base_u:8.2f} {value / base_f:7.2f}")
        print(f"  {name:36s} {cells[0]}   {cells[1]}")
    own = statistics.median(cpu["prodgraph client"]) - statistics.median(cpu["http.client, kept alive (floor)"])
    print(f"prodgraph's own CPU over the floor: {own * 1e6:.0f} µs a call")


if __name__ == "__main__":
    main()
