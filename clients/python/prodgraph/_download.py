"""Streaming a media file to disk: resumed with ``Range`` after a drop, checked by SHA-256.

The bytes go to ``<dest>.part`` as they arrive; a dropped connection resumes from the part's
length (``Range: bytes=N-`` with ``If-Range`` on the file's ETag, so a file that changed
meanwhile starts over), also in a later run. Only when the size and SHA-256 match is the part
renamed to ``dest``: a file at ``dest`` is always whole and verified.
"""

from __future__ import annotations

import hashlib
import http.client
import mimetypes
import os
import re
import socket
import time
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, Union

from ._transport import Transport
from .errors import ChecksumMismatch, ConnectionFailed, RangeNotSatisfiable, Unauthorized

__all__ = ["download", "sha256_of", "etag_sha256", "file_name", "is_folder"]

READ = 256 * 1024
PathLike = Union[str, "os.PathLike[str]"]
# Extensions by content type where mimetypes' first guess is an odd one (.jpe for JPEG, say).
EXTENSIONS = {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/gif": ".gif",
              "image/tiff": ".tif", "image/x-exr": ".exr", "video/mp4": ".mp4", "video/quicktime": ".mov",
              "text/plain": ".txt"}


def file_name(media_id: Optional[int], label: str, content_type: str = "") -> str:
    """The local name of a downloaded media file, the same in ``download_media`` and the mirror:
    ``<media id>-<label's slug><extension>``, e.g. ``12-mara-quinn-v1.jpg`` for media 12
    labelled "Mara Quinn v1" (a JPEG).

    The slug is the label lowercased, each run of characters other than ASCII letters and digits
    made one ``-``, at most 60 characters (``media`` when nothing is left). The extension is the
    label's own when it has one (a dot, then a letter and up to 9 more letters or digits:
    "reel1.edl" keeps ``.edl``), else the content type's (none when unknown). Without an id
    (``download_media_path``: a path names none) the name is the rest alone.
    """
    ext = _label_extension(label)
    stem = label[: -len(ext)] if ext else label
    ext = ext.lower() or EXTENSIONS.get(content_type) or _guessed_extension(content_type)
    name = _slug(stem) + ext
    return f"{media_id}-{name}" if media_id is not None else name


def _label_extension(label: str) -> str:
    match = re.search(r"\.[A-Za-z][A-Za-z0-9]{0,9}$", label)
    return match.group() if match else ""


def _guessed_extension(content_type: str) -> str:
    if not content_type or content_type == "application/octet-stream":
        return ""
    return mimetypes.guess_extension(content_type.split(";")[0].strip()) or ""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:60].strip("-") or "media"


def is_folder(dest: PathLike) -> bool:
    """Whether ``dest`` names a folder: an existing one, or a path ending in a separator."""
    text = os.fspath(dest)
    ends = text.endswith("/") or text.endswith(os.sep) or bool(os.altsep and text.endswith(os.altsep))
    return ends or os.path.isdir(text)


