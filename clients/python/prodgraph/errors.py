"""The exceptions the client raises.

Every refusal from the server is an :class:`ApiError` carrying the server's ``{detail, code}``;
its class follows the HTTP status, and for a few codes a narrower subclass (so ``except
NotFound`` catches ``RouteNotFound`` too). A network failure that outlived every retry is
:class:`ConnectionFailed`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Type

if TYPE_CHECKING:  # pragma: no cover
    from ._transport import Response

__all__ = [
    "ProdgraphError",
    "ApiError",
    "BadRequest",
    "Unauthorized",
    "KeyExpired",
    "Forbidden",
    "CsrfRefused",
    "ScopeMissing",
    "EngagementDoor",
    "NotFound",
    "RouteNotFound",
    "Conflict",
    "PayloadTooLarge",
    "UnsupportedMediaType",
    "RangeNotSatisfiable",
    "ValidationError",
    "IdempotencyKeyReused",
    "RateLimited",
    "ServerError",
    "ConnectionFailed",
    "Timeout",
    "ChecksumMismatch",
    "WebhookSignatureError",
]


class ProdgraphError(Exception):
    """Base of every exception this package raises."""


class ApiError(ProdgraphError):
    """The server refused the request: ``status``, ``code`` and ``detail`` say why.

    ``code`` is the stable, machine-readable value to branch on (``None`` when the answer did
    not come from prodgraph itself, e.g. a proxy's HTML error page); ``detail`` is for people.
    ``response`` is the HTTP exchange (``.status``, ``.headers``, ``.url``).
    """

    def __init__(
        self,
        status: int,
        code: Optional[str],
        detail: str,
        response: Optional[Response] = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code or 'error'}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.response = response
        self.body = body


class BadRequest(ApiError):
    """400: the request could not be read (malformed JSON, multipart or URL)."""


class Unauthorized(ApiError):
    """401: no key, or a malformed, unknown or revoked key (or an expired media ticket)."""


class KeyExpired(Unauthorized):
    """401 ``key_expired``: the key's ``expires_at`` has passed (the detail says when)."""


class Forbidden(ApiError):
    """403: the key may not do this (a scope, the engagement's surface, or a rule)."""


class CsrfRefused(Forbidden):
    """403 ``csrf_refused``: a console session's write without its CSRF token (a browser's concern)."""


class ScopeMissing(Forbidden):
    """403 ``scope_missing``: the key lacks a scope the endpoint needs."""


class EngagementDoor(Forbidden):
    """403 ``engagement_door``: a vendor key called an endpoint outside the round-trip surface."""


class NotFound(ApiError):
    """404: no such object, or one out of the key's reach (the two are indistinguishable)."""


class RouteNotFound(NotFound):
    """404 ``route_not_found``: the server has no such endpoint (an older server?)."""


class Conflict(ApiError):
    """409: the object is not in a state that allows this (already settled, a stale step)."""


class InvalidTransition(Conflict):
    """409 ``invalid_transition``: a delivery cannot move to that status from where it is (its
    ``detail`` names the statuses it may move to)."""


class PayloadTooLarge(ApiError):
    """413: a body, file, batch or part count over the server's limit."""


class UnsupportedMediaType(ApiError):
    """415: a Content-Type or file type the endpoint does not take."""


class RangeNotSatisfiable(ApiError):
    """416: a ``Range`` outside the file."""


class ValidationError(ApiError):
    """422: a field, parameter or header was refused; ``field`` names it."""

    def __init__(
        self,
        status: int,
        code: Optional[str],
        detail: str,
        response: Optional[Response] = None,
        body: Any = None,
    ) -> None:
        super().__init__(status, code, detail, response, body)
        self.field: Optional[str] = _field_of(body, detail)


class IdempotencyKeyReused(ValidationError):
    """422 ``idempotency_key_reused``: the Idempotency-Key was used for a different request."""


class RateLimited(ApiError):
    """429: over a rate limit; ``retry_after`` is how many seconds the server asked to wait."""

    def __init__(
        self,
        status: int,
        code: Optional[str],
        detail: str,
        response: Optional[Response] = None,
        body: Any = None,
    ) -> None:
        super().__init__(status, code, detail, response, body)
        header = response.headers.get("Retry-After") if response is not None else None
        self.retry_after: Optional[float] = parse_retry_after(header)


class ServerError(ApiError):
    """5xx: the server (or a provider or proxy in front of it) failed."""


class ConnectionFailed(ProdgraphError):
    """The server could not be reached, or the connection dropped, after the last retry."""


class Timeout(ConnectionFailed):
    """No answer in time: each attempt waited its ``timeout`` and none was left, or the call's
    ``deadline`` passed."""


class ChecksumMismatch(ProdgraphError):
    """A downloaded file's SHA-256 or size is not what the server said; nothing was kept."""


class WebhookSignatureError(ProdgraphError):
    """A webhook delivery's ``Prodgraph-Signature`` is missing, malformed, stale or wrong."""


_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    416: RangeNotSatisfiable,
    422: ValidationError,
    429: RateLimited,
}

# Every code the server documents, with its status and the class it raises (a test checks this
# table against the OpenAPI document, so a code added there without a class here fails).
CODES: Dict[str, Tuple[int, Type[ApiError]]] = {
    "malformed_request": (400, BadRequest),
    "unauthorized": (401, Unauthorized),
    "key_expired": (401, KeyExpired),
    "csrf_refused": (403, CsrfRefused),
    "engagement_door": (403, EngagementDoor),
    "scope_missing": (403, ScopeMissing),
    "forbidden": (403, Forbidden),
    "not_found": (404, NotFound),
    "route_not_found": (404, RouteNotFound),
    "method_not_allowed": (405, ApiError),
    "conflict": (409, Conflict),
    "invalid_transition": (409, InvalidTransition),
    "too_large": (413, PayloadTooLarge),
    "unsupported_media_type": (415, UnsupportedMediaType),
    "range_not_satisfiable": (416, RangeNotSatisfiable),
    "invalid_field": (422, ValidationError),
    "idempotency_key_reused": (422, IdempotencyKeyReused),
    "rate_limited": (429, RateLimited),
    "internal": (500, ServerError),
    "upstream_failed": (502, ServerError),
    "unavailable": (503, ServerError),
    "insufficient_storage": (507, ServerError),
}


def error_class(status: int, code: Optional[str]) -> Type[ApiError]:
    """The class for an answer: by code where the code is known and agrees with the status."""
    known = CODES.get(code or "")
    if known is not None and known[0] == status:
        return known[1]
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, ApiError)


def error_from(status: int, raw: bytes, response: Optional[Response]) -> ApiError:
    """The exception for a non-2xx answer whose body is ``raw``."""
    body: Any = None
    try:
        body = json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        code = body.get("code") if isinstance(body.get("code"), str) else None
        detail = body["detail"]
    else:
        code = None
        text = raw[:300].decode("utf-8", "replace").strip()
        detail = text or f"HTTP {status}"
    return error_class(status, code)(status, code, detail, response, body)


def _field_of(body: Any, detail: str) -> Optional[str]:
    """The refused field: the server's ``field`` when it sends one, else the detail's lead."""
    if isinstance(body, dict) and "field" in body:
        field = body.get("field")
        return field if isinstance(field, str) else None
    # older servers only say it in the detail, which starts with "<field>: "
    head, sep, _ = detail.partition(": ")
    if sep and head and " " not in head:
        return head
    return None


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime
    import time

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # pragma: no cover - older Pythons return None on garbage
        return None
    return max(0.0, when.timestamp() - time.time())
