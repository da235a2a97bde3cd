#!/usr/bin/env python3
"""Writes prodgraph/types.py: a TypedDict per answer shape, from the server's OpenAPI document.

    python3 clients/python/tools/generate_types.py            # the document of this checkout's server
    python3 clients/python/tools/generate_types.py --url http://127.0.0.1:8080/api/v1/openapi.json
    python3 clients/python/tools/generate_types.py --file openapi.json [--out -]

The client's tests regenerate the module from the live server's document and fail when it
differs from the committed one, so the types cannot drift from the API. Names come from
``prodgraph._operations.OPERATIONS`` for each operation's answer, and from the parent and
the field for nested objects (``Asset`` → ``versions`` → ``AssetVersion``); a shape met again
anywhere keeps its first name. Descriptions and examples do not change the output.
"""

from __future__ import annotations

import argparse
import json
import keyword
import os
import sys
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from prodgraph._operations import OPERATIONS  # noqa: E402

# Nicer names for shapes whose generated name says little (generated name → name).
RENAME = {
    "AssetVersion1": "ReleasedVersion",
    "AssetVersion2": "LockedVersion",
    "ReleasedVersionNote": "VersionNote",
    "ReleasedVersionIngredient": "Ingredient",
    "SceneBundleAssetReleasedVersion": "VersionSummary",
    "ChangesPageChange": "Change",
    "DepartmentDetailPeople": "DepartmentMember",
    "PurchaseOrdersPurchaseOrder": "PurchaseOrder",
    "PurchaseOrdersLine": "CostReportLine",
    "BundleEntry1": "SceneBundleEntry",
    "BundleEntry2": "CharacterBundleEntry",
    # a file of a package or of a submission: one shape (media id, label, type, size, SHA-256)
    "DeliveryPackage": "MediaFile",
    "DeliverySubmission": "SubmissionRow",
    "SubmissionRowReview": "Review",
}

HEADER = '''"""Typed shapes of the server's answers (TypedDicts), generated from its OpenAPI document.

Do not edit: run ``python clients/python/tools/generate_types.py`` against a server instead.
The tests regenerate this module from the live document and fail when it differs.
Answers may carry fields added later (the API only ever adds): read them as ordinary dict keys.
"""

# fmt: off
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union
'''

_SKIP = ("description", "examples", "example", "title", "$id", "default", "format")


def _canonical(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _canonical(v) for k, v in sorted(schema.items()) if k not in _SKIP}
    if isinstance(schema, list):
        return [_canonical(v) for v in schema]
    return schema


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_") if part)


def _singular(name: str) -> str:
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("ses"):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