def sha256_of(path: PathLike, limit: Optional[int] = None) -> Tuple[str, int]:
    """The SHA-256 (hex) and byte count of a file, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(READ)
            if not block:
                break
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def etag_sha256(etag: Optional[str]) -> Optional[str]:
    """The SHA-256 a media ETag carries (the server tags files with their hash), or None."""
    if not etag:
        return None
    match = re.fullmatch(r'(?:W/)?"([0-9a-f]{64})"', etag.strip())
    return match.group(1) if match else None


def _filename(disposition: Optional[str]) -> Optional[str]:
    if not disposition:
        return None
    match = re.search(r"filename\*=UTF-8''([^;]+)", disposition, re.I)
    if match:
        import urllib.parse

        name = urllib.parse.unquote(match.group(1))
    else:
        match = re.search(r'filename="([^"]*)"', disposition, re.I)
        name = match.group(1) if match else ""
    name = os.path.basename(name.replace("\\", "/")).strip()
    return name if name not in ("", ".", "..") else None


class _Target:
    """Where the bytes go: the final path (chosen late when ``dest`` is a folder) and its part."""

    def __init__(self, dest: PathLike, fallback_name: str) -> None:
        self.into_dir = is_folder(dest)
        self.dest = Path(dest)
        if self.into_dir:
            self.dest.mkdir(parents=True, exist_ok=True)
        self.fallback = fallback_name
        self.final: Optional[Path] = None if self.into_dir else self.dest
        self.part = (self.dest / f".{fallback_name}.part") if self.into_dir else self.dest.with_name(self.dest.name + ".part")

    def name_from(self, disposition: Optional[str]) -> None:
        if self.final is None:
            self.final = self.dest / file_name(None, _filename(disposition) or self.fallback)


def download(
    transport: Transport,
    url_for: Callable[[bool], str],
    dest: PathLike,
    *,
    sha256: Optional[str],
    size: Optional[int],
    fallback_name: str,
    auth: bool = True,
) -> Path:
    """Streams ``url_for(False)`` into ``dest``: a file path, or a folder (one that exists, or
    a path ending in a separator, made if missing) where the file is named by the server's name.

    ``url_for(True)`` is asked for a fresh URL after a 401 (a media ticket that expired
    mid-download). ``sha256``/``size`` are what the bytes must be; when ``sha256`` is None the
    file's ETag supplies it. Returns the path written.
    """
    target = _Target(dest, fallback_name)
    if target.final is not None and sha256 and _already(target.final, sha256, size):
        return target.final
    target.part.parent.mkdir(parents=True, exist_ok=True)
    state = _Progress(target.part)
    if sha256:
        state.etag = f'"{sha256}"'  # the server's strong tag for a file is its hash
    refresh = False
    failures = 0
    while True:
        try:
            finished = _attempt(transport, url_for(refresh), target, state, auth)
            refresh = False
        except Unauthorized:
            if refresh:
                raise
            refresh = True  # once: a fresh ticket, then a second 401 is the caller's problem
            continue
        except ConnectionFailed:
            finished = False
        if finished:
            break
        failures = 0 if state.advanced else failures + 1
        if failures > transport.retries:
            raise ConnectionFailed(f"download of {target.final or target.dest} kept failing; {state.have} bytes kept in {target.part}")
        time.sleep(transport._backoff(failures))
    expected = sha256 or etag_sha256(state.etag)
    got = state.digest.hexdigest()
    wanted_size = size if size is not None else state.total
    if (expected and got != expected) or (wanted_size is not None and state.have != wanted_size):
        target.part.unlink()
        raise ChecksumMismatch(
            f"{target.final}: got {state.have} bytes with SHA-256 {got}, expected "
            f"{wanted_size if wanted_size is not None else '?'} bytes with {expected or '?'}; nothing kept"
        )
    assert target.final is not None
    os.replace(target.part, target.final)
    return target.final


def _already(path: Path, sha256: str, size: Optional[int]) -> bool:
    try:
        if size is not None and path.stat().st_size != size:
            return False
        return sha256_of(path)[0] == sha256
    except OSError:
        return False


class _Progress:
    """The part file's length and running hash, and what the server told us about the file."""

    def __init__(self, part: Path) -> None:
        self.part = part
        self.digest = hashlib.sha256()
        self.have = 0
        self.etag: Optional[str] = None
        self.total: Optional[int] = None
        self.advanced = False
        if part.exists():
            with open(part, "rb") as f:
                for block in iter(lambda: f.read(READ), b""):
                    self.digest.update(block)
                    self.have += len(block)

    def restart(self) -> None:
        self.digest = hashlib.sha256()
        self.have = 0
        with open(self.part, "wb"):
            pass


def _attempt(transport: Transport, url: str, target: _Target, state: _Progress, auth: bool) -> bool:
    """One request; True when the whole file is in the part. Network failures return False."""
    headers = {"Accept": "*/*"}
    if state.have:
        headers["Range"] = f"bytes={state.have}-"
        if state.etag:
            headers["If-Range"] = state.etag
    state.advanced = False
    try:
        response, stream = transport.request("GET", url, headers=headers, retryable=True, stream=True, auth=auth)
    except RangeNotSatisfiable:
        state.restart()  # the part is longer than the file: it was not this file
        return False
    try:
        state.etag = response.headers.get("ETag") or state.etag
        target.name_from(response.headers.get("Content-Disposition"))
        if response.status == 206:
            start, total = _content_range(response.headers.get("Content-Range"))
            if start != state.have:
                state.restart()
                return False
        else:
            state.restart()  # a whole answer: the server ignored the range (the file changed)
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        state.total = total
        with open(state.part, "ab") as out:
            while True:
                try:
                    block = stream.read(READ)
                except (OSError, http.client.HTTPException, socket.timeout):
                    return False
                if not block:
                    break
                out.write(block)
                state.digest.update(block)
                state.have += len(block)
                state.advanced = True
        return total is None or state.have >= total
    finally:
        transport.finish(stream)


def _content_range(value: Any) -> Tuple[int, Optional[int]]:
    match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", str(value or "").strip())
    if not match:
        return -1, None
    total = match.group(3)
    return int(match.group(1)), (int(total) if total != "*" else None)
