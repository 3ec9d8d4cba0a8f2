"""Read Anki packages (``.apkg``/``.colpkg``), old and new, as Quire cards.

What current Anki (23.10 and later) exports holds the real collection as
``collection.anki21b`` (SQLite, zstd-compressed, schema 18: note types, decks
and fields in their own tables, a note type's kind inside a protobuf blob)
next to a stub ``collection.anki2`` whose one note says "Please update to the
latest Anki version".  Older packages hold ``collection.anki21`` or only
``collection.anki2`` (schema 11: note types and decks as JSON in ``col``).
The newest collection present wins; the stub is never imported.

A package is a stranger's file: it is opened through ``SafeZip`` with the
limits below, the collection is inflated (zip, then zstd) within a byte cap,
and the JSON inside a schema-11 ``col`` row is depth-checked before parsing.

>>> from quire.study.anki import write_apkg
>>> deck = read_deck(write_apkg([{"type": "cloze", "text": "{{c1::ATP}} is energy", "extra": ""}], "Cells"))
>>> deck.name, deck.cards
('Cells', [{'type': 'cloze', 'text': '{{c1::ATP}} is energy', 'extra': ''}])
"""

from __future__ import annotations

import html
import os
import re
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from quire import jsonlimits
from quire.errors import QuireError
from quire.extract.base import MB, ExtractError, Limits, SafeZip
from quire.study import zstd

# Media-heavy decks are large, but Quire reads only the collection, so the archive
# may declare a lot while the collection itself is capped.
LIMITS = Limits(max_zip_entries=100_000, max_unzipped_bytes=2048 * MB)
MAX_COLLECTION = 512 * MB  # inflated SQLite file; a deck of 100,000 notes is ~100 MB
MAX_RATIO = 200  # zip or zstd inflation of the collection; Anki's real ones stay below ~30
COLLECTIONS = ("collection.anki21b", "collection.anki21", "collection.anki2")  # newest first
STUB = "Please update to the latest Anki version"
CLOZE_KIND = 1  # note type kind: 0 normal, 1 cloze (schema 11 "type", schema 18 config field 1)


class AnkiError(QuireError, ValueError):
    """A package Quire cannot read; the message says why, for the person."""


@dataclass
class Deck:
    name: str | None
    cards: list[dict] = field(default_factory=list)


def _collection(data: bytes) -> bytes:
    try:
        z = SafeZip(bytes(data), "Anki", LIMITS)
        member = next((m for m in COLLECTIONS if z.has(m)), None)
        if member is None:
            raise AnkiError("this is not an Anki package: it holds no collection.anki2, .anki21 or .anki21b")
        info = z.names[member]
        if info.file_size > MAX_COLLECTION or info.file_size > MAX_RATIO * max(info.compress_size, 1) + MB:
            raise AnkiError(f"the collection in this package would unpack to {info.file_size // MB} MB from "
                            f"{info.compress_size:,} bytes; it looks like a zip bomb")
        raw = z.read(member)
    except ExtractError as exc:
        raise AnkiError(str(exc)) from None
    if member.endswith("b"):
        try:
            raw = zstd.decompress(raw, min(MAX_COLLECTION, MAX_RATIO * len(raw) + MB))
        except zstd.ZstdError as exc:
            raise AnkiError(f"the collection in this package cannot be unpacked ({exc})") from None
    return raw


