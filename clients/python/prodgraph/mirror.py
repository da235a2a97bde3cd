"""``python -m prodgraph mirror DIR``: a local folder that stays current with what a key may see.

The folder holds, for a vendor key, its granted scene and character bundles as JSON, every
image those bundles show, its turnovers with the package of each sent one, and its own
submissions with their files (and reports the production's reviews of them); for a
production-wide key the same for the whole production::

    DIR/bundles/scene/<node_id>.json       each bundle exactly as the API answers it (its bytes)
    DIR/bundles/character/<node_id>.json
    DIR/media/<media_id>-<slug>.<ext>      every image the bundles show, SHA-256 verified
    DIR/turnovers.json                     the turnovers the key reaches
    DIR/turnovers/<id>-<slug>/<media_id>-<slug>.<ext>  each sent package's files (_mirror_packages)
    DIR/submissions.json                   the submissions it may see (a vendor: its own)
    DIR/submissions/<id>/<media_id>-<slug>.<ext>  each submission's files, SHA-256 verified
    DIR/.prodgraph/mirror.json             what the mirror wrote, ETags, the feed cursor

Files are named as ``Client.download_media`` names them in a folder: ``<media id>-<label's
slug><extension>`` (``12-mara-quinn-v1.jpg``).

A run fetches only what changed: a production-wide key first asks the change feed whether
anything happened since the last run (nothing: one request and done), bundles are asked with
their ETag (unchanged: 304), an image, a package file or a submitted file already on disk is
never fetched again, and turnovers and submissions are asked ``updated_since`` the last run where the key's
view cannot shrink. It never deletes or overwrites a file it did not write (nor one edited
since), fetches again one it wrote that was deleted since, is resumable after an interruption
(a cut download resumes with ``Range``), and reports on one line (a review of the key's own
submissions not seen before gets a line of its own).
"""

from __future__ import annotations

import json
import os
import sys
import time
from email.utils import parsedate_to_datetime
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set

from ._base import segment
from ._download import download, file_name, sha256_of
from ._interrupt import StickyInterrupt
from ._mirror_packages import Packages
from ._transport import next_link
from .client import Client
from .errors import ApiError, EngagementDoor, Forbidden, NotFound, ProdgraphError

__all__ = ["Mirror", "main"]

STATE = Path(".prodgraph") / "mirror.json"
# Change kinds that can alter a bundle, and those that can alter the turnover list.
BUNDLE_KINDS = {"scene", "episode", "asset", "version", "ingredient", "media", "approval", "shoot_day",
                "department_note", "note", "person", "production"}
TURNOVER_KINDS = {"delivery", "approval", "grant", "engagement", "organisation", "production"}
# Change kinds that can alter the submission list (a new one, a delivery retired, a grant).
SUBMISSION_KINDS = {"submission", "media", "delivery", "grant", "engagement", "production"}
# How much of the feed is read to decide what to refresh before refreshing everything anyway.
FEED_PAGES = 10
SAVE_EVERY = 2.0
# Turnover rows a page when the mirror reads them whole (the server's largest page).
TURNOVER_PAGE = 1000


