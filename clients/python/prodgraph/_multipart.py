"""multipart/form-data bodies streamed from their sources, their length known in advance.

A file is given as a path, a binary file object, raw bytes, or a ``(filename, source)`` pair.
It is read in chunks while the request is sent, never held whole in memory, and read again
from its start on a retry (a path is re-opened, a file object rewound to where it stood).
"""

from __future__ import annotations

import io
import mimetypes
import os
import urllib.parse
import uuid
from typing import IO, Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

from ._transport import Upload, iter_file

__all__ = ["FileInput", "multipart"]

Source = Union[str, "os.PathLike[str]", bytes, IO[bytes]]
FileInput = Union[Source, Tuple[str, Source]]


class _File:
    """One file part: its name, type, size (None when unknown) and how to read it again."""

    def __init__(self, given: FileInput) -> None:
        name: Optional[str] = None
        source: Any = given
        if isinstance(given, tuple):
            name, source = given
        self.rewindable = True
        self.size: Optional[int]
        self.open: Callable[[], Tuple[IO[bytes], bool]]
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            self.size = os.path.getsize(path)
            self.open = lambda: (open(path, "rb"), True)
            name = name or os.path.basename(path)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            self.size = len(data)
            self.open = lambda: (io.BytesIO(data), True)
        elif hasattr(source, "read"):
            self._from_fileobj(source)
            if name is None:
                raw_name = getattr(source, "name", None)
                name = os.path.basename(raw_name) if isinstance(raw_name, str) else None
        else:
            raise TypeError(f"a file is a path, bytes or a binary file object, not {type(source).__name__}")
        self.name = name or "file"
        self.content_type = mimetypes.guess_type(self.name)[0] or "application/octet-stream"

    def _from_fileobj(self, f: IO[bytes]) -> None:
        seekable = False
        try:
            seekable = f.seekable()
        except (AttributeError, OSError, ValueError):
            pass
        if not seekable:
            self.size = None
            self.rewindable = False
            self.open = lambda: (f, False)
            return
        start = f.tell()
        end = f.seek(0, io.SEEK_END)
        f.seek(start)
        self.size = end - start

        def reopen() -> Tuple[IO[bytes], bool]:
            f.seek(start)
            return f, False

        self.open = reopen


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def _file_head(boundary: str, field: str, part: _File) -> bytes:
    name = part.name
    ascii_name = name.encode("ascii", "replace").decode("ascii").replace("?", "_")
    disposition = f'form-data; name="{_quote(field)}"; filename="{_quote(ascii_name)}"'
    if ascii_name != name:
        disposition += "; filename*=UTF-8''" + urllib.parse.quote(name, safe="")
    return (
        f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
        f"Content-Type: {part.content_type}\r\n\r\n"
    ).encode("utf-8")


def _field(boundary: str, name: str, value: str) -> bytes:
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'
    return head.encode("utf-8") + value.encode("utf-8") + b"\r\n"


def multipart(fields: Sequence[Tuple[str, Optional[str]]], files: Sequence[Tuple[str, FileInput]]) -> Upload:
    """An Upload for these text fields (None skipped) and files, in that order."""
    boundary = "prodgraph-" + uuid.uuid4().hex
    text = b"".join(_field(boundary, name, value) for name, value in fields if value is not None)
    parts: List[Tuple[bytes, _File]] = []
    for name, given in files:
        part = _File(given)
        parts.append((_file_head(boundary, name, part), part))
    tail = f"--{boundary}--\r\n".encode("ascii")
    sizes = [p.size for _, p in parts]
    length: Optional[int] = None
    if all(s is not None for s in sizes):
        length = len(text) + len(tail) + sum(len(h) + (s or 0) + 2 for (h, _), s in zip(parts, sizes))

    def chunks() -> Iterator[bytes]:
        yield text
        for head, part in parts:
            yield head
            f, owned = part.open()
            try:
                yield from iter_file(f)
            finally:
                if owned:
                    f.close()
            yield b"\r\n"
        yield tail

    return Upload(
        f"multipart/form-data; boundary={boundary}",
        chunks,
        length,
        rewindable=all(p.rewindable for _, p in parts),
    )
