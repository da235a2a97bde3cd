"""HTTP for the client: one keep-alive connection per thread, proxies, timeouts and retries.

Built on ``http.client`` rather than ``urllib.request`` because the client needs what urllib
hides: a 304 that is not an exception, a request body streamed from disk with its length known
in advance, the connection kept open between calls, and the answer to an upload the server
refused before it was fully sent.
"""

from __future__ import annotations

import base64
import http.client
import json
import platform
import random
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
import weakref
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from ._version import __version__
from .errors import ConnectionFailed, Timeout, error_from, parse_retry_after

__all__ = ["Response", "Transport", "Upload", "next_link"]

# Statuses worth another try: a proxy or load balancer between us and the server failed, the
# server is restarting, or a rate limit asked us to wait.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# A kept-alive connection idle longer than this is not reused: servers close idle ones (the
# prodgraph default is 5 s) and a request written into a closing socket fails for nothing.
MAX_IDLE_SECONDS = 4.0
CHUNK = 256 * 1024


class Response:
    """One HTTP exchange as the caller may inspect it: ``status``, ``headers``, ``url``.

    ``headers`` is case-insensitive (``headers["etag"]`` and ``headers.get("ETag")`` agree). A
    media ticket in ``url`` is masked, so the URL is safe to log.
    """

    __slots__ = ("status", "headers", "url", "method")

    def __init__(self, method: str, status: int, headers: http.client.HTTPMessage, url: str) -> None:
        self.method = method
        self.status = status
        self.headers = headers
        self.url = url

    def __repr__(self) -> str:
        return f"<Response {self.method} {self.url} {self.status}>"


class Upload:
    """A request body produced afresh on every attempt (files re-opened or rewound).

    ``length`` is the byte count when known in advance (sent as Content-Length), else None
    (sent chunked). ``rewindable`` is False when a source cannot be read twice, so a retry is
    impossible once sending began. ``progress(sent_bytes, total_bytes)``, when given, is called
    as each chunk leaves (``total_bytes`` is ``length``); a retry starts again from 0.
    """

    def __init__(
        self,
        content_type: str,
        chunks: Callable[[], Iterable[bytes]],
        length: Optional[int],
        rewindable: bool,
        progress: Optional[Callable[[int, Optional[int]], None]] = None,
    ) -> None:
        self.content_type = content_type
        self.chunks = chunks
        self.length = length
        self.rewindable = rewindable
        self.progress = progress


class Budget:
    """What is left of one call's time: ``timeout`` per wait, within the call's ``deadline``.

    ``timeout`` bounds each wait on the network of one attempt (connecting, each chunk sent,
    the answer's head, each chunk of its body); ``deadline`` (None: no bound) bounds the whole
    call, its retries and the pauses between them included.
    """

    __slots__ = ("per_wait", "seconds", "end")

    def __init__(self, per_wait: float, deadline: Optional[float]) -> None:
        self.per_wait = per_wait
        self.seconds = deadline
        self.end = None if deadline is None else time.monotonic() + deadline

    def left(self) -> Optional[float]:
        return None if self.end is None else self.end - time.monotonic()

    def wait(self) -> float:
        """The socket timeout for the next wait: ``timeout``, or less when the deadline is nearer."""
        left = self.left()
        if left is None:
            return self.per_wait
        if left <= 0:
            raise socket.timeout(f"the call's deadline of {self.seconds:g} s has passed")
        return min(self.per_wait, left)

    def allows(self, pause: float) -> bool:
        """Whether a pause of this long still leaves time for another attempt."""
        left = self.left()
        return left is None or pause < left


Body = Union[None, bytes, Upload]


