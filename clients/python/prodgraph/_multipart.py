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

__all__ = ["FileInput", "Progress", "Text", "form", "multipart"]

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


class Text:
    """A text part of a form, where a part may be a text field or a file (``form``)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


Progress = Callable[[int, Optional[int]], None]


def multipart(
    fields: Sequence[Tuple[str, Optional[str]]],
    files: Sequence[Tuple[str, FileInput]],
    progress: Optional[Progress] = None,
) -> Upload:
    """An Upload for these text fields (None skipped), then these files."""
    parts: List[Tuple[str, Union[Text, FileInput]]] = [(n, Text(v)) for n, v in fields if v is not None]
    parts += list(files)
    return form(parts, progress)


def form(parts: Sequence[Tuple[str, Union[Text, FileInput]]], progress: Optional[Progress] = None) -> Upload:
    """An Upload of these parts in this order: ``Text`` values as text fields, anything else a
    file. Its length is known before a byte is sent (each file's size read from disk, not its
    bytes), so it goes with a Content-Length; files are read in chunks as the body is sent.
    ``progress(sent_bytes, total_bytes)`` is called as each chunk leaves."""
    boundary = "prodgraph-" + uuid.uuid4().hex
    pieces: List[Union[bytes, _File]] = []
    for name, value in parts:
        if isinstance(value, Text):
            pieces.append(_field(boundary, name, value.value))
        else:
            part = _File(value)
            pieces += [_file_head(boundary, name, part), part, b"\r\n"]
    pieces.append(f"--{boundary}--\r\n".encode("ascii"))
    files = [p for p in pieces if isinstance(p, _File)]
    length: Optional[int] = None
    if all(f.size is not None for f in files):
        length = sum(len(p) if isinstance(p, bytes) else (p.size or 0) for p in pieces)

    def chunks() -> Iterator[bytes]:
        for piece in pieces:
            if isinstance(piece, bytes):
                yield piece
                continue
            f, owned = piece.open()
            try:
                yield from iter_file(f)
            finally:
                if owned:
                    f.close()

    return Upload(
        f"multipart/form-data; boundary={boundary}",
        chunks,
        length,
        rewindable=all(f.rewindable for f in files),
        progress=progress,
    )
