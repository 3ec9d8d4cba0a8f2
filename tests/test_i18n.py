"""The German catalog against the code: every English message id the page uses has a German
entry with the same {parameters}, every entry is used, plural nouns have two forms, and the
engine's message templates match messages the engine (Python) really writes.

The English text is the message id (assets/i18n.js), so the English catalog is the code itself."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "site" / "assets"
UNTRANSLATED: set[str] = set()

CALL = re.compile(r"""\b(?:t|tr|QuireUI\.t|QuireI18n\.t)\(\s*(?:[^'()]*?\?\s*)?'((?:[^'\\]|\\.)*)'(?:\s*:\s*'((?:[^'\\]|\\.)*)')?""")
PLURAL = re.compile(r"""plural\([^;]*?,\s*'((?:[^'\\]|\\.)*)'""")
PARAM = re.compile(r"\{(\w+)\}")


def catalog(call: str) -> dict:
    """The object literal passed to ``QuireI18n.<call>('de', {...})`` in i18n-de.js, read as JSON."""
    text = (ASSETS / "i18n-de.js").read_text()
    start = text.index(f"QuireI18n.{call}('de', {{") + len(f"QuireI18n.{call}('de', ")
    depth, i = 0, start
    while True:  # the matching brace; strings hold no braces other than {param}, which balance
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            break
        i += 1
    body = "\n".join(line for line in text[start:i + 1].splitlines() if not line.strip().startswith("//"))
    return json.loads(re.sub(r",(\s*})", r"\1", body))


def scripts() -> dict[str, str]:
    return {p.relative_to(ASSETS).as_posix(): p.read_text() for p in sorted(ASSETS.rglob("*.js"))
            if not p.name.startswith("i18n")}


def used_ids() -> tuple[set[str], set[str]]:
    ids, nouns = set(), set()
    for rel, text in scripts().items():
        if rel in UNTRANSLATED:
            continue
        for m in CALL.finditer(text):
            ids.update(g.replace("\\'", "'") for g in m.groups() if g is not None)
        nouns.update(m.group(1) for m in PLURAL.finditer(text))
    html = (ROOT / "site" / "index.html").read_text()
    ids.update(" ".join(m.group(1).split()) for m in re.finditer(r"<[^>]*\bdata-i18n\b[^>]*>([^<]+)<", html))
    ids.update(m.group(1) for m in re.finditer(r'aria-label="([^"]+)"[^>]*data-i18n-attr', html))
    return ids, nouns


DE = catalog("add")
ENGINE = catalog("addEngine")


def test_every_id_the_code_uses_has_a_german_entry():
    ids, nouns = used_ids()
    assert len(ids) > 300, "the extractor found too few ids: is the call pattern still t('…')?"
    assert sorted(i for i in ids if i and i not in DE) == []
    assert sorted(n for n in nouns if not isinstance(DE.get(n), list)) == []


def test_every_german_entry_is_used():
    """An entry no code names is dead: an id the code changed and the catalog did not follow."""
    code = "\n".join(scripts().values()) + (ROOT / "site" / "index.html").read_text()
    unused = [k for k in DE if f"'{k}'" not in code and f"'{k.replace(chr(39), chr(92) + chr(39))}'" not in code
              and f">{k}<" not in " ".join(code.split()).replace("> ", ">").replace(" <", "<")
              and f'"{k}"' not in code]
    assert unused == []


@pytest.mark.parametrize("key", sorted(DE) + [f"engine:{k}" for k in sorted(ENGINE)])
def test_german_keeps_the_parameters(key):
    english = key.removeprefix("engine:")
    german = ENGINE[english] if key.startswith("engine:") else DE[english]
    if isinstance(german, list):
        assert len(german) == 2 and all(german), "a plural noun needs its singular and plural"
        return
    assert german.strip(), "empty translation"
    assert sorted(PARAM.findall(german)) == sorted(PARAM.findall(english))
    assert german.count("%s") == english.count("%s")


def engine_sources() -> str:
    # The page's own messages that reach QuireI18n.engine: through the engine (the in-tab embedder's,
    # py/quire/browser/embedder.py wraps them) or beside it.
    files = list((ROOT / "py" / "quire").rglob("*.py")) + [ROOT / "py" / "quire" / "data" / "badges.json",
                                                          ASSETS / "api-progress.js", ASSETS / "embedder.js", ASSETS / "api.js",
                                                          ASSETS / "api-recordings.js"]
    text = "\n".join(p.read_text() for p in files)
    text = re.sub(r'"\s*\n\s*f?"', "", text)  # Python's adjacent literals "a "\n  "b" read as one message
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)  # "\u201c" in a source is “


@pytest.mark.parametrize("template", sorted(ENGINE))
def test_engine_templates_match_messages_the_engine_writes(template):
    """Each fixed piece of a template occurs in the engine's source: a reworded message fails here."""
    source = engine_sources()
    pieces = [p for p in PARAM.split(template)[::2] if len(p.strip(" .:;()")) > 3]
    if not pieces and not re.search(r"\w", PARAM.sub("", template)):
        return  # punctuation only ("{head}: {rest}"): each side is translated on its own
    for piece in pieces or [template]:
        assert piece.strip() in source, f"{piece!r} is no longer in the engine's messages"


def test_no_emoji_left_in_the_page():
    """Emoji render as empty boxes without an emoji font: the page draws SVG icons instead (assets/icons.js)."""
    emoji = re.compile("[\U0001F300-\U0001FAFF\u2600-\u26FF\u2B50\u2B55\u231A\u231B\u23F0-\u23FA]")
    files = {rel: text for rel, text in scripts().items() if rel != "icons.js"}
    files["quire.css"] = (ASSETS / "quire.css").read_text()
    files["index.html"] = (ROOT / "site" / "index.html").read_text()
    assert {rel: emoji.findall(text) for rel, text in files.items() if emoji.search(text)} == {}
