"""What every group of methods shares: URLs, JSON reads, lists that page, writes with keys."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._multipart import FileInput, Progress, Text, form, multipart
from ._paging import Paged
from ._transport import Response, Transport, next_link

__all__ = ["Base", "segment"]

# Rows per page when the caller gives no `limit` (the server clamps lists at 1000 rows a page,
# the activity feed and jobs at 200).
PAGE_SIZE = 500


def segment(value: Any) -> str:
    """A path parameter, percent-encoded (``/`` included) so it stays one segment."""
    if isinstance(value, bool):
        raise TypeError("a path parameter cannot be a boolean")
    return urllib.parse.quote(str(value), safe="")


class Base:
    """The transport and the request shapes the method groups are written in."""

    _transport: Transport

    @property
    def last_response(self) -> Optional[Response]:
        """The last HTTP exchange this thread made: ``.status``, ``.headers``, ``.url``."""
        return self._transport.last_response

    def _api(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        return self._transport.url("/api/v1" + path, query)

    def _get(self, path: str, query: Optional[Mapping[str, Any]] = None, *, hold: float = 0.0) -> Any:
        _, body = self._transport.json("GET", self._api(path, query), retryable=True, hold=hold)
        return body

    def _list(self, path: str, query: Optional[Mapping[str, Any]] = None) -> Paged[Any]:
        """Every row of a list that does not page: one request, made on the first row asked for."""
        return Paged(self._fetch_page, self._api(path, query))

    def _paged(
        self,
        path: str,
        query: Optional[Mapping[str, Any]],
        limit: Optional[int],
        default: int = PAGE_SIZE,
    ) -> Paged[Any]:
        """Every row of a list that pages: ``limit`` rows a request, following ``Link``."""
        size = default if limit is None else limit
        return Paged(self._fetch_page, self._api(path, dict(query or {}, limit=size)))

    def _fetch_page(self, url: str) -> Tuple[List[Any], Optional[str]]:
        response, rows = self._transport.json("GET", url, retryable=True)
        link = next_link(response.headers.get("Link"))
        return rows or [], self._transport.resolve(link) if link else None

    def _write(
        self,
        path: str,
        body: Optional[Mapping[str, Any]],
        idempotency_key: Optional[str],
        *,
        keep_none: Sequence[str] = (),
    ) -> Any:
        """A JSON write POST with its Idempotency-Key, so every retry is the same request.

        Fields whose value is None are left out, except those named in ``keep_none`` (sent as
        JSON null, where the API gives null a meaning).
        """
        data = None
        if body is not None:
            fields = {k: v for k, v in body.items() if v is not None or k in keep_none}
            data = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        _, answer = self._transport.json(
            "POST", self._api(path), body=data if data is not None else b"{}", headers=headers, retryable=True
        )
        return answer

    def _upload(
        self,
        path: str,
        fields: Sequence[Tuple[str, Optional[str]]],
        files: Sequence[Tuple[str, FileInput]],
        idempotency_key: Optional[str],
        *,
        parts: Optional[Sequence[Tuple[str, Union[Text, FileInput]]]] = None,
        progress: Optional[Progress] = None,
    ) -> Any:
        """A multipart write POST streamed from its files, with its Idempotency-Key: ``fields``
        then ``files``, or ``parts`` in their own order."""
        body = form(parts, progress) if parts is not None else multipart(fields, files, progress)
        headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        _, answer = self._transport.json("POST", self._api(path), body=body, headers=headers, retryable=True)
        return answer

    def _delete(self, path: str) -> None:
        """A DELETE (204), sent once: a retry after a lost answer would find it gone (404)."""
        self._transport.json("DELETE", self._api(path), retryable=False)

    def _post_unkeyed(self, path: str, body: Optional[Dict[str, Any]]) -> Any:
        """A POST the server takes no Idempotency-Key for: sent once, never retried once sent."""
        data = json.dumps(body or {}, separators=(",", ":")).encode("utf-8")
        _, answer = self._transport.json("POST", self._api(path), body=data, retryable=False)
        return answer