class Generator:
    def __init__(self, doc: Dict[str, Any]) -> None:
        self.doc = doc
        self.classes: List[str] = []
        self.by_shape: Dict[str, str] = {}
        self.names: Dict[str, str] = {}

    def resolve(self, schema: Dict[str, Any]) -> Dict[str, Any]:
        while "$ref" in schema:
            node: Any = self.doc
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def annotation(self, schema: Dict[str, Any], context: str) -> str:
        schema = self.resolve(schema)
        for combinator in ("anyOf", "oneOf"):
            if combinator in schema:
                return self.union(schema[combinator], context)
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        if "enum" in schema:
            return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.union([dict(schema, type=k) for k in kind], context)
        if kind == "array":
            return f"List[{self.annotation(schema.get('items', {}), _singular(context))}]"
        if kind == "object":
            if not schema.get("properties"):
                return "Dict[str, Any]"
            return self.typed_dict(schema, context)
        return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(
            str(kind), "Any"
        )

    def union(self, members: List[Dict[str, Any]], context: str) -> str:
        nullable = any(self.resolve(m).get("type") == "null" for m in members)
        rest = [m for m in members if self.resolve(m).get("type") != "null"]
        several = len(rest) > 1
        parts = [self.annotation(m, f"{context}{i + 1}" if several else context) for i, m in enumerate(rest)]
        inner = parts[0] if len(parts) == 1 else "Union[" + ", ".join(parts) + "]"
        return f"Optional[{inner}]" if nullable else inner

    def typed_dict(self, schema: Dict[str, Any], context: str) -> str:
        shape = json.dumps(_canonical(schema), sort_keys=True)
        if shape in self.by_shape:
            return self.by_shape[shape]
        name = RENAME.get(context, context)
        while name in self.names:
            name += "_"
        self.names[name] = shape
        self.by_shape[shape] = name
        required = set(schema.get("required", []))
        fields: List[Tuple[str, str, bool]] = []
        for prop, sub in schema["properties"].items():
            if keyword.iskeyword(prop) or not prop.isidentifier():
                raise SystemExit(f"{name}.{prop}: not a Python identifier; extend the generator")
            fields.append((prop, self.annotation(sub, name + _camel(prop)), prop in required))
        self.classes.append(self.render(name, fields))
        return name

    @staticmethod
    def render(name: str, fields: List[Tuple[str, str, bool]]) -> str:
        needed = [f for f in fields if f[2]]
        optional = [f for f in fields if not f[2]]
        lines: List[str] = []
        if needed and optional:
            lines.append(f"class _{name}Required(TypedDict):")
            lines += [f"    {prop}: {ann}" for prop, ann, _ in needed]
            lines += ["", "", f"class {name}(_{name}Required, total=False):"]
            lines += [f"    {prop}: {ann}" for prop, ann, _ in optional]
        elif optional:
            lines.append(f"class {name}(TypedDict, total=False):")
            lines += [f"    {prop}: {ann}" for prop, ann, _ in optional]
        else:
            lines.append(f"class {name}(TypedDict):")
            lines += [f"    {prop}: {ann}" for prop, ann, _ in needed]
        return "\n".join(lines)

    def answer_schema(self, method: str, path: str) -> Optional[Dict[str, Any]]:
        ops = self.doc["paths"].get(path) or self.doc["paths"].get(path.replace("{path}", "{*}"))
        if ops is None or method.lower() not in ops:
            raise SystemExit(f"{method} {path}: not in the OpenAPI document")
        for status, answer in sorted(ops[method.lower()].get("responses", {}).items()):
            if status.startswith("2"):
                content = (answer.get("content") or {}).get("application/json")
                if content:
                    return self.resolve(content["schema"])
        return None

    def run(self) -> str:
        exported: List[str] = []
        for _op, method, path, type_name in OPERATIONS:
            if type_name is None:
                continue
            schema = self.answer_schema(method, path)
            if schema is None:
                raise SystemExit(f"{method} {path}: no JSON answer to type as {type_name}")
            if schema.get("type") == "array":
                schema = self.resolve(schema.get("items", {}))
            if "anyOf" in schema or "oneOf" in schema:
                made = self.annotation(schema, type_name)  # e.g. a list of scenes and characters
            else:
                made = self.typed_dict(schema, type_name)
            if made != type_name:
                if type_name in self.names:
                    raise SystemExit(f"{type_name}: already the name of another shape; rename one in RENAME")
                self.classes.append(f"{type_name} = {made}")
            if type_name not in exported:
                exported.append(type_name)
        error = self.doc.get("components", {}).get("schemas", {}).get("ErrorBody")
        if error:
            self.typed_dict(error, "ErrorBody")
            exported.append("ErrorBody")
        names = sorted(set(exported) | {n for n in self.names if not n.startswith("_")})
        out = [HEADER, "__all__ = [" + ", ".join(repr(n) for n in names) + "]", ""]
        for block in self.classes:
            out += ["", block, ""]
        return "\n".join(out).rstrip() + "\n"


def generate(doc: Dict[str, Any]) -> str:
    """The source of prodgraph/types.py for an OpenAPI document."""
    return Generator(doc).run()


# Prints the OpenAPI document an app built from this checkout serves (default configuration).
SERVED = """
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { buildApp } = await import('./src/app.ts');
const { loadConfig } = await import('./src/config.ts');
const dir = mkdtempSync(join(tmpdir(), 'prodgraph-openapi-'));
const app = await buildApp({ config: loadConfig({ db: join(dir, 'doc.db'), media: join(dir, 'media') }, {}), logger: false });
const res = await app.inject({ url: '/api/v1/openapi.json' });
process.stdout.write(res.body);
await app.close();
rmSync(dir, { recursive: true, force: true });
"""


def served_by_checkout() -> Dict[str, Any]:
    import subprocess

    repo = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    cmd = ["node", "--import", "tsx", "--input-type=module", "-e", SERVED]
    done = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"could not build the server's document:\n{done.stderr}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--url", help="the served document, e.g. http://127.0.0.1:8080/api/v1/openapi.json")
    source.add_argument("--file", help="a saved copy of the document")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "prodgraph", "types.py"))
    args = parser.parse_args()
    if args.url:
        with urllib.request.urlopen(args.url, timeout=30) as answer:
            doc = json.load(answer)
    elif args.file:
        with open(args.file, encoding="utf-8") as f:
            doc = json.load(f)
    else:
        doc = served_by_checkout()
    source_text = generate(doc)
    if args.out == "-":
        sys.stdout.write(source_text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(source_text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
