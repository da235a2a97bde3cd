"""The client against the served OpenAPI document: operations, types, error codes, version.

Each fails when the server and the client drift apart: an operation added, renamed or moved;
an answer's shape changed (the committed types differ from those generated now); an error code
without an exception class; a query parameter a method cannot send; a version out of step.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import unittest
import urllib.request
from typing import Any, Dict, Tuple

from live import CLIENT_DIR, REPO, live

import prodgraph
from prodgraph._operations import OPERATIONS, snake
from prodgraph.errors import CODES

# Routes the client deliberately leaves out: MCP's GET and DELETE only ever answer 405; the
# console's sign-in is a browser's, with a cookie (tools authenticate with keys).
NOT_CLIENT_METHODS = {
    ("GET", "/mcp"),
    ("DELETE", "/mcp"),
    ("GET", "/api/v1/auth/oidc/login"),
    ("GET", "/api/v1/auth/oidc/callback"),
    ("GET", "/api/v1/auth/session"),
    ("GET", "/api/v1/auth/sign-in-options"),
    ("POST", "/api/v1/auth/sign-out"),
}
# Parameters the client sends itself rather than taking from the caller.
HANDLED = {"cursor", "if-none-match", "idempotency-key", "t", "path", "mcp-protocol-version", "range", "if-range"}


def _document() -> Dict[str, Any]:
    with urllib.request.urlopen(live().url + "/api/v1/openapi.json", timeout=30) as answer:
        return json.load(answer)


def _operations(doc: Dict[str, Any]) -> Dict[Tuple[str, str], Dict[str, Any]]:
    out = {}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                out[(method.upper(), path.replace("{*}", "{path}"))] = op
    return out


class Contract(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.doc = _document()
        cls.ops = _operations(cls.doc)

    def test_every_operation_has_its_method(self) -> None:
        ours = {(m, p): op_id for op_id, m, p, _ in OPERATIONS}
        theirs = {k for k in self.ops if k not in NOT_CLIENT_METHODS}
        self.assertEqual(sorted(theirs - set(ours)), [], "operations the client lacks")
        self.assertEqual(sorted(set(ours) - theirs), [], "client methods for operations the server lacks")
        for key, op_id in ours.items():
            served = self.ops[key].get("operationId")
            if served is not None:
                self.assertEqual(served, op_id, f"{key}: the server calls it {served}")
            self.assertTrue(callable(getattr(prodgraph.Client, snake(op_id), None)), snake(op_id))

    def test_every_parameter_can_be_sent(self) -> None:
        for op_id, method, path, _ in OPERATIONS:
            params = self.ops[(method, path)].get("parameters", [])
            sig = inspect.signature(getattr(prodgraph.Client, snake(op_id)))
            names = set(sig.parameters)
            for param in params:
                name = param["name"]
                if name in HANDLED or (param["in"] == "path" and len(sig.parameters) > 1):
                    continue
                with self.subTest(op=op_id, param=name):
                    self.assertIn(name, names, f"{snake(op_id)}() cannot send ?{name}")
            pages = any(p["name"] == "cursor" for p in params)
            if pages:
                self.assertIn("limit", names, f"{snake(op_id)}() pages, so it takes limit")

    def test_generated_types_are_current(self) -> None:
        spec = importlib.util.spec_from_file_location("generate_types", CLIENT_DIR / "tools" / "generate_types.py")
        assert spec and spec.loader
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        committed = (CLIENT_DIR / "prodgraph" / "types.py").read_text(encoding="utf-8")
        fresh = gen.generate(self.doc)
        self.assertEqual(
            fresh,
            committed,
            "prodgraph/types.py is stale: run python3 clients/python/tools/generate_types.py",
        )

    def test_every_error_code_has_its_exception(self) -> None:
        codes = self.doc["components"]["schemas"]["ErrorBody"]["properties"]["code"]["enum"]
        self.assertEqual(sorted(set(codes) - set(CODES)), [], "codes without an exception class")
        described = self.doc["components"]["schemas"]["ErrorBody"]["properties"]["code"].get("description", "")
        for code, (status, cls) in CODES.items():
            mentioned = re.search(rf"`{code}`[^\n]*\((\d{{3}})\)", described)
            if mentioned:
                self.assertEqual(int(mentioned.group(1)), status, code)
            self.assertTrue(issubclass(cls, prodgraph.ApiError))

    def test_version_is_the_servers(self) -> None:
        package = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
        self.assertEqual(prodgraph.__version__, package["version"])
        # the wheel's version: what the build backend reads (prodgraph/_version.py)
        from test_packaging import backend

        self.assertEqual(backend().Project.read().version, package["version"])


if __name__ == "__main__":
    unittest.main()
