"""A real prodgraph server for the client's tests, started from this repository.

One server per test process, started on first use: a fresh database (a SQLite file, or a
PostgreSQL schema of its own when ``PRODGRAPH_PY_DB`` is a postgres:// URL), the demo series
``nightfall`` imported with the CLI, keys minted with the CLI, then ``prodgraph serve`` on a
free port. A stand-in generation provider (a few lines of http.server) lets the vision
session-token route answer. Everything is removed when the process exits.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
CLIENT_DIR = HERE.parent
REPO = CLIENT_DIR.parent.parent
if str(CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENT_DIR))

NODE = os.environ.get("PRODGRAPH_NODE", "node")
DOCUMENT = REPO / "demo" / "episodic" / "production.yaml"
PRODUCTION = "nightfall"
ALL_SCOPES = "read,write,submit:turnover,read:money,admin"
# Small enough that a test can exceed it without writing megabytes.
MAX_UPLOAD_BYTES = 2 * 1024 * 1024


class Live:
    """The running server: its URL, keys, the import's refs, and its log."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="prodgraph-py-"))
        self.media = self.dir / "media"
        self.db_url = os.environ.get("PRODGRAPH_PY_DB", "sqlite")
        self.schema: Optional[str] = None
        self.log: Deque[str] = deque(maxlen=20000)
        self.log_lock = threading.Lock()
        self.proc: Optional[subprocess.Popen] = None
        self.others: List[subprocess.Popen] = []
        self.provider = _Provider()
        self.db = self._database()
        self.refs: Dict[str, int] = self._import()
        # the server starts while the keys are minted (each CLI run costs a Node start-up)
        minted: Dict[str, str] = {}
        mints = [
            threading.Thread(target=lambda: minted.update(admin=self.mint("py admin", ALL_SCOPES))),
            threading.Thread(
                target=lambda: minted.update(
                    vendor=self.mint("py vendor", "read,submit:turnover,read:money", engagement="eng-pixel")
                )
            ),
            # a storage task for the agent's routes to list and acknowledge
            threading.Thread(
                target=lambda: minted.update(
                    task=self.cli("storage", "task", "--production", PRODUCTION, "--from", "a/b.exr", "--to", "c/b.exr")
                )
            ),
        ]
        for t in mints:
            t.start()
        self.url, self.proc = self._serve()
        for t in mints:
            t.join()
        if len(minted) != 3:
            raise RuntimeError("minting the test keys or queueing the storage task failed (see above)")
        self.admin_key = minted["admin"]
        self.vendor_key = minted["vendor"]

    @property
    def dialect(self) -> str:
        return "postgres" if self.schema else "sqlite"

    # -- setup ---------------------------------------------------------------------------------

    def _database(self) -> str:
        if not self.db_url.startswith(("postgres://", "postgresql://")):
            return str(self.dir / "prodgraph.db")
        self.schema = "py_" + uuid.uuid4().hex[:12]
        _psql(self.db_url, f'CREATE SCHEMA "{self.schema}"')
        parts = urllib.parse.urlsplit(self.db_url)
        query = urllib.parse.parse_qsl(parts.query)
        query.append(("options", f"-c search_path={self.schema}"))
        return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))

    def cli(self, *args: str) -> str:
        """Runs ``prodgraph ARGS`` from the repository on this server's database."""
        cmd = [*_prodgraph(), *args, "--db", self.db, "--media", str(self.media)]
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(f"prodgraph {' '.join(args)} failed:\n{done.stderr}")
        return done.stdout

    def _import(self) -> Dict[str, int]:
        out = json.loads(self.cli("import", str(DOCUMENT), "--json"))
        return out["refs"]

    def mint(self, label: str, scopes: str, engagement: Optional[str] = None) -> str:
        args = ["keys", "mint", "--production", PRODUCTION, "--label", label, "--scopes", scopes, "--json"]
        if engagement:
            args += ["--engagement", engagement]
        return json.loads(self.cli(*args))["token"]

    def serve_another(self, **settings: str) -> str:
        """A second server on the same database and media store, with these settings changed
        (e.g. ``PRODGRAPH_MAX_UPLOAD_BYTES``); stopped with the first. Its URL."""
        url, proc = self._serve(**settings)
        self.others.append(proc)
        return url

    def _serve(self, **settings: str) -> Tuple[str, subprocess.Popen]:
        port = _free_port()
        env = dict(
            os.environ,
            PRODGRAPH_LOG_LEVEL="info",
            PRODGRAPH_RATE_LIMIT="off",
            PRODGRAPH_MAX_UPLOAD_BYTES=str(MAX_UPLOAD_BYTES),
            PRODGRAPH_FEED_MAX_WAIT_SECONDS="30",
            PRODGRAPH_WEBHOOK_RETRY_BASE_MS="200",
            # the tests' webhook receivers listen on this machine: loopback must be allowed
            PRODGRAPH_WEBHOOK_ALLOW="127.0.0.1/32",
            PRODGRAPH_VISION_TOKEN_URL=self.provider.url,
            PRODGRAPH_VISION_CREDENTIAL="sk-test-provider-credential",
        )
        env.update(settings)
        cmd = [*_prodgraph(), "serve", "--db", self.db, "--media", str(self.media)]
        cmd += ["--port", str(port)]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()
        threading.Thread(target=self._drain, args=(proc, ready), daemon=True).start()
        # event-driven (the "listening" line, or the end of its output if it dies); the cap only
        # bounds a server that hangs, and must allow a start-up on a machine loaded by others
        if not ready.wait(300) or proc.poll() is not None:
            _stop(proc)
            raise RuntimeError("prodgraph serve did not start:\n" + "\n".join(self.log))
        return f"http://127.0.0.1:{port}", proc

    def _drain(self, proc: subprocess.Popen, ready: threading.Event) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self.log_lock:
                self.log.append(line.rstrip("\n"))
            if "Server listening at" in line:
                ready.set()
        ready.set()

    # -- teardown ------------------------------------------------------------------------------

    def stop(self) -> None:
        for proc in [*self.others, self.proc]:
            if proc is not None:
                _stop(proc)
        self.provider.stop()
        if self.schema:
            _psql(self.db_url, f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        shutil.rmtree(self.dir, ignore_errors=True)


_live: Optional[Live] = None
_lock = threading.Lock()


def live() -> Live:
    """The test process's server, started on first use."""
    global _live
    with _lock:
        if _live is None:
            _live = Live()
            atexit.register(_live.stop)
        return _live


def client(key: Optional[str] = None, **kwargs: Any) -> Any:
    """A client of the live server (the admin key unless another is given), quick to back off."""
    from prodgraph import Client

    server = live()
    made = Client(server.url, key or server.admin_key, **kwargs)
    made._transport.backoff = 0.05
    return made


def _prodgraph() -> List[str]:
    """The CLI: the build in dist/ when it is newer than every source file (as after ``npm ci``),
    else the sources through tsx (a Node start-up with tsx costs twice as long)."""
    built = REPO / "dist" / "cli.js"
    if built.exists():
        stamp = built.stat().st_mtime
        if all(p.stat().st_mtime <= stamp for p in (REPO / "src").rglob("*.ts")):
            return [NODE, str(built)]
    return [NODE, "--import", "tsx", "src/cli.ts"]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _psql(url: str, sql: str) -> None:
    subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], check=True, capture_output=True)


