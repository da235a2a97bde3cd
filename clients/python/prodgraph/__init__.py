"""prodgraph: the Python client of the Production Graph Service (standard library only).

    from prodgraph import Client
    client = Client()                     # PRODGRAPH_URL and PRODGRAPH_KEY
    for asset in client.list_assets(department="vfx"):
        print(asset["node_id"], asset["label"])

See the README beside this package for the first-hour tasks, and ``python -m prodgraph mirror``
for a local folder kept current.
"""

from __future__ import annotations

from ._changes import ChangeFeed
from ._paging import Paged
from ._transport import Response
from ._version import __version__
from .client import Client
from .errors import (
    ApiError,
    BadRequest,
    ChecksumMismatch,
    Conflict,
    ConnectionFailed,
    CsrfRefused,
    EngagementDoor,
    Forbidden,
    IdempotencyKeyReused,
    InvalidTransition,
    KeyExpired,
    NotFound,
    PayloadTooLarge,
    ProdgraphError,
    RangeNotSatisfiable,
    RateLimited,
    RouteNotFound,
    ScopeMissing,
    ServerError,
    Timeout,
    Unauthorized,
    UnsupportedMediaType,
    ValidationError,
    WebhookSignatureError,
)
from .webhooks import verify_webhook

__all__ = [
    "__version__",
    "Client",
    "ChangeFeed",
    "Paged",
    "Response",
    "verify_webhook",
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
    "InvalidTransition",
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
