"""How many tokens a request may ask for: every request is bounded, and prompt plus answer
must fit the model's context (the server's own figure when it reports one, else the
Context size setting), or the server stops mid-answer when the context is full.

>>> fit({"num_predict": 1024, "num_ctx": 8192}, None, [{"content": "x" * 3000}])["num_predict"]
1024
>>> fit({"num_predict": 1024, "num_ctx": 8192}, 1024, [{"content": "x" * 2400}])
{'num_predict': 224, 'num_ctx': 1024}
"""

from __future__ import annotations

CHARS_PER_TOKEN = 3  # a cautious guess of the prompt's size in tokens
MIN_TOKENS = 64  # a full context still leaves this much: the cut answer then says why instead of nothing
DEFAULT_TOKENS = 1024


def prompt_tokens(messages: list[dict]) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages) // CHARS_PER_TOKEN


def fit(options: dict, context: int | None, messages: list[dict]) -> dict:
    """``options`` with ``num_predict`` always set and, with a known context (``context`` from
    the server, else ``options["num_ctx"]``), small enough that the prompt still fits."""
    out = dict(options)
    out["num_predict"] = int(out.get("num_predict") or DEFAULT_TOKENS)
    if context:
        out["num_ctx"] = context
    limit = out.get("num_ctx")
    if limit:
        out["num_predict"] = min(out["num_predict"], max(MIN_TOKENS, int(limit) - prompt_tokens(messages)))
    return out