class _Kept:
    """One thread's kept-alive connection, idle between that thread's requests.

    Reached two ways: through the thread's own ``_Pooled`` (its requests), and through the
    transport's ``_kept`` set (``close()`` from any thread). ``conn`` only changes under the
    transport's lock, so a connection is either idle here or in use by its thread, never both.
    When the thread ends its thread-locals go, and with them this holder, which closes the
    connection then rather than leaving the socket to the garbage collector.
    """

    __slots__ = ("conn", "idle_since", "__weakref__")

    def __init__(self) -> None:
        self.conn: Optional[http.client.HTTPConnection] = None
        self.idle_since = 0.0

    def __del__(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - at thread or interpreter exit nothing may raise
                pass


class _Pooled(threading.local):
    kept: Optional[_Kept] = None
    last: Optional[Response] = None


class _Failure(Exception):
    """A network failure inside one attempt; ``sent`` says whether the request may have left."""

    def __init__(self, cause: BaseException, sent: bool) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.sent = sent


class Transport:
    """Sends requests to one prodgraph server; shared by every thread of a Client."""

    backoff = 0.5
    max_backoff = 30.0
    # A Retry-After longer than this is not slept through: the error goes to the caller.
    max_retry_after = 120.0

    def __init__(
        self,
        base_url: str,
        key: Optional[str],
        *,
        timeout: float,
        retries: int,
        user_agent: Optional[str],
        deadline: Optional[float] = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        prefix = parts.path.rstrip("/")
        if prefix.endswith("/api/v1"):
            prefix = prefix[: -len("/api/v1")]
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.netloc = parts.netloc.rpartition("@")[2]
        self.origin = f"{parts.scheme}://{self.netloc}"
        self.prefix = prefix
        self.base_url = self.origin + prefix
        self._key = key
        self.timeout = float(timeout)
        self.deadline = None if deadline is None else float(deadline)
        self.retries = max(0, int(retries))
        ua = f"prodgraph-python/{__version__} Python/{platform.python_version()}"
        self.user_agent = f"{user_agent} {ua}" if user_agent else ua
        self._proxy = _proxy_for(self.scheme, self.host)
        self._ssl = ssl.create_default_context() if self.scheme == "https" else None
        self._local = _Pooled()
        # every thread's holder, so close() reaches connections kept by other threads too
        self._kept: "weakref.WeakSet[_Kept]" = weakref.WeakSet()
        self._kept_lock = threading.Lock()

    # -- URLs ----------------------------------------------------------------------------------

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        """The absolute URL of a server path (``/api/v1/...`` or ``/media/...``)."""
        url = self.base_url + path
        q = encode_query(query)
        return f"{url}?{q}" if q else url

    def resolve(self, link: str) -> str:
        """A ``Link`` target as an absolute URL (the server names paths from its own root)."""
        if link.startswith(("http://", "https://")):
            return link
        if link.startswith("/"):
            # behind a reverse proxy under a path, the server names its paths without that path
            if self.prefix and not link.startswith(self.prefix + "/"):
                return self.base_url + link
            return self.origin + link
        return urllib.parse.urljoin(self.base_url + "/", link)

    # -- state ---------------------------------------------------------------------------------

    @property
    def last_response(self) -> Optional[Response]:
        return self._local.last

    def close(self) -> None:
        """Closes every thread's kept-alive connection (a thread's next request opens a new one).

        A request in flight in another thread keeps its connection until it is done; that
        connection is then kept as usual, and closed by the next ``close()`` or when its thread
        ends.
        """
        with self._kept_lock:
            idle = [kept for kept in self._kept if kept.conn is not None]
            conns = [kept.conn for kept in idle]
            for kept in idle:
                kept.conn = None
        for conn in conns:
            if conn is not None:
                conn.close()

    def _holder(self) -> _Kept:
        """The calling thread's holder, made (and registered) on its first request."""
        kept = self._local.kept
        if kept is None:
            kept = self._local.kept = _Kept()
            with self._kept_lock:
                self._kept.add(kept)
        return kept

    def _take(self) -> Tuple[Optional[http.client.HTTPConnection], float]:
        """The calling thread's idle connection, now out of the pool, and how long it idled."""
        kept = self._holder()
        with self._kept_lock:
            conn, kept.conn = kept.conn, None
        return conn, time.monotonic() - kept.idle_since

    def _forget(self, conn: http.client.HTTPConnection) -> None:
        """Drops ``conn`` from the calling thread's pool if it is there (it was closed)."""
        kept = self._local.kept
        if kept is not None:
            with self._kept_lock:
                if kept.conn is conn:
                    kept.conn = None

    # -- requests ------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        body: Body = None,
        content_type: Optional[str] = None,
        retryable: bool,
        hold: float = 0.0,
        stream: bool = False,
        auth: bool = True,
        raise_for_status: bool = True,
    ) -> Tuple[Response, Any]:
        """Sends one logical request, retried per the policy; returns (response, payload).

        The payload is the body's bytes, or with ``stream=True`` the open ``HTTPResponse`` (the
        caller reads it and then calls ``release``; each read then waits up to ``timeout``, the
        deadline no longer applies). ``retryable`` says the request may be sent again (a GET, or
        a write carrying its Idempotency-Key); a request that never left the machine (no
        connection) is always tried again. ``hold`` is how long the server may hold the answer on
        purpose (a long poll): it is added to the timeout and to the deadline.
        """
        all_headers = self._headers(headers, body, content_type, auth)
        rewind_ok = not (isinstance(body, Upload) and not body.rewindable)
        budget = Budget(self.timeout + hold, None if self.deadline is None else self.deadline + hold)
        attempt = 0
        while True:
            fresh = not retryable  # never write a non-repeatable request into a stale socket
            try:
                conn, resp = self._send(method, url, all_headers, body, budget, fresh)
            except _Failure as failure:
                may_retry = (retryable and rewind_ok) or not failure.sent
                self._pause_or_raise(may_retry, attempt, budget, method, url, failure.cause)
                attempt += 1
                continue
            response = Response(method, resp.status, resp.msg, _mask(url))
            if resp.status in RETRY_STATUSES and retryable and rewind_ok and attempt < self.retries:
                delay = self._retry_delay(resp, attempt)
                if delay is not None and budget.allows(delay):
                    self._drain(conn, resp)
                    self._local.last = response
                    self._sleep(delay)
                    attempt += 1
                    continue
            if stream and resp.status < 300:
                self._local.last = response
                if conn.sock is not None:
                    conn.sock.settimeout(self.timeout)
                resp.prodgraph_conn = conn  # type: ignore[attr-defined]  # closed by finish()
                return response, resp
            try:
                raw = _read_all(conn, resp, budget)
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                self._pause_or_raise(retryable and rewind_ok, attempt, budget, method, url, exc)
                attempt += 1
                continue
            self.release(conn, resp)
            self._local.last = response
            if raise_for_status and resp.status >= 400:
                raise error_from(resp.status, raw, response)
            return response, raw

    def _pause_or_raise(
        self, may_retry: bool, attempt: int, budget: Budget, method: str, url: str, cause: BaseException
    ) -> None:
        """After a failed attempt: the pause before the next one, or the error for the caller
        (no retry allowed, none left, or no time left before the deadline)."""
        if not may_retry or attempt >= self.retries:
            raise _connection_failed(method, url, cause, attempt + 1) from cause
        pause = self._backoff(attempt)
        if not budget.allows(pause):
            raise _connection_failed(method, url, cause, attempt + 1, budget.seconds) from cause
        self._sleep(pause)

    def json(self, method: str, url: str, **kwargs: Any) -> Tuple[Response, Any]:
        """``request`` whose payload is decoded JSON (None for an empty body, e.g. a 304)."""
        response, raw = self.request(method, url, **kwargs)
        if not raw:
            return response, None
        return response, json.loads(raw.decode("utf-8"))

    @staticmethod
    def finish(resp: http.client.HTTPResponse) -> None:
        """Closes a streamed answer and its connection (a stream's socket is never reused)."""
        resp.close()
        conn = getattr(resp, "prodgraph_conn", None)
        if conn is not None:
            conn.close()

    def release(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        """Keeps a fully read connection for this thread's next request, or closes it."""
        if resp.will_close or not resp.isclosed():
            conn.close()
            self._forget(conn)
            return
        kept = self._holder()
        with self._kept_lock:
            before, kept.conn = kept.conn, conn
            kept.idle_since = time.monotonic()
        if before is not None and before is not conn:
            before.close()

    # -- internals -----------------------------------------------------------------------------

    def _headers(
        self,
        extra: Optional[Mapping[str, str]],
        body: Body,
        content_type: Optional[str],
        auth: bool,
    ) -> Dict[str, str]:
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if auth and self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        if isinstance(body, Upload):
            headers["Content-Type"] = body.content_type
            if body.length is not None:
                headers["Content-Length"] = str(body.length)
            else:
                headers["Transfer-Encoding"] = "chunked"
        elif body is not None:
            headers["Content-Type"] = content_type or "application/json"
            headers["Content-Length"] = str(len(body))
        if extra:
            headers.update(extra)
        return headers

    def _connection(self, fresh: bool, timeout: float) -> Tuple[http.client.HTTPConnection, bool]:
        conn, idle = self._take()
        if conn is not None:
            if fresh or idle > MAX_IDLE_SECONDS:
                conn.close()
            else:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                return conn, True
        return self._open(timeout), False

    def _open(self, timeout: float) -> http.client.HTTPConnection:
        if self._proxy is None:
            if self.scheme == "https":
                return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self._ssl)
            return http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        p_host, p_port, p_auth, p_scheme = self._proxy
        if self.scheme == "https":
            # CONNECT through the proxy; TLS with the server itself, end to end
            tunnel_headers = {"Proxy-Authorization": p_auth} if p_auth else None
            tls = http.client.HTTPSConnection(p_host, p_port, timeout=timeout, context=self._ssl)
            tls.set_tunnel(self.host, self.port, headers=tunnel_headers)
            return tls
        if p_scheme == "https":
            return http.client.HTTPSConnection(p_host, p_port, timeout=timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(p_host, p_port, timeout=timeout)

    def _target(self, url: str) -> str:
        if self._proxy is not None and self.scheme == "http":
            return url  # a plain-HTTP proxy takes the absolute URL
        parts = urllib.parse.urlsplit(url)
        return urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))

    def _send(
        self,
        method: str,
        url: str,
        headers: Dict[str, str],
        body: Body,
        budget: Budget,
        fresh: bool,
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        try:
            conn, reused = self._connection(fresh, budget.wait())
        except socket.timeout as exc:
            raise _Failure(exc, sent=False) from exc
        if self._proxy is not None and self.scheme == "http" and self._proxy[2]:
            headers = dict(headers, **{"Proxy-Authorization": self._proxy[2]})
        try:
            if conn.sock is None:
                conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise _Failure(exc, sent=False) from exc
        try:
            payload: Any = _paced(body, conn, budget) if isinstance(body, Upload) else body
            chunked = isinstance(body, Upload) and body.length is None
            if chunked:
                headers = {k: v for k, v in headers.items() if k != "Transfer-Encoding"}
            conn.request(method, self._target(url), body=payload, headers=headers, encode_chunked=chunked)
        except (BrokenPipeError, ConnectionResetError) as exc:
            # the server may have answered before reading everything (e.g. 413): read that answer
            try:
                return conn, conn.getresponse()
            except (OSError, http.client.HTTPException):
                conn.close()
                raise _Failure(exc, sent=True) from exc
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise _Failure(exc, sent=True) from exc
        try:
            if conn.sock is not None:
                conn.sock.settimeout(budget.wait())
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            # a kept-alive socket the server had closed: nothing reached the server
            stale = reused and isinstance(exc, http.client.RemoteDisconnected)
            raise _Failure(exc, sent=not stale) from exc

    def _retry_delay(self, resp: http.client.HTTPResponse, attempt: int) -> Optional[float]:
        """How long to wait before the next try, or None when the server asked too long a wait."""
        asked = parse_retry_after(resp.getheader("Retry-After"))
        if asked is None:
            return self._backoff(attempt)
        if asked > self.max_retry_after:
            return None
        return asked + random.uniform(0, min(1.0, asked * 0.1 + 0.05))

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: half to all of base·2^attempt, capped."""
        ceiling = min(self.max_backoff, self.backoff * (2**attempt))
        return ceiling * (0.5 + random.random() / 2)

    @staticmethod
    def _sleep(seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def _drain(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        try:
            resp.read(64 * 1024)
        except (OSError, http.client.HTTPException):
            pass
        self.release(conn, resp)


def encode_query(query: Optional[Mapping[str, Any]]) -> str:
    """A query string from a mapping: None dropped, booleans as true/false, datetimes as ISO."""
    if not query:
        return ""
    pairs: List[Tuple[str, str]] = []
    for name, value in query.items():
        if value is None:
            continue
        pairs.append((name, _query_value(name, value)))
    return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)


def _query_value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "isoformat") and hasattr(value, "tzinfo"):
        if value.tzinfo is None:
            raise ValueError(f"{name}: a datetime needs a timezone (e.g. datetime.now(timezone.utc))")
        return value.isoformat()
    return str(value)


_LINK = re.compile(r'<([^>]*)>\s*((?:;\s*[^;,]+)*)')


def next_link(header: Optional[str]) -> Optional[str]:
    """The target of ``rel="next"`` in a ``Link`` header, or None."""
    if not header:
        return None
    for match in _LINK.finditer(header):
        params = match.group(2)
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "rel" and "next" in value.strip().strip('"').lower().split():
                return match.group(1)
    return None


def _proxy_for(scheme: str, host: str) -> Optional[Tuple[str, int, Optional[str], str]]:
    """The proxy the environment names for this host (http_proxy, https_proxy, no_proxy)."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    if "://" not in proxy:
        proxy = "http://" + proxy
    parts = urllib.parse.urlsplit(proxy)
    if not parts.hostname:
        return None
    auth = None
    if parts.username:
        creds = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(creds.encode()).decode()
    default = 443 if parts.scheme == "https" else 80
    return parts.hostname, parts.port or default, auth, parts.scheme


def _mask(url: str) -> str:
    """The URL with a media ticket's value hidden (``?t=…``), safe for logs and messages."""
    if "t=" not in url:
        return url
    return re.sub(r"([?&]t=)[^&#]*", r"\1…", url)


def _connection_failed(
    method: str, url: str, cause: BaseException, attempts: int = 1, deadline: Optional[float] = None
) -> ConnectionFailed:
    where = f"{method} {_mask(url)}"
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if deadline is not None:
        tries += f", and the call's deadline of {deadline:g} s leaves no time for another"
    if isinstance(cause, (socket.timeout, TimeoutError)):
        return Timeout(f"{where}: no answer in time ({cause}; {tries})")
    return ConnectionFailed(f"{where}: {type(cause).__name__}: {cause} ({tries})")


def _paced(body: Upload, conn: http.client.HTTPConnection, budget: Budget) -> Iterator[bytes]:
    """An upload's chunks, each sent within the time left (``timeout``, or less near the
    deadline), reporting progress as each one leaves."""
    sent = 0
    for block in body.chunks():
        if conn.sock is not None:
            conn.sock.settimeout(budget.wait())
        yield block
        sent += len(block)
        if body.progress is not None and block:
            body.progress(sent, body.length)


def _read_all(conn: http.client.HTTPConnection, resp: http.client.HTTPResponse, budget: Budget) -> bytes:
    """An answer's whole body, each read within the time left (a server that trickles bytes
    does not outlast the deadline)."""
    blocks = []
    while True:
        if conn.sock is not None:
            conn.sock.settimeout(budget.wait())
        # read1: what one read of the socket brings (read(n) would wait for all n bytes)
        block = resp.read1(CHUNK)
        if not block:
            blocks.append(resp.read())  # b"": marks the answer complete, so the connection is kept
            return b"".join(blocks)
        blocks.append(block)


def iter_file(fileobj: Any, chunk: int = CHUNK) -> Iterator[bytes]:
    """Reads a binary file object in chunks (never the whole file at once)."""
    while True:
        block = fileobj.read(chunk)
        if not block:
            return
        yield block
