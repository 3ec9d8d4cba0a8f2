"""Check a JSON text's size and nesting depth before parsing it.

``json.loads`` recurses once per nesting level.  In Pyodide the WebAssembly
stack is far smaller than CPython's, so a crafted file of a few kilobytes
(``[[[[...`` 5,000 deep) overflows it and kills the interpreter: the engine
never answers.  ``check`` finds the depth with a linear scan that skips string
literals (a ``[`` inside ``"..."`` is text), so the refusal comes first.

>>> depth(b'{"a": [1, {"b": "[[[["}]}')
3
>>> check(b"[" * 300 + b"]" * 300, "vault.json")
Traceback (most recent call last):
...
quire.jsonlimits.JSONLimitError: vault.json is nested 300 levels deep (at most 100 are allowed); the file was crafted or is damaged
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from quire.errors import QuireError

MAX_DEPTH = 100  # Quire's own data nests far less (a mind map in a study set: about 15); a 5,000-deep file killed Pyodide
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a complete JSON string literal, escapes included
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int8)
_STEP[list(b"[{")], _STEP[list(b"]}")] = 1, -1
_BLOCK = 1 << 24  # bytes per numpy pass: bounds the scan's extra memory to ~100 MB


class JSONLimitError(QuireError):
    """JSON refused before parsing; the message says why, for the person."""


def depth(data: bytes) -> int:
    """The deepest nesting of ``[`` / ``{`` outside string literals (0 for a scalar)."""
    brackets = _STRING.sub(b"", bytes(data)).translate(None, _NOT_BRACKET)
    deepest = level = 0
    for start in range(0, len(brackets), _BLOCK):
        steps = _STEP[np.frombuffer(brackets[start:start + _BLOCK], dtype=np.uint8)].astype(np.int64)
        running = level + np.cumsum(steps)
        deepest = max(deepest, int(running.max()))
        level = int(running[-1])
    return deepest


def check(data: bytes, what: str, max_depth: int = MAX_DEPTH, max_bytes: int | None = None) -> None:
    """Raise ``JSONLimitError`` if ``data`` is larger than ``max_bytes`` or nested deeper than ``max_depth``."""
    if max_bytes is not None and len(data) > max_bytes:
        raise JSONLimitError(f"{what} is {len(data):,} bytes (at most {max_bytes:,} are allowed); "
                             "the file was crafted or is damaged")
    found = depth(data)
    if found > max_depth:
        raise JSONLimitError(f"{what} is nested {found} levels deep (at most {max_depth} are allowed); "
                             "the file was crafted or is damaged")


def loads(data: bytes | str, what: str, max_depth: int = MAX_DEPTH, max_bytes: int | None = None) -> Any:
    """``json.loads`` after ``check``; a parse error becomes ``JSONLimitError`` too."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    check(raw, what, max_depth, max_bytes)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise JSONLimitError(f"{what} is not valid JSON ({exc})") from None