class Progress:
    """One line on stderr, rewritten in place on a terminal; only the last one otherwise."""

    def __init__(self, quiet: bool, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = not quiet and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.width = 0

    def show(self, text: str) -> None:
        if self.live:
            pad = max(0, self.width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
            self.width = len(text)

    def done(self, text: str) -> None:
        if self.quiet:
            return
        if self.live:
            self.show(text)
            self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def warn(self, text: str) -> None:
        if self.live and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
        self.stream.write(f"prodgraph mirror: {text}\n")
        self.stream.flush()

    def say(self, text: str) -> None:
        """A line of news (a review), kept in the log; not with --quiet."""
        if not self.quiet:
            self.warn(text)


class Mirror:
    """One folder, one key. ``run()`` brings the folder up to date once."""

    def __init__(self, client: Client, root: Path, *, keep: bool = False, progress: Optional[Progress] = None) -> None:
        self.client = client
        self.root = root
        self.keep = keep
        self.progress = progress or Progress(quiet=True)
        self.state: Dict[str, Any] = self._load()
        self.counts: Dict[str, int] = {}
        self.fetched_bytes = 0
        # the reviews of the key's own submissions this run saw first (see Packages.reviews)
        self.new_reviews: List[Dict[str, Any]] = []
        self._saved_at = time.monotonic()

    # -- state ---------------------------------------------------------------------------------

    def _load(self) -> Dict[str, Any]:
        path = self.root / STATE
        if path.exists():
            state = json.loads(path.read_text(encoding="utf-8"))
            if state.get("format") == 1:
                return state
        return {"format": 1, "files": {}, "bundles": {}, "media": {}, "cursor": None, "synced_at": None}

    def _submitted(self) -> Dict[str, Any]:
        """The submitted files the mirror keeps, by media id (absent from a folder made before them)."""
        return self.state.setdefault("submitted", {})

    def save(self) -> None:
        self._atomic(self.root / STATE, json.dumps(self.state, indent=1, sort_keys=True).encode("utf-8"))
        self._saved_at = time.monotonic()

    def _maybe_save(self) -> None:
        if time.monotonic() - self._saved_at > SAVE_EVERY:
            self.save()

    # -- files: written atomically, recorded, never someone else's ------------------------------

    @staticmethod
    def _atomic(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".mirror-tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def _record(self, rel: str) -> None:
        full = self.root / rel
        digest, size = sha256_of(full)
        self.state["files"][rel] = {"sha256": digest, "size": size, "mtime_ns": full.stat().st_mtime_ns}

    def _intact(self, rel: str) -> bool:
        """The file is there and is what the mirror wrote (cheap check first, then the hash)."""
        kept = self.state["files"].get(rel)
        full = self.root / rel
        if kept is None or not full.is_file():
            return False
        stat = full.stat()
        if stat.st_size == kept["size"] and stat.st_mtime_ns == kept["mtime_ns"]:
            return True
        if stat.st_size == kept["size"] and sha256_of(full)[0] == kept["sha256"]:
            kept["mtime_ns"] = stat.st_mtime_ns
            return True
        return False

    def _may_write(self, rel: str, sha256: Optional[str] = None) -> bool:
        """Whether the mirror may put a file at ``rel``: free, its own and untouched, or equal."""
        full = self.root / rel
        if not full.exists() or self._intact(rel):
            return True
        if sha256 and full.is_file() and sha256_of(full)[0] == sha256:
            return True  # same bytes already there (an interrupted run, or a copy): adopt it
        self._count("left_alone")
        self.progress.warn(f"{rel} was not written by the mirror (or was edited since): left as it is")
        return False

    def _write(self, rel: str, data: bytes) -> bool:
        import hashlib

        if not self._may_write(rel, hashlib.sha256(data).hexdigest()):
            return False
        self._atomic(self.root / rel, data)
        self._record(rel)
        return True

    def _remove(self, rel: str) -> None:
        if self.keep or not self._intact(rel):
            self.state["files"].pop(rel, None)
            return
        (self.root / rel).unlink()
        self.state["files"].pop(rel, None)
        self._count("removed")

    def _count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    # -- a run ---------------------------------------------------------------------------------

    def run(self) -> Dict[str, int]:
        """Brings the folder up to date; returns the counts the progress line shows.

        Among them: ``images_fetched``, ``bundles_changed``, ``submitted_fetched``; for a vendor's
        turnovers ``packages`` (turnovers showing a package), ``package_files``,
        ``package_fetched``, ``reviews`` (its submissions reviewed) and ``reviews_new`` (reviews
        this run saw first, detailed in ``self.new_reviews``); ``removed`` and ``left_alone``.
        """
        started = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        head, changed_kinds, server_now = self._feed()
        lost = self.lost()
        try:
            if changed_kinds is None or changed_kinds & BUNDLE_KINDS or not self._complete() or lost & {"bundles"}:
                self._bundles()
            else:
                self._count("bundles", len(self.state["bundles"]))
            if changed_kinds is None or changed_kinds & TURNOVER_KINDS or not self._complete() or lost & {"turnovers"}:
                self._turnovers(head is not None)
            if changed_kinds is None or changed_kinds & SUBMISSION_KINDS or not self._has_submissions() or lost & {"submissions"}:
                self._submissions(head is not None)
            self.state["cursor"] = head
            self.state["synced_at"] = server_now
            self.state["complete"] = True
        finally:
            self.save()
        self.progress.done(self.summary(time.monotonic() - started))
        return self.counts

    def _complete(self) -> bool:
        return bool(self.state.get("complete"))

    def lost(self) -> Set[str]:
        """Which parts ("bundles", "turnovers", "submissions") miss a file the mirror wrote.

        A file deleted since (by hand, say) is fetched again even when nothing changed on the
        server; one edited since is still never overwritten.
        """
        files = self.state["files"]
        gone = {rel for rel in files if not (self.root / rel).exists()}
        if not gone:
            return set()
        bundles = {b["file"] for b in self.state["bundles"].values()}
        bundles |= {m["file"] for m in self.state["media"].values()}
        submissions = {"submissions.json"} | {f["file"] for f in self._submitted().values()}
        turnovers = {"turnovers.json"} | {f["file"] for f in self.state.get("package", {}).values()}
        parts = {"bundles": bundles, "turnovers": turnovers, "submissions": submissions}
        return {part for part, rels in parts.items() if gone & rels}

    def _has_submissions(self) -> bool:
        """Whether the last complete run kept the submissions (a folder from before them did not)."""
        return self._complete() and "submitted" in self.state and self._intact("submissions.json")

    def _feed(self) -> Any:
        """(the feed's head, the kinds changed since the last run or None for "unknown", server time).

        Vendor keys cannot read the feed (403): everything is checked, cheaply, by ETag.
        """
        try:
            page = self.client.list_changes("now")
        except (EngagementDoor, Forbidden):
            return None, None, self._server_time()
        head = page["next_cursor"]
        server_now = self._server_time()
        cursor = self.state.get("cursor")
        if not cursor or not self._complete():
            return head, None, server_now
        kinds: Set[str] = set()
        after = cursor
        for _ in range(FEED_PAGES):
            try:
                batch = self.client.list_changes(after, 1000)
            except ApiError:
                return head, None, server_now  # e.g. the log was reset: check everything
            kinds.update(c["kind"] for c in batch["changes"])
            after = batch["next_cursor"]
            if not batch["more"]:
                return head, kinds, server_now
        return head, None, server_now

    def _server_time(self) -> Optional[str]:
        """The server's clock from the last answer's Date, a few seconds back (writes committing)."""
        response = self.client.last_response
        stamp = response.headers.get("Date") if response is not None else None
        if not stamp:
            return None
        try:
            return (parsedate_to_datetime(stamp) - timedelta(seconds=5)).isoformat()
        except (TypeError, ValueError):
            return None

    # -- bundles and their images --------------------------------------------------------------

    def _bundles(self) -> None:
        wanted: Dict[str, Mapping[str, Any]] = {}
        for entry in self.client.list_bundles():
            wanted[f"{entry['kind']}/{entry['node_id']}"] = entry
        media: Set[int] = set()
        for n, (name, entry) in enumerate(wanted.items(), 1):
            self.progress.show(f"prodgraph mirror: bundles {n}/{len(wanted)} · {self._media_line()}")
            ids = self._bundle(name, entry)
            media.update(ids)
            self._maybe_save()
        for name in sorted(set(self.state["bundles"]) - set(wanted)):
            gone = self.state["bundles"].pop(name)
            self._remove(gone["file"])
        self._count("bundles", len(wanted))
        self._media(media)

    def _bundle(self, name: str, entry: Mapping[str, Any]) -> Set[int]:
        path = f"/bundles/{entry['kind']}/{segment(entry['node_id'])}"
        rel = f"bundles/{name}.json"
        kept = self.state["bundles"].get(name)
        intact = bool(kept) and self._intact(rel)
        if intact:
            self.client._keep_bundle(path, kept["etag"], (self.root / rel).read_bytes())  # type: ignore[index]
        else:
            # no copy of ours on disk (deleted, edited, never written): a 304 would leave the
            # file missing, so ask without the ETag an earlier run of this process kept
            self.client._forget_bundle(path)
        try:
            data = self.client._bundle_bytes(path)
        except NotFound:
            return set()  # revoked between the list and now: gone next run
        response = self.client.last_response
        document = json.loads(data.decode("utf-8"))
        ids = _media_ids(document)
        if response is not None and response.status == 304 and intact:
            return ids
        # the bytes the API answered, not re-serialised: what a consumer of the API would read
        if self._write(rel, data):
            self._count("bundles_changed")
        etag = document.get("etag") or (response.headers.get("ETag") if response is not None else None)
        self.state["bundles"][name] = {"etag": etag, "file": rel, "media": sorted(ids)}
        return ids

    def _media(self, ids: Iterable[int]) -> None:
        wanted = sorted(set(ids))
        for n, media_id in enumerate(wanted, 1):
            self.progress.show(f"prodgraph mirror: images {n}/{len(wanted)} · {self._media_line()}")
            self._image(media_id)
            self._maybe_save()
        for key in sorted(set(self.state["media"]) - {str(i) for i in wanted}):
            self._remove(self.state["media"].pop(key)["file"])
        self._count("images", len(wanted))

    def _image(self, media_id: int) -> None:
        kept = self.state["media"].get(str(media_id))
        if kept and self._intact(kept["file"]):
            return  # an image's bytes never change under its id
        try:
            meta = self.client.get_media(media_id)
        except NotFound:
            return
        rel = kept["file"] if kept else f"media/{_name(meta)}"
        if not self._may_write(rel, meta.get("sha256")):
            return
        before = (self.root / (rel + ".part")).stat().st_size if (self.root / (rel + ".part")).exists() else 0
        path = self.client.download_media(media_id, self.root / rel)
        self.fetched_bytes += max(0, path.stat().st_size - before)
        self._record(rel)
        self.state["media"][str(media_id)] = {"file": rel, "sha256": meta.get("sha256")}
        self._count("images_fetched")

    # -- turnovers -----------------------------------------------------------------------------

    def _turnovers(self, production_wide: bool) -> None:
        self.progress.show(f"prodgraph mirror: turnovers · {self._media_line()}")
        rel = "turnovers.json"
        since = self.state.get("synced_at") if production_wide and self._intact(rel) else None
        if since:
            # a production-wide view never shrinks without saying so: merge what changed
            rows = {t["id"]: t for t in json.loads((self.root / rel).read_text(encoding="utf-8"))}
            for row in self.client.list_turnovers(updated_since=since):
                if row.get("retired_at"):
                    rows.pop(row["id"], None)
                else:
                    rows[row["id"]] = row
            turnovers = [rows[k] for k in sorted(rows)]
        else:
            # a vendor's view shrinks silently when a grant is revoked: read it whole (a 304
            # to the last answer's ETag when nothing changed)
            fresh = self._read_turnovers()
            if fresh is None:
                turnovers = json.loads((self.root / rel).read_text(encoding="utf-8"))
            else:
                turnovers = sorted(fresh, key=lambda t: t["id"])
        data = (json.dumps(turnovers, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        current = self.root / rel
        if not (current.exists() and current.read_bytes() == data):
            self._write(rel, data)
        elif rel not in self.state["files"]:
            self._record(rel)  # the same bytes, from a run whose record was lost: the mirror's again
        self._count("turnovers", len(turnovers))
        packages = Packages(self)
        packages.sync(turnovers)
        packages.reviews(turnovers)

    def _read_turnovers(self) -> Optional[List[Dict[str, Any]]]:
        """Every turnover row the key reaches; None when the list is as the last run read it
        (a 304 to its ETag, asked only when that answer was one page and its file is intact)."""
        etag = self.state.get("turnovers_etag") if self._intact("turnovers.json") else None
        transport = self.client._transport
        headers = {"If-None-Match": etag} if etag else None
        url = self.client._api("/turnovers", {"limit": TURNOVER_PAGE})
        response, raw = transport.request("GET", url, headers=headers, retryable=True)
        if response.status == 304:
            return None
        rows: List[Dict[str, Any]] = json.loads(raw.decode("utf-8"))
        link = next_link(response.headers.get("Link"))
        self.state["turnovers_etag"] = None if link else response.headers.get("ETag")
        while link:
            more, after = self.client._fetch_page(transport.resolve(link))
            rows += more
            link = after
        return rows

    # -- submissions and their files ----------------------------------------------------------

    def _submissions(self, production_wide: bool) -> None:
        self.progress.show(f"prodgraph mirror: submissions · {self._media_line()}")
        rel = "submissions.json"
        since = self.state.get("synced_at") if production_wide and self._has_submissions() else None
        if since:
            # a production-wide view never shrinks without saying so: merge what changed
            rows = {s["id"]: s for s in json.loads((self.root / rel).read_text(encoding="utf-8"))}
            for row in self.client.list_submissions(updated_since=since):
                if row.get("retired_at"):
                    rows.pop(row["id"], None)
                else:
                    rows[row["id"]] = row
            submissions = [rows[k] for k in sorted(rows)]
        else:
            # a vendor's view shrinks silently when a grant is revoked: read it whole
            submissions = sorted(self.client.list_submissions(), key=lambda s: s["id"])
        data = (json.dumps(submissions, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        current = self.root / rel
        if not (current.exists() and current.read_bytes() == data):
            self._write(rel, data)
        elif rel not in self.state["files"]:
            self._record(rel)  # the same bytes, from a run whose record was lost: the mirror's again
        wanted = {str(f["id"]): (s["id"], f) for s in submissions for f in s.get("media", [])}
        for n, (key, (submission_id, file)) in enumerate(sorted(wanted.items()), 1):
            self.progress.show(f"prodgraph mirror: submitted files {n}/{len(wanted)} · {self._media_line()}")
            self._submitted_file(submission_id, file)
            self._maybe_save()
        kept = self._submitted()
        for key in sorted(set(kept) - set(wanted)):
            rel = kept.pop(key)["file"]
            self._remove(rel)
            try:
                (self.root / rel).parent.rmdir()  # the submission's folder, once the mirror emptied it
            except OSError:
                pass  # not empty (a file kept, or one of the user's): left as it is
        self._count("submissions", len(submissions))

    def _submitted_file(self, submission_id: int, file: Mapping[str, Any]) -> None:
        """One submitted file, fetched once (its bytes never change under its id) and verified."""
        kept = self._submitted().get(str(file["id"]))
        if kept and self._intact(kept["file"]):
            return
        rel = kept["file"] if kept else f"submissions/{submission_id}/{_name(file)}"
        if not self._may_write(rel, file.get("sha256")):
            return
        part = self.root / (rel + ".part")
        before = part.stat().st_size if part.exists() else 0
        url = self.client._api(f"/media/{segment(file['id'])}/content")
        try:
            path = download(
                self.client._transport,
                lambda _refresh: url,
                self.root / rel,
                sha256=file.get("sha256"),
                size=file.get("size"),
                fallback_name=f"media-{file['id']}",
            )
        except NotFound:
            return  # out of reach since the list was read: gone from the list next run
        self.fetched_bytes += max(0, path.stat().st_size - before)
        self._record(rel)
        self._submitted()[str(file["id"])] = {"file": rel, "sha256": file.get("sha256")}
        self._count("submitted_fetched")

    # -- reporting -----------------------------------------------------------------------------

    def _media_line(self) -> str:
        got = self.counts.get("images_fetched", 0)
        return f"{got} images fetched ({_size(self.fetched_bytes)})"

    def summary(self, seconds: float) -> str:
        c = self.counts
        parts = [
            f"{c.get('bundles', 0)} bundles ({c.get('bundles_changed', 0)} changed)",
            f"{c.get('images', len(self.state['media']))} images ({c.get('images_fetched', 0)} fetched, {_size(self.fetched_bytes)})",
            f"{c.get('turnovers', 0)} turnovers" if "turnovers" in c else "turnovers unchanged",
        ]
        if c.get("packages") or c.get("package_fetched"):
            parts.append(
                f"{c.get('package_files', 0)} package files in {c.get('packages', 0)} turnovers"
                f" ({c.get('package_fetched', 0)} fetched)"
            )
        if c.get("reviews"):
            parts.append(f"{c['reviews']} review{'s' if c['reviews'] != 1 else ''} ({c.get('reviews_new', 0)} new)")
        parts += [
            (
                f"{c['submissions']} submissions ({c.get('submitted_fetched', 0)} files fetched)"
                if "submissions" in c
                else "submissions unchanged"
            ),
        ]
        if c.get("removed"):
            parts.append(f"{c['removed']} removed")
        if c.get("left_alone"):
            parts.append(f"{c['left_alone']} local files left alone")
        return f"prodgraph mirror {self.root}: up to date in {seconds:.1f} s — " + ", ".join(parts)


def _media_ids(document: Mapping[str, Any]) -> Set[int]:
    """Every media id a bundle shows: released versions, and a character's ingredients."""
    ids: Set[int] = set()
    for holder in document.get("assets", []) + document.get("costumes", []):
        for item in holder.get("released_versions", []) + holder.get("ingredients", []):
            if isinstance(item.get("media_id"), int):
                ids.add(item["media_id"])
    return ids


def _name(media: Mapping[str, Any]) -> str:
    """A media file's local name: ``download_media``'s rule (``12-mara-quinn-v1.jpg``)."""
    return file_name(media["id"], str(media.get("label") or ""), str(media.get("content_type") or ""))


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def main(argv: Optional[List[str]] = None) -> int:
    """``prodgraph-mirror DIR`` (also ``python -m prodgraph mirror DIR``)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m prodgraph mirror",
        description="Keep DIR current with the bundles, images, turnovers (and their packages) and"
        " submissions this key may see; report the reviews of its submissions.",
    )
    parser.add_argument("dir", help="the folder to keep (created if absent)")
    parser.add_argument("--url", help="the server (default: $PRODGRAPH_URL)")
    parser.add_argument("--key", help="the key (default: $PRODGRAPH_KEY; prefer the variable: a flag shows in ps)")
    parser.add_argument("--follow", action="store_true", help="keep running: sync again whenever something changes")
    parser.add_argument(
        "--interval",
        type=float,
        default=60.0,
        help="with --follow: seconds between checks with a vendor key (60); a production-wide key"
        " waits on the change feed and looks for deleted files at least every 30 s (or this)",
    )
    parser.add_argument("--keep", action="store_true", help="never remove a file, even one the mirror wrote that is no longer shared")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    args = parser.parse_args(argv)
    try:
        client = Client(args.url, args.key)
    except ValueError as err:
        parser.error(str(err))
    progress = Progress(args.quiet)
    mirror = Mirror(client, Path(args.dir), keep=args.keep, progress=progress)
    with StickyInterrupt() as interrupts:
        return _run(mirror, args, progress, interrupts)


def _run(mirror: Mirror, args: Any, progress: Progress, interrupts: StickyInterrupt) -> int:
    try:
        mirror.run()
        while args.follow:
            _wait_for_change(mirror, args.interval)
            mirror.counts, mirror.fetched_bytes, mirror.new_reviews = {}, 0, []
            mirror.run()
    except KeyboardInterrupt:
        interrupts.stopped()
        mirror.save()
        progress.warn("interrupted; the next run resumes where this one stopped")
        return 130
    except ProdgraphError as err:
        mirror.save()
        progress.warn(f"{type(err).__name__}: {err}")
        return 1
    return 0


def _wait_for_change(mirror: Mirror, interval: float) -> None:
    """Blocks until the feed shows a change (production-wide keys), or ``interval`` passes;
    wakes too when a file the mirror wrote was deleted (looked for between the feed's polls)."""
    cursor = mirror.state.get("cursor")
    if cursor is None:
        time.sleep(interval)
        return
    feed = mirror.client.follow_changes(after=cursor, wait=min(30.0, max(1.0, interval)))
    while True:
        feed._poll()  # one long poll: returns when a change commits or the wait ends
        if feed._pending or mirror.lost():
            return
