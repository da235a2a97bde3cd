"""Checks a live answer against the client's generated TypedDicts, recursively."""

from __future__ import annotations

import sys
import typing
from typing import Any, List, Union

import prodgraph.types as types_module

_NONE = type(None)


def _origin(tp: Any) -> Any:
    return getattr(tp, "__origin__", None)


def _is_typed_dict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def problems(value: Any, tp: Any, where: str = "$") -> List[str]:
    """Every way ``value`` departs from ``tp`` (empty when it conforms)."""
    if tp is Any:
        return []
    if tp is _NONE or tp is None:
        return [] if value is None else [f"{where}: expected null, got {value!r:.60}"]
    origin = _origin(tp)
    if origin is Union:
        for member in tp.__args__:
            if not problems(value, member, where):
                return []
        return [f"{where}: {value!r:.80} matches none of {tp}"]
    if origin is typing.Literal:
        return [] if value in tp.__args__ else [f"{where}: {value!r} not one of {tp.__args__}"]
    if origin in (list, List):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        (item,) = tp.__args__
        out: List[str] = []
        for i, v in enumerate(value):
            out += problems(v, item, f"{where}[{i}]")
        return out
    if origin in (dict, typing.Dict):
        return [] if isinstance(value, dict) else [f"{where}: expected an object"]
    if _is_typed_dict(tp):
        if not isinstance(value, dict):
            return [f"{where}: expected {tp.__name__}, got {type(value).__name__}"]
        hints = typing.get_type_hints(tp, vars(sys.modules[types_module.__name__]))
        out = [f"{where}: {tp.__name__} lacks {k!r}" for k in sorted(tp.__required_keys__) if k not in value]
        for key, sub in hints.items():
            if key in value:
                out += problems(value[key], sub, f"{where}.{key}")
        return out
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected a number, got {value!r:.40}"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected an integer, got {value!r:.40}"]
    if isinstance(tp, type):
        return [] if isinstance(value, tp) else [f"{where}: expected {tp.__name__}, got {value!r:.40}"]
    return []
