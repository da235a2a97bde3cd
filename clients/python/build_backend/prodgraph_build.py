"""The build backend of the ``prodgraph`` package (PEP 517 and PEP 660), standard library only.

``pip install ./clients/python`` runs it from this folder (``backend-path`` in pyproject.toml),
so building needs nothing installed and nothing downloaded, on any Python 3.9 and later: no
setuptools, no wheel. It makes:

- a wheel (``prodgraph-<version>-py3-none-any.whl``): the ``prodgraph`` folder's ``.py`` files
  and ``py.typed``, and ``prodgraph-<version>.dist-info/`` with METADATA, WHEEL,
  entry_points.txt and RECORD (every file's SHA-256 and size);
- an sdist (``prodgraph-<version>.tar.gz``): pyproject.toml, README.md, the package, this
  backend and PKG-INFO, which builds the same wheel again;
- an editable wheel (``pip install -e``): a ``.pth`` naming this folder, so the sources are
  imported in place.

The metadata is pyproject.toml's ``[project]`` table; the version is ``__version__`` in
``prodgraph/_version.py``. Builds are byte-for-byte reproducible: every entry is stamped with
``SOURCE_DATE_EPOCH`` when set, else 1980-01-01.
"""

from __future__ import annotations

import base64
import csv
import gzip
import hashlib
import io
import json
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "build_wheel",
    "build_sdist",
    "build_editable",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
]

ROOT = Path(__file__).resolve().parent.parent
BACKEND = Path(__file__).resolve().relative_to(ROOT).as_posix()
# The oldest date a zip entry can carry.
EPOCH_1980 = 315532800
WHEEL = "Wheel-Version: 1.0\nGenerator: prodgraph_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


# -- PEP 517 / PEP 660 hooks ----------------------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    project = Project.read()
    target = Path(metadata_directory) / project.dist_info
    target.mkdir(parents=True, exist_ok=True)
    for name, data in project.metadata_files():
        (target / name).write_bytes(data)
    return project.dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    project = Project.read()
    return project.write_wheel(Path(wheel_directory), project.package_files())


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    project = Project.read()
    # a .pth line is a folder put on sys.path at start-up: this one, where the package lives
    pth = (str(ROOT) + "\n").encode("utf-8")
    return project.write_wheel(Path(wheel_directory), [(f"_{project.package}_editable.pth", pth)])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    project = Project.read()
    base = f"{project.name}-{project.version}"
    files = [("pyproject.toml", _read("pyproject.toml")), (project.readme, _read(project.readme))]
    files += [(BACKEND, _read(BACKEND))]
    files += project.package_files()
    files += [("PKG-INFO", project.metadata())]
    name = f"{base}.tar.gz"
    Path(sdist_directory).mkdir(parents=True, exist_ok=True)
    with open(Path(sdist_directory) / name, "wb") as out:
        # the gzip header carries a time too: the same one, so the archive is reproducible
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=_stamp()) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel, data in sorted(files):
                    info = tarfile.TarInfo(f"{base}/{rel}")
                    info.size, info.mtime, info.mode = len(data), _stamp(), 0o644
                    tar.addfile(info, io.BytesIO(data))
    return name


# -- the project ---------------------------------------------------------------------------------


class Project:
    """pyproject.toml's ``[project]``, and the files and metadata made from it."""

    def __init__(self, table: Dict[str, Any]) -> None:
        self.table = table
        self.name: str = table["name"]
        # the package is the folder named after the project (a distribution of one package)
        self.package = re.sub(r"[-.]+", "_", self.name).lower()
        self.version = table.get("version") or _version(self.package)
        self.readme: str = table.get("readme", "")
        self.dist_info = f"{self.package}-{self.version}.dist-info"

    @classmethod
    def read(cls) -> "Project":
        doc = parse_toml(_read("pyproject.toml").decode("utf-8"))
        if doc["project"].get("dependencies"):
            raise ValueError("pyproject.toml: the client has no dependencies, and this backend writes none")
        return cls(doc["project"])

    def package_files(self) -> List[Tuple[str, bytes]]:
        """The package's sources and py.typed (no caches, nothing else), sorted."""
        folder = ROOT / self.package
        found = []
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and (path.suffix == ".py" or path.name == "py.typed"):
                found.append((path.relative_to(ROOT).as_posix(), path.read_bytes()))
        return found

    def metadata(self) -> bytes:
        """METADATA (core metadata 2.1): what pip and importlib.metadata read."""
        t = self.table
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        if t.get("description"):
            lines.append(f"Summary: {t['description']}")
        license_ = t.get("license")
        if isinstance(license_, dict) and license_.get("text"):
            lines.append(f"License: {license_['text']}")
        if t.get("requires-python"):
            lines.append(f"Requires-Python: {t['requires-python']}")
        lines += [f"Classifier: {c}" for c in t.get("classifiers", [])]
        for label, url in t.get("urls", {}).items():
            lines.append(f"Project-URL: {label}, {url}")
        text = "\n".join(lines) + "\n"
        if self.readme:
            kind = "text/markdown" if self.readme.lower().endswith(".md") else "text/plain"
            text += f"Description-Content-Type: {kind}\n\n" + _read(self.readme).decode("utf-8")
        return text.encode("utf-8")

    def entry_points(self) -> bytes:
        scripts = self.table.get("scripts", {})
        if not scripts:
            return b""
        lines = ["[console_scripts]"] + [f"{name} = {target}" for name, target in scripts.items()]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def metadata_files(self) -> List[Tuple[str, bytes]]:
        files = [("METADATA", self.metadata()), ("WHEEL", WHEEL.encode("ascii"))]
        if self.entry_points():
            files.append(("entry_points.txt", self.entry_points()))
        return files

    def write_wheel(self, directory: Path, files: List[Tuple[str, bytes]]) -> str:
        """A wheel of ``files`` and the dist-info, RECORD last; returns its file name."""
        entries = list(files) + [(f"{self.dist_info}/{n}", d) for n, d in self.metadata_files()]
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        for rel, data in entries:
            writer.writerow([rel, _hash(data), str(len(data))])
        writer.writerow([f"{self.dist_info}/RECORD", "", ""])
        entries.append((f"{self.dist_info}/RECORD", record.getvalue().encode("utf-8")))
        name = f"{self.package}-{self.version}-py3-none-any.whl"
        directory.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(directory / name, "w", zipfile.ZIP_DEFLATED) as whl:
            stamp = time.gmtime(_stamp())[:6]
            for rel, data in entries:
                info = zipfile.ZipInfo(rel, date_time=stamp)
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                whl.writestr(info, data)
        return name


