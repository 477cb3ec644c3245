"""The public Python API held to a snapshot (api_snapshot.json): every name in
``mixdown.__all__``, the module it says it belongs to, each function's signature, and each
class's constructor, bases and public members with their signatures. A change to the API,
or a reorganisation that moves a name, fails here until the snapshot is rewritten on
purpose: ``python python/tests/test_api.py --write`` (with mixdown importable)."""
from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import mixdown

SNAPSHOT = Path(__file__).with_name("api_snapshot.json")
DUNDERS = ("__enter__", "__exit__", "__iter__", "__next__", "__len__", "__repr__", "__str__")


def describe_member(value) -> str:
    if isinstance(value, property):
        return "property"
    if isinstance(value, (staticmethod, classmethod)):
        return f"{type(value).__name__}{inspect.signature(value.__func__)}"
    if callable(value):
        return f"def{inspect.signature(value)}"
    return type(value).__name__


def signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except ValueError:  # a builtin base's constructor (an exception, a warning)
        return "(builtin)"


def describe(name: str) -> dict:
    obj = getattr(mixdown, name)
    if inspect.isclass(obj):
        members = {k: describe_member(v) for k, v in vars(obj).items()
                   if (not k.startswith("_") or k in DUNDERS) and k != "__dataclass_fields__"}
        return {"kind": "class", "module": obj.__module__, "signature": signature(obj),
                "bases": [b.__qualname__ for b in obj.__bases__], "members": dict(sorted(members.items()))}
    if callable(obj):
        return {"kind": "function", "module": obj.__module__, "signature": str(inspect.signature(obj))}
    return {"kind": type(obj).__name__}


def api() -> dict:
    return {"__all__": list(mixdown.__all__), "names": {name: describe(name) for name in sorted(mixdown.__all__)}}


def test_the_public_api_matches_its_snapshot() -> None:
    expected = json.loads(SNAPSHOT.read_text())
    got = api()
    assert got["__all__"] == expected["__all__"]
    for name in expected["names"]:
        assert got["names"][name] == expected["names"][name], name


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SNAPSHOT.write_text(json.dumps(api(), indent=1, sort_keys=False) + "\n")
    print(f"wrote {SNAPSHOT}")
