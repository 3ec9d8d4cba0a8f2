"""Achievements: targets on named metrics, defined as data in ``quire/data/badges.json``.

A badge is ``{"code", "name", "icon", "description", "metric", "target", "next"?}``;
it is earned when ``metrics.compute(metric, data, now) >= target``.  ``next``
names the following badge in its ladder (First question -> 25 -> 100).  A new
badge is a new JSON entry; only a new *kind* of count needs code (in ``metrics``).

>>> defs = [{"code": "q1", "name": "Curious", "icon": "?", "description": "Ask a question.",
...          "metric": "questions_asked", "target": 1}]
>>> [b["code"] for b in evaluate(defs, {"events": [{"t": 0, "kind": "chat"}]}, already_awarded=[], now=0)]
['q1']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from quire.progress import metrics
from quire.progress.clock import Instant, to_datetime, to_ms

DEFINITIONS = Path(__file__).resolve().parents[1] / "data" / "badges.json"
REQUIRED = ("code", "name", "icon", "description", "metric", "target")


def load_definitions(path: Path = DEFINITIONS) -> list[dict]:
    """The badge definitions, checked (see ``check_definitions``)."""
    return check_definitions(json.loads(Path(path).read_text(encoding="utf-8"))["badges"])


def check_definitions(definitions: list[dict]) -> list[dict]:
    """The definitions, or ``ValueError`` naming the first bad one: missing fields,
    duplicate codes, a target that is not a positive int, an unknown metric or ``next``."""
    codes = [d.get("code") for d in definitions]
    for d in definitions:
        missing = [k for k in REQUIRED if k not in d]
        if missing:
            raise ValueError(f"badge {d.get('code')!r} is missing {', '.join(missing)}")
        if codes.count(d["code"]) > 1:
            raise ValueError(f"badge code {d['code']!r} is used more than once")
        target = d["target"]
        if not isinstance(target, int) or isinstance(target, bool) or target < 1:
            raise ValueError(f"badge {d['code']!r}: target must be a positive integer, not {target!r}")
        metrics.metric(d["metric"])  # raises, listing the valid names
        if d.get("next") is not None and d["next"] not in codes:
            raise ValueError(f"badge {d['code']!r}: next badge {d['next']!r} is not defined")
    return definitions


def _codes(already_awarded: Iterable) -> set[str]:
    return {a["code"] if isinstance(a, dict) else a for a in already_awarded}


def _values(definitions: list[dict], data: dict, now: Instant) -> dict[str, int]:
    """Each metric the definitions use, computed once."""
    return {name: metrics.compute(name, data, now) for name in sorted({d["metric"] for d in definitions})}


def evaluate(definitions: list[dict], data: dict, already_awarded: Iterable, now: Instant) -> list[dict]:
    """Badges newly earned at ``now``: ``[{"code", "awarded", "value"}]`` in definition order.

    ``already_awarded`` holds codes or award dicts; those badges are never awarded twice.
    Every definition is checked first, so a bad one fails before anything is awarded.
    """
    check_definitions(definitions)
    have = _codes(already_awarded)
    values = _values(definitions, data, now)
    when = to_datetime(to_ms(now)).isoformat()
    return [{"code": d["code"], "awarded": when, "value": values[d["metric"]]}
            for d in definitions if d["code"] not in have and values[d["metric"]] >= d["target"]]


def progress(definitions: list[dict], data: dict, already_awarded: Iterable, now: Instant) -> list[dict]:
    """Every badge with how far along it is, for the achievements panel:
    the definition plus ``"value"``, ``"fraction"`` (0..1) and ``"earned"``."""
    check_definitions(definitions)
    have = _codes(already_awarded)
    values = _values(definitions, data, now)
    return [{**d, "value": values[d["metric"]], "fraction": min(1.0, values[d["metric"]] / d["target"]),
             "earned": d["code"] in have} for d in definitions]
