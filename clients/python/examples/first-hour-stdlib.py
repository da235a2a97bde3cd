#!/usr/bin/env python3
"""A TD's first hour with prodgraph and the standard library only (no client).

    PRODGRAPH_URL=http://127.0.0.1:8080 PRODGRAPH_KEY=pgk_... python3 first-hour-stdlib.py [SCENE_ID]

Pages every asset, fetches a scene bundle and asks again with its ETag, posts a note that a
retry cannot post twice, downloads an image the bundle shows and checks its SHA-256. What it
still leaves out: Retry-After on a 429, resuming a cut download, multipart uploads.
"""

import hashlib
import json
import mimetypes
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

BASE = os.environ["PRODGRAPH_URL"].rstrip("/")
AUTH = {"Authorization": "Bearer " + os.environ["PRODGRAPH_KEY"]}


class ApiError(Exception):
    pass


def call(method, path, body=None, headers=None, stream=False):
    """One request, retried on a dropped connection or a 502/503/504 when it is safe to repeat
    (a GET, or a write with an Idempotency-Key). A 304 is an answer, not an error."""
    url = path if path.startswith("http") else BASE + path
    headers = {**AUTH, "Accept": "application/json", **(headers or {})}
    if body is not None:
        body, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    repeatable = method == "GET" or "Idempotency-Key" in headers
    for attempt in range(4):
        try:
            resp = urllib.request.urlopen(urllib.request.Request(url, body, headers, method=method), timeout=30)
            if stream:
                return resp
            with resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as err:
            with err:  # urllib raises on every status from 300 up, the 304 included
                if err.code == 304:
                    return 304, err.headers, b""
                payload = err.read()
            if err.code not in (502, 503, 504) or not repeatable or attempt == 3:
                try:
                    problem = json.loads(payload)
                except ValueError:
                    problem = {"code": None, "detail": payload[:200].decode("utf-8", "replace")}
                raise ApiError(f"{method} {path}: {err.code} {problem.get('code')}: {problem.get('detail')}") from None
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if not repeatable or attempt == 3:
                raise
        time.sleep(0.5 * 2**attempt)


def next_link(header):
    """The rel="next" target of a Link header: a path on the server, made absolute."""
    for target, params in re.findall(r"<([^>]*)>([^,]*)", header or ""):
        if re.search(r'rel="?next"?', params):
            return urllib.parse.urljoin(BASE + "/", target)
    return None


# 1. every asset, a page at a time
url, assets, pages = "/api/v1/assets?limit=10", [], 0
while url:
    _, headers, body = call("GET", url)
    assets += json.loads(body)
    pages += 1
    url = next_link(headers.get("Link"))
print(f"{len(assets)} assets in {pages} pages")

# 2. a scene bundle, then the same again: 304 while it has not changed
scene = int(sys.argv[1]) if len(sys.argv) > 1 else json.loads(call("GET", "/api/v1/scenes")[2])[0]["node_id"]
_, headers, body = call("GET", f"/api/v1/bundles/scene/{scene}")
bundle, etag = json.loads(body), headers["ETag"]
status, _, body = call("GET", f"/api/v1/bundles/scene/{scene}", headers={"If-None-Match": etag})
if status == 200:
    bundle = json.loads(body)  # it changed in between
print(f"scene {scene}: bundle, then {status} on asking again")

# 3. a note, its Idempotency-Key the same on every try: the server keeps one
asset = assets[0]["node_id"]
key = str(uuid.uuid4())
note = json.loads(call("POST", f"/api/v1/assets/{asset}/notes", {"text": "Checked", "author": "TD"}, {"Idempotency-Key": key})[2])
print(f"note {note['id']} on asset {asset}")

# 4. the first image the bundle shows, streamed to disk and checked
media = next(v["media_id"] for a in bundle["assets"] for v in a["released_versions"] if v.get("media_id"))
meta = json.loads(call("GET", f"/api/v1/media/{media}")[2])
name = f"media-{media}{mimetypes.guess_extension(meta['content_type']) or ''}"
digest = hashlib.sha256()
with call("GET", f"/api/v1/media/{media}/content", headers={"Accept": "*/*"}, stream=True) as resp:
    with open(name + ".part", "wb") as out:
        for block in iter(lambda: resp.read(256 * 1024), b""):
            digest.update(block)
            out.write(block)
if digest.hexdigest() != meta["sha256"]:
    os.remove(name + ".part")
    raise SystemExit(f"media {media}: SHA-256 mismatch, not kept")
os.replace(name + ".part", name)
print(f"media {media}: {meta['size']} bytes, SHA-256 checked")
