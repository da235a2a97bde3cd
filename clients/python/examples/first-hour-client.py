#!/usr/bin/env python3
"""A TD's first hour with prodgraph, with the client: what first-hour-stdlib.py does.

    PRODGRAPH_URL=http://127.0.0.1:8080 PRODGRAPH_KEY=pgk_... python3 first-hour-client.py [SCENE_ID]
"""

import sys

from prodgraph import Client

client = Client()

# 1. every asset, a page at a time
assets = client.list_assets(limit=10)
rows = list(assets)
print(f"{len(rows)} assets in {assets.pages_fetched} pages")

# 2. a scene bundle, then the same again: 304 while it has not changed
scene = int(sys.argv[1]) if len(sys.argv) > 1 else next(iter(client.list_scenes()))["node_id"]
bundle = client.get_scene_bundle(scene)
bundle = client.get_scene_bundle(scene)
print(f"scene {scene}: bundle, then {client.last_response.status} on asking again")

# 3. a note (every write carries an Idempotency-Key, the same on every retry)
note = client.add_asset_note(rows[0]["node_id"], "Checked", author="TD")
print(f"note {note['id']} on asset {rows[0]['node_id']}")

# 4. the first image the bundle shows, streamed to disk and checked
media = next(v["media_id"] for a in bundle["assets"] for v in a["released_versions"] if v.get("media_id"))
path = client.download_media(media, ".")
print(f"media {media}: {path.stat().st_size} bytes, SHA-256 checked")
