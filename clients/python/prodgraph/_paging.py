"""Lazy iteration over every row of a list, page by page, following ``Link: rel="next"``."""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Deque, Generic, Iterator, List, Optional, Tuple, TypeVar

__all__ = ["Paged"]

T = TypeVar("T")

# fetch(url) -> (rows of that page, the next page's absolute URL or None)
Fetch = Callable[[str], Tuple[List[Any], Optional[str]]]


class Paged(Generic[T]):
    """An iterator over all rows of a list; pages are fetched only as rows are consumed.

    Each page is its own request, retried on its own, so a dropped connection on page 40 costs
    page 40 again, not the walk. ``.pages()`` yields whole pages (lists) instead of rows.
    """

    def __init__(self, fetch: Fetch, first_url: str) -> None:
        self._fetch = fetch
        self._next: Optional[str] = first_url
        self._rows: Deque[T] = deque()
        self.pages_fetched = 0

    def __iter__(self) -> "Paged[T]":
        return self

    def __next__(self) -> T:
        while not self._rows:
            if self._next is None:
                raise StopIteration
            self._rows.extend(self._load())
        return self._rows.popleft()

    def pages(self) -> Iterator[List[T]]:
        """The remaining rows, a page at a time (what is left of a page already begun first)."""
        if self._rows:
            rest = list(self._rows)
            self._rows.clear()
            yield rest
        while self._next is not None:
            page = self._load()
            if page:
                yield page

    def _load(self) -> List[T]:
        assert self._next is not None
        rows, self._next = self._fetch(self._next)
        self.pages_fetched += 1
        return rows
