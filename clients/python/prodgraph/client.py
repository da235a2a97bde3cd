"""The prodgraph client: one method per REST operation of the server."""

from __future__ import annotations

import os
from typing import Any, Optional

from ._admin import AdminMethods
from ._changes import ChangeMethods
from ._graph import GraphMethods
from ._roundtrip import RoundTripMethods
from ._transport import Transport
from ._turnover_admin import TurnoverAdminMethods

__all__ = ["Client"]


class Client(GraphMethods, RoundTripMethods, ChangeMethods, AdminMethods, TurnoverAdminMethods):
    """A prodgraph server, reached with one key.

    ``Client()`` reads ``PRODGRAPH_URL`` (the server, e.g. ``http://127.0.0.1:8080``) and
    ``PRODGRAPH_KEY`` (a ``pgk_…`` token). ``timeout`` (seconds) bounds each wait on the
    network within one attempt: connecting, each chunk of a request sent, the answer's head,
    each chunk of its body. ``retries`` is how many more times a failed request is tried
    (connection errors, timeouts, 502/503/504, 429 after its ``Retry-After``), with exponential
    backoff and jitter; so without a deadline a server that never answers is given up after
    ``(retries + 1) * timeout`` plus the pauses. ``deadline`` (seconds; None, the default: no
    bound) bounds a whole call, its retries and pauses included: the call raises ``Timeout``
    (or the last failure) by then. One call is one request (a list's pages are each their own
    call); a long poll's ``wait`` is added to both; a download's bytes, once they flow, are
    bounded by ``timeout`` per read only. Only requests that are safe to repeat
    are retried: reads, and writes, each of which carries an ``Idempotency-Key`` reused on every
    try, so a retried write is never applied twice.

    One client may be shared by threads: each thread keeps its own connection (closed when the
    thread ends, or by ``close()`` for all of them), and ``last_response`` is the last exchange
    of the calling thread. Proxies come from the usual
    environment variables (``https_proxy``, ``http_proxy``, ``no_proxy``).
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        deadline: Optional[float] = None,
        retries: int = 3,
        user_agent: Optional[str] = None,
    ) -> None:
        url = base_url or os.environ.get("PRODGRAPH_URL")
        if not url:
            raise ValueError("no server: pass base_url=, or set PRODGRAPH_URL (e.g. http://127.0.0.1:8080)")
        token = key if key is not None else os.environ.get("PRODGRAPH_KEY")
        if timeout <= 0 or (deadline is not None and deadline <= 0):
            raise ValueError("timeout and deadline are seconds, more than 0")
        self._transport = Transport(
            url, token or None, timeout=timeout, retries=retries, user_agent=user_agent, deadline=deadline
        )
        self._init_roundtrip()

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def close(self) -> None:
        """Closes the kept-alive connections of every thread that used this client.

        The client stays usable: a later call opens a new connection. A thread that ends closes
        its own connection then, so threads need not call this. ``with Client(...) as client:``
        closes at the end of the block.
        """
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        # never the token: a repr ends up in logs
        return f"<prodgraph.Client {self._transport.base_url}>"
