"""The change feed: one page at a time, or followed forever with a cursor to persist."""

from __future__ import annotations

import random
import time
from collections import deque
from typing import Deque, Iterator, Optional

from ._base import Base
from .errors import ConnectionFailed, RateLimited, ServerError
from .types import Change, ChangesPage

__all__ = ["ChangeMethods", "ChangeFeed"]

# Seconds a follower waits after a failure, doubling up to this ceiling while the server is away.
FOLLOW_MAX_PAUSE = 30.0


class ChangeMethods(Base):
    def list_changes(
        self,
        after: Optional[str] = None,
        limit: Optional[int] = None,
        *,
        wait: Optional[float] = None,
    ) -> ChangesPage:
        """One page of the change feed: ``{changes, next_cursor, more}``.

        ``after`` is a cursor from an earlier answer, or ``"now"`` (the newest change); None
        reads from the start of the log. With ``wait`` (seconds), an empty answer is held until
        a change commits or the wait ends (the client's timeout and deadline are extended by it).
        """
        query = {"after": after, "limit": limit, "wait": _seconds(wait)}
        return self._get("/changes", query, hold=float(_seconds(wait) or 0))

    def follow_changes(self, after: Optional[str] = None, wait: float = 30, *, limit: Optional[int] = None) -> "ChangeFeed":
        """Every change from ``after`` on, forever: an iterator that long-polls the feed.

        ``after`` as in :meth:`list_changes`: a cursor, None (the whole log first), or ``"now"``,
        which is resolved by this call, before it returns (one request): the feed then hands out
        every change committed after this call, including writes the caller makes before it
        starts iterating. ``feed.cursor`` is the position after the last change handed out:
        persist it and pass it back as ``after`` to resume exactly there. A dropped connection or
        a server restart is waited out and the feed resumes from its cursor; refusals (a revoked
        key, a cursor the server did not issue) raise.
        """
        if after == "now":
            after = self.list_changes("now")["next_cursor"]
        return ChangeFeed(self, after, wait, limit)


class ChangeFeed(Iterator[Change]):
    """An endless iterator over the change feed; ``cursor`` says where it stands."""

    def __init__(self, client: ChangeMethods, after: Optional[str], wait: float, limit: Optional[int]) -> None:
        self._client = client
        self.cursor: Optional[str] = after
        self.wait = wait
        self.limit = limit
        self._pending: Deque[Change] = deque()
        self._pause = 0.0

    def __iter__(self) -> "ChangeFeed":
        return self

    def __next__(self) -> Change:
        while not self._pending:
            self._poll()
        change = self._pending.popleft()
        self.cursor = change["cursor"]
        return change

    def _poll(self) -> None:
        try:
            page = self._client.list_changes(self.cursor, self.limit, wait=self.wait)
        except RateLimited as err:
            self._rest(err.retry_after)
            return
        except (ConnectionFailed, ServerError):
            self._rest(None)
            return
        self._pause = 0.0
        self._pending.extend(page["changes"])
        if not page["changes"]:
            self.cursor = page["next_cursor"]

    def _rest(self, asked: Optional[float]) -> None:
        """Waits out a failure: what the server asked, else a doubling pause with jitter."""
        self._pause = min(FOLLOW_MAX_PAUSE, max(1.0, self._pause * 2))
        time.sleep(asked if asked is not None else self._pause * (0.5 + random.random() / 2))


def _seconds(wait: Optional[float]) -> Optional[int]:
    if wait is None:
        return None
    return max(0, int(wait))