def _read(rel: str) -> bytes:
    return (ROOT / rel).read_bytes()


def _version(package: str) -> str:
    text = _read(f"{package}/_version.py").decode("utf-8")
    match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if not match:
        raise ValueError(f"{package}/_version.py: no __version__ = \"...\" line")
    return match.group(1)


def _hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _stamp() -> int:
    return max(EPOCH_1980, int(os.environ.get("SOURCE_DATE_EPOCH") or EPOCH_1980))


# -- TOML: the part of it pyproject.toml uses ----------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_toml(text: str) -> Dict[str, Any]:
    """Tables, dotted keys, strings, integers, booleans, arrays and inline tables: what
    pyproject.toml uses (tomllib is only in Python 3.11+). Anything else is refused by name."""
    return _Toml(text).document()


class _Toml:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def fail(self, what: str) -> ValueError:
        line = self.s.count("\n", 0, self.i) + 1
        return ValueError(f"pyproject.toml line {line}: {what} (this backend reads a subset of TOML)")

    def skip(self, newlines: bool) -> None:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            elif c == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
            else:
                return

    def expect(self, char: str) -> None:
        self.skip(newlines=False)
        if not self.s.startswith(char, self.i):
            raise self.fail(f"expected {char!r}")
        self.i += 1

    def document(self) -> Dict[str, Any]:
        root: Dict[str, Any] = {}
        table = root
        while True:
            self.skip(newlines=True)
            if self.i >= len(self.s):
                return root
            if self.s.startswith("[[", self.i):
                raise self.fail("arrays of tables")
            if self.s[self.i] == "[":
                self.i += 1
                table = root
                for key in self.keys():
                    table = table.setdefault(key, {})
                self.expect("]")
            else:
                self.assign(table)
            self.skip(newlines=False)
            if self.i < len(self.s) and self.s[self.i] != "\n":
                raise self.fail("expected the end of the line")

    def keys(self) -> List[str]:
        keys = []
        while True:
            self.skip(newlines=False)
            quoted = _BASIC.match(self.s, self.i) or _LITERAL.match(self.s, self.i)
            match = quoted or _BARE_KEY.match(self.s, self.i)
            if not match:
                raise self.fail("expected a key")
            self.i = match.end()
            keys.append(self.string(match.group()) if quoted else match.group())
            self.skip(newlines=False)
            if not self.s.startswith(".", self.i):
                return keys
            self.i += 1

    def assign(self, table: Dict[str, Any]) -> None:
        *parents, last = self.keys()
        for key in parents:
            table = table.setdefault(key, {})
        self.expect("=")
        self.skip(newlines=False)
        if last in table:
            raise self.fail(f"{last} given twice")
        table[last] = self.value()

    def value(self) -> Any:
        for pattern in (_BASIC, _LITERAL):
            match = pattern.match(self.s, self.i)
            if match:
                self.i = match.end()
                return self.string(match.group())
        if self.s.startswith("[", self.i):
            return self.array()
        if self.s.startswith("{", self.i):
            return self.inline_table()
        for word, value in (("true", True), ("false", False)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return value
        match = _INTEGER.match(self.s, self.i)
        if match:
            self.i = match.end()
            return int(match.group())
        raise self.fail("a value of a kind this backend does not read")

    def string(self, token: str) -> str:
        if token.startswith("'"):
            return token[1:-1]
        if token.startswith('"""'):
            raise self.fail("multi-line strings")
        try:
            return json.loads(token)  # TOML's basic-string escapes are JSON's (but \e, \U)
        except ValueError:
            raise self.fail("a string escape this backend does not read") from None

    def array(self) -> List[Any]:
        self.i += 1
        items = []
        while True:
            self.skip(newlines=True)
            if self.s.startswith("]", self.i):
                self.i += 1
                return items
            items.append(self.value())
            self.skip(newlines=True)
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("]", self.i):
                raise self.fail("expected ',' or ']' in an array")

    def inline_table(self) -> Dict[str, Any]:
        self.i += 1
        table: Dict[str, Any] = {}
        self.skip(newlines=False)
        if self.s.startswith("}", self.i):
            self.i += 1
            return table
        while True:
            self.assign(table)
            self.skip(newlines=False)
            if self.s.startswith("}", self.i):
                self.i += 1
                return table
            self.expect(",")
