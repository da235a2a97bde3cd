"""The round-trip surface (vendor keys too): bundles, turnovers, media, purchase orders."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from ._base import Base, segment
from ._download import PathLike, download, file_name, is_folder
from ._multipart import FileInput
from ._paging import Paged
from .types import BundleEntry, CharacterBundle, Media, MediaTicket, PurchaseOrders, SceneBundle, Submission, SubmissionRow, Turnover

__all__ = ["RoundTripMethods"]

# Bundles kept for If-None-Match, least recently used dropped first (each is kept as the bytes
# the server sent, parsed again on a 304, so a caller that edits a returned dict edits a copy).
KEPT_BUNDLES = 512
When = Union[str, Any]


class RoundTripMethods(Base):
    _bundles: "OrderedDict[str, Tuple[str, bytes]]"
    _lock: threading.Lock
    _ticket: Optional[Tuple[str, float]]

    def _init_roundtrip(self) -> None:
        self._bundles = OrderedDict()
        self._lock = threading.Lock()
        self._ticket = None

    # -- bundles -------------------------------------------------------------------------------

    def list_bundles(self, *, limit: Optional[int] = None) -> Paged[BundleEntry]:
        """The scene and character bundles this key may fetch (a vendor key: its live grants)."""
        return self._paged("/bundles", None, limit)

    def get_scene_bundle(self, node_id: int) -> SceneBundle:
        """Everything about one scene. Conditional: a repeat answers 304 and the kept document."""
        return self._conditional(f"/bundles/scene/{segment(node_id)}")

    def get_character_bundle(self, node_id: int) -> CharacterBundle:
        """A character's costumes, released versions and ingredients. Conditional, like scenes."""
        return self._conditional(f"/bundles/character/{segment(node_id)}")

    def _keep_bundle(self, path: str, etag: str, document: bytes) -> None:
        """Seeds the kept bundles (the mirror hands over what it has on disk)."""
        with self._lock:
            self._bundles[self._api(path)] = (etag, document)

    def _forget_bundle(self, path: str) -> None:
        """Drops a kept bundle, so the next fetch is unconditional (the mirror lost its copy)."""
        with self._lock:
            self._bundles.pop(self._api(path), None)

    def _conditional(self, path: str) -> Any:
        return json.loads(self._bundle_bytes(path).decode("utf-8"))

    def _bundle_bytes(self, path: str) -> bytes:
        """A bundle's JSON as the server sent it (on a 304, the bytes kept from before)."""
        url = self._api(path)
        with self._lock:
            kept = self._bundles.get(url)
            if kept is not None:
                self._bundles.move_to_end(url)
        headers = {"If-None-Match": kept[0]} if kept else None
        response, raw = self._transport.request("GET", url, headers=headers, retryable=True)
        if response.status == 304:
            if kept is not None:
                return kept[1]
            response, raw = self._transport.request("GET", url, retryable=True)
        etag = response.headers.get("ETag")
        if etag:
            with self._lock:
                self._bundles[url] = (etag, raw)
                self._bundles.move_to_end(url)
                while len(self._bundles) > KEPT_BUNDLES:
                    self._bundles.popitem(last=False)
        return raw

    # -- turnovers -----------------------------------------------------------------------------

    def list_turnovers(self, *, updated_since: Optional[When] = None, limit: Optional[int] = None) -> Paged[Turnover]:
        """The turnovers this key reaches (a vendor's: its granted deliveries), with ``can_submit``."""
        return self._paged("/turnovers", {"updated_since": updated_since}, limit)

    def submit_turnover(
        self,
        delivery_id: int,
        files: Sequence[FileInput],
        title: Optional[str] = None,
        note: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> Submission:
        """Submits files on a turnover (all or nothing), each streamed from disk.

        ``files``: paths, binary file objects, bytes, or ``(filename, source)`` pairs.
        """
        if isinstance(files, (str, bytes)) or hasattr(files, "read"):
            files = [files]  # type: ignore[list-item]
        fields = [("title", title), ("note", note)]
        parts = [("files", f) for f in files]
        return self._upload(f"/turnovers/{segment(delivery_id)}/submissions", fields, parts, idempotency_key)

    def list_submissions(
        self,
        *,
        delivery_id: Optional[int] = None,
        updated_since: Optional[When] = None,
        limit: Optional[int] = None,
    ) -> Paged[SubmissionRow]:
        """The submissions this key may see, oldest first, each file with its size and SHA-256.

        A vendor key: its own engagement's, on the turnovers it holds a live grant on now; a
        production-wide key: every one. ``delivery_id`` narrows to one turnover.
        """
        return self._paged("/submissions", {"delivery_id": delivery_id, "updated_since": updated_since}, limit)

    def get_purchase_orders(self) -> PurchaseOrders:
        """Purchase orders (a vendor key: its own) and the active cost report's lines."""
        return self._get("/purchase-orders")

    # -- media ---------------------------------------------------------------------------------

    def get_media(self, media_id: int) -> Media:
        """A media object's metadata: type, size, SHA-256."""
        return self._get(f"/media/{segment(media_id)}")

    def get_media_content(self, media_id: int) -> bytes:
        """A media object's bytes, in memory. For files of any size use :meth:`download_media`."""
        _, raw = self._transport.request(
            "GET", self._api(f"/media/{segment(media_id)}/content"), headers={"Accept": "*/*"}, retryable=True
        )
        return raw

    def download_media(self, media_id: int, dest: PathLike) -> Path:
        """Streams a media object to ``dest``, verified; returns the path written.

        ``dest`` is a file path, or a folder: one that exists, or a path ending in a separator
        (``"downloads/"``), made if missing. In a folder the file is named as the mirror names it:
        ``<media id>-<label's slug><extension>`` (``12-mara-quinn-v1.jpg``; see
        ``prodgraph._download.file_name``). A dropped connection resumes where it stopped
        (``Range``), also in a later call (the bytes so far wait in ``<file>.part``); the file
        appears only once its size and SHA-256 match the metadata. A file already holding those
        bytes is left as it is.
        """
        meta = self.get_media(media_id)
        if is_folder(dest):
            dest = Path(dest) / file_name(media_id, meta.get("label", ""), meta.get("content_type", ""))
        url = self._api(f"/media/{segment(media_id)}/content")
        return download(
            self._transport,
            lambda _refresh: url,
            dest,
            sha256=meta.get("sha256"),
            size=meta.get("size"),
            fallback_name=f"media-{media_id}",
        )

    def get_media_ticket(self) -> MediaTicket:
        """A media ticket (production-wide keys): fetch ``/media/…?t=<ticket>`` with no header."""
        return self._get("/media-ticket")

    def get_media_file_by_ticket(self, media_path: str, ticket: Optional[str] = None) -> bytes:
        """The bytes at a ``media_path`` (``/media/ab/….jpg``), through a media ticket.

        With no ``ticket``, the client takes one (and keeps it until shortly before it expires).
        """
        url = self._ticket_url(media_path, ticket, refresh=False)
        _, raw = self._transport.request("GET", url, headers={"Accept": "*/*"}, retryable=True, auth=False)
        return raw

    def download_media_path(self, media_path: str, dest: PathLike) -> Path:
        """Streams the file at a ``media_path`` to ``dest`` through a media ticket, verified.

        For production-wide keys (a vendor key uses :meth:`download_media` with the ``media_id``
        beside the path). ``dest`` as in :meth:`download_media`; in a folder the file is named by
        the same rule without the id (a path names none): the slug of the server's file name and
        its extension (``mara-quinn-v1.jpg``). Resumes like :meth:`download_media`; the SHA-256
        checked is the one the server tags the file with (its ETag). A ticket that expires midway
        is renewed.
        """
        name = media_path.rstrip("/").rsplit("/", 1)[-1] or "media"
        return download(
            self._transport,
            lambda refresh: self._ticket_url(media_path, None, refresh),
            dest,
            sha256=None,
            size=None,
            fallback_name=name,
            auth=False,
        )

    def _ticket_url(self, media_path: str, ticket: Optional[str], refresh: bool) -> str:
        if not media_path.startswith("/media/"):
            raise ValueError(f"a media_path starts with /media/, not {media_path[:40]!r}")
        if ticket is None:
            ticket = self._kept_ticket(refresh)
        return self._transport.url(media_path, {"t": ticket})

    def _kept_ticket(self, refresh: bool) -> str:
        with self._lock:
            kept = self._ticket
        if kept is not None and not refresh and kept[1] > time.time() + 60:
            return kept[0]
        answer: Dict[str, Any] = dict(self.get_media_ticket())
        expires = _epoch(answer.get("expires_at")) or time.time() + 600
        with self._lock:
            self._ticket = (answer["ticket"], expires)
        return answer["ticket"]


def _epoch(stamp: Any) -> Optional[float]:
    from datetime import datetime

    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