class _Provider:
    """A stand-in generation provider's token endpoint (what PRODGRAPH_VISION_TOKEN_URL names)."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                asked = json.loads(self.rfile.read(length) or b"{}")
                body = json.dumps({"token": f"tok-{uuid.uuid4().hex}", "expires_in": asked.get("expires_in", 300)})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/auth/tokens"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def jpeg(seed: int = 0) -> bytes:
    """A small, valid, distinct JPEG (the demo's images, with a comment segment to vary it)."""
    base = next((DOCUMENT.parent / "media").rglob("*.jpg")).read_bytes()
    comment = f"prodgraph test {seed} {uuid.uuid4().hex}".encode()
    segment = b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment
    return base[:2] + segment + base[2:]


def interruptible() -> None:
    """Run in a tool's process before it starts (``preexec_fn``): Ctrl-C (SIGINT) interrupts it, as in a terminal.

    A shell without job control starts background commands with SIGINT ignored, and every process
    below inherits that; Python then installs no KeyboardInterrupt handler, and the tests'
    interrupt would never arrive (CI started as ``nohup .ci/run &`` is such a case).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(predicate: Any, timeout: float = 10.0, step: float = 0.05) -> Any:
    """Polls until ``predicate()`` is truthy; its value, or AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s")
        time.sleep(step)


def tokens_in_log(server: Live, tokens: List[str]) -> List[str]:
    """Log lines that show any of these secrets (there must be none)."""
    with server.log_lock:
        lines = list(server.log)
    return [line for line in lines for t in tokens if t and t in line]