def _varint_field(blob: bytes, wanted: int) -> int:
    """The top-level varint field ``wanted`` of a protobuf message (0 when absent).

    >>> _varint_field(bytes([0x08, 0x01, 0x1a, 0x01, 0x41]), 1)
    1
    """
    pos, blob = 0, bytes(blob or b"")

    def varint():
        nonlocal pos
        value = shift = 0
        while pos < len(blob):
            b = blob[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value
        raise AnkiError("a note type in this package is damaged")
    while pos < len(blob):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            value = varint()
            if number == wanted:
                return value
        elif wire == 1:
            pos += 8
        elif wire == 2:
            size = varint()  # not `pos += varint()`: that would read pos before varint() moves it
            pos += size
        elif wire == 5:
            pos += 4
        else:
            raise AnkiError("a note type in this package is damaged")
    return 0


def _schema(db: sqlite3.Connection) -> tuple[dict[int, int], dict[int, str]]:
    """``({note type id: kind}, {deck id: name})`` for schema 18 or schema 11."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "notetypes" in tables:
        kinds = {mid: _varint_field(config, 1) for mid, config in db.execute("SELECT id, config FROM notetypes")}
        decks = {did: name.replace("\x1f", "::") for did, name in db.execute("SELECT id, name FROM decks")}
        return kinds, decks
    models_json, decks_json = db.execute("SELECT models, decks FROM col").fetchone()
    models = jsonlimits.loads(models_json, "the note types of this package")
    decks = jsonlimits.loads(decks_json, "the decks of this package")
    if not isinstance(models, dict) or not isinstance(decks, dict):
        raise AnkiError("this package's collection is damaged (note types or decks are not readable)")
    return ({int(mid): int(m.get("type", 0)) for mid, m in models.items() if isinstance(m, dict)},
            {int(did): str(d.get("name", "")) for did, d in decks.items() if isinstance(d, dict)})


_TAG = re.compile(r"<\s*(/?)\s*(br|div|p|b|i|u|em|strong|span|font|sup|sub|li|ul|ol)\b[^>]*>", re.I)


def _text(field_html: str) -> str:
    """Anki fields are HTML; Quire's cards are text.  Only Anki's own formatting tags go.

    >>> _text("Mito<b>chondria</b><br>make ATP&nbsp;&amp; heat")
    'Mitochondria\\nmake ATP\\xa0& heat'
    """
    if not _TAG.search(field_html) and not re.search(r"&(#\d+|#x[0-9a-f]+|[a-z]+);", field_html, re.I):
        return field_html
    out = _TAG.sub(lambda m: "\n" if m.group(2).lower() == "br" or (m.group(1) and m.group(2).lower() in
                                                                          ("div", "p", "li")) else "", field_html)
    return html.unescape(out).strip()


def _read(collection: bytes) -> Deck:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "collection.anki2")
        with open(path, "wb") as f:
            f.write(collection)
        try:
            db = sqlite3.connect(path)
            try:
                kinds, decks = _schema(db)
                rows = db.execute("SELECT n.mid, n.flds, (SELECT did FROM cards c WHERE c.nid = n.id GROUP BY did "
                                  "ORDER BY count(*) DESC LIMIT 1) FROM notes n "
                                  "ORDER BY (SELECT min(due) FROM cards c WHERE c.nid = n.id), n.id").fetchall()
            finally:
                db.close()
        except sqlite3.DatabaseError as exc:
            raise AnkiError(f"the collection in this package is not a readable Anki database ({exc})") from None
        except jsonlimits.JSONLimitError as exc:
            raise AnkiError(str(exc)) from None
    if len(rows) == 1 and STUB in rows[0][1]:
        raise AnkiError("this package holds only Anki's placeholder note (\"Please update to the latest Anki "
                        "version\"), not the deck; export the deck again from Anki")
    cards, used = [], Counter()
    for mid, flds, did in rows:
        fields = [_text(f) for f in flds.split("\x1f")] + ["", ""]
        if kinds.get(mid) == CLOZE_KIND:
            cards.append({"type": "cloze", "text": fields[0], "extra": fields[1]})
        else:
            cards.append({"type": "basic", "front": fields[0], "back": fields[1]})
        if did is not None:
            used[did] += 1
    top = next((did for did, _ in used.most_common() if decks.get(did)), None)
    return Deck(decks[top] if top is not None else None, cards)


def read_deck(data: bytes) -> Deck:
    """The deck in an Anki package: its name and its cards as Quire dicts."""
    return _read(_collection(data))


def read_apkg(data: bytes) -> list[dict]:
    """Just the cards of ``read_deck``."""
    return read_deck(data).cards
