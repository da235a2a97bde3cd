"""Checking that a webhook delivery came from your prodgraph server and is not a replay."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Optional, Union

from .errors import WebhookSignatureError

__all__ = ["verify_webhook", "SIGNATURE_HEADER"]

SIGNATURE_HEADER = "Prodgraph-Signature"


def verify_webhook(
    secret: str,
    signature_header: Optional[str],
    body: Union[bytes, str],
    tolerance: float = 300,
    *,
    now: Optional[float] = None,
) -> bool:
    """True when ``body`` carries a valid signature; raises :class:`WebhookSignatureError` if not.

    ``signature_header`` is the delivery's ``Prodgraph-Signature`` header,
    ``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``. Pass the raw body exactly as
    received (bytes), before any JSON parsing. A timestamp more than ``tolerance`` seconds from
    now is refused (a replay). The comparison takes the same time whatever the signature.
    """
    if not signature_header:
        raise WebhookSignatureError("no Prodgraph-Signature header")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    stamp: Optional[str] = None
    signatures = []
    for part in signature_header.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            continue
        if name == "t":
            stamp = value
        elif name == "v1":
            signatures.append(value)
    if stamp is None or not stamp.isdigit() or not signatures:
        raise WebhookSignatureError("malformed Prodgraph-Signature header (want t=…,v1=…)")
    current = time.time() if now is None else now
    if abs(current - int(stamp)) > tolerance:
        raise WebhookSignatureError(f"signature timestamp is more than {tolerance:g} s from now (a replay?)")
    key = secret.encode("utf-8")
    expected = hmac.new(key, stamp.encode("ascii") + b"." + raw, hashlib.sha256).hexdigest()
    matched = False
    for given in signatures:
        # constant time: every candidate is compared in full, whatever the outcome
        matched |= hmac.compare_digest(expected.encode("ascii"), given.strip().lower().encode("ascii", "replace"))
    if not matched:
        raise WebhookSignatureError("signature does not match the body (wrong secret, or the body was altered)")
    return True
