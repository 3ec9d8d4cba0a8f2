"""Anki ``.apkg`` files with only zipfile + sqlite3: write a deck (reading: ``anki_read``).

An ``.apkg`` is a zip of ``collection.anki2`` (SQLite, schema version 11:
``col``, ``notes``, ``cards``, ``revlog``, ``graves``) and a ``media`` JSON map.
Note fields are joined with ``\\x1f``.  Quire uses two note types shaped like
Anki's built-ins: Basic (Front, Back) and Cloze (Text, Back Extra).  A cloze
note makes one card per deletion number: c1 and c2 -> 2 cards.

Ids come from content (and the deck name), so exporting the same deck twice
gives the same bytes and re-importing into Anki updates instead of duplicating.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sqlite3
import tempfile
import zipfile

from quire.errors import InvalidInput
from quire.study.anki_read import Deck, read_apkg, read_deck  # noqa: F401  (one place for both directions)
from quire.study.validate import CLOZE

EPOCH = 1_735_689_600  # 2025-01-01 UTC: the fixed "created/modified" time, for reproducible files
ZIP_TIME = (2025, 1, 1, 0, 0, 0)

SCHEMA = """
CREATE TABLE col (id integer primary key, crt integer not null, mod integer not null, scm integer not null,
  ver integer not null, dty integer not null, usn integer not null, ls integer not null, conf text not null,
  models text not null, decks text not null, dconf text not null, tags text not null);
CREATE TABLE notes (id integer primary key, guid text not null, mid integer not null, mod integer not null,
  usn integer not null, tags text not null, flds text not null, sfld integer not null, csum integer not null,
  flags integer not null, data text not null);
CREATE TABLE cards (id integer primary key, nid integer not null, did integer not null, ord integer not null,
  mod integer not null, usn integer not null, type integer not null, queue integer not null, due integer not null,
  ivl integer not null, factor integer not null, reps integer not null, lapses integer not null, left integer not null,
  odue integer not null, odid integer not null, flags integer not null, data text not null);
CREATE TABLE revlog (id integer primary key, cid integer not null, usn integer not null, ease integer not null,
  ivl integer not null, lastIvl integer not null, factor integer not null, time integer not null, type integer not null);
CREATE TABLE graves (usn integer not null, oid integer not null, type integer not null);
CREATE INDEX ix_notes_usn on notes (usn);
CREATE INDEX ix_cards_usn on cards (usn);
CREATE INDEX ix_revlog_usn on revlog (usn);
CREATE INDEX ix_cards_nid on cards (nid);
CREATE INDEX ix_cards_sched on cards (did, queue, due);
CREATE INDEX ix_revlog_cid on revlog (cid);
CREATE INDEX ix_notes_csum on notes (csum);
"""


def _id(*parts: str) -> int:
    """A positive id below 2**53 (safe in JavaScript) from text."""
    return int(hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:13], 16)


BASIC_ID = _id("quire", "Basic")
CLOZE_ID = _id("quire", "Cloze")
_CSS = ".card { font-family: arial; font-size: 20px; text-align: center; color: black; background-color: white; }\n.cloze { font-weight: bold; color: blue; }"


def _model(model_id: int, name: str, kind: int, fields: list[str], qfmt: str, afmt: str, deck_id: int) -> dict:
    return {
        "id": model_id, "name": name, "type": kind, "mod": EPOCH, "usn": -1, "sortf": 0, "did": deck_id,
        "tags": [], "vers": [], "css": _CSS, "latexPre": "\\documentclass[12pt]{article}\n\\begin{document}\n",
        "latexPost": "\\end{document}",
        "flds": [{"name": f, "ord": i, "sticky": False, "rtl": False, "font": "Arial", "size": 20, "media": []}
                 for i, f in enumerate(fields)],
        "tmpls": [{"name": "Cloze" if kind else "Card 1", "ord": 0, "qfmt": qfmt, "afmt": afmt, "did": None,
                   "bqfmt": "", "bafmt": ""}],
        "req": [[0, "any" if kind else "all", [0]]],
    }


def models(deck_id: int) -> dict:
    """``col.models``: the Basic and Cloze note types."""
    return {
        str(BASIC_ID): _model(BASIC_ID, "Basic (Quire)", 0, ["Front", "Back"], "{{Front}}",
                              "{{FrontSide}}<hr id=answer>{{Back}}", deck_id),
        str(CLOZE_ID): _model(CLOZE_ID, "Cloze (Quire)", 1, ["Text", "Back Extra"], "{{cloze:Text}}",
                              "{{cloze:Text}}<br>{{Back Extra}}", deck_id),
    }


def _deck(deck_id: int, name: str) -> dict:
    return {"id": deck_id, "name": name, "desc": "", "mod": EPOCH, "usn": -1, "dyn": 0, "conf": 1, "collapsed": False,
            "extendNew": 10, "extendRev": 50, "newToday": [0, 0], "revToday": [0, 0], "lrnToday": [0, 0],
            "timeToday": [0, 0]}


_DCONF = {"1": {"id": 1, "name": "Default", "mod": 0, "usn": 0, "maxTaken": 60, "autoplay": True, "timer": 0,
                "replayq": True, "dyn": False,
                "new": {"delays": [1, 10], "ints": [1, 4, 7], "initialFactor": 2500, "order": 1, "perDay": 20,
                        "bury": False, "separate": True},
                "lapse": {"delays": [10], "mult": 0, "minInt": 1, "leechFails": 8, "leechAction": 0},
                "rev": {"perDay": 200, "ease4": 1.3, "fuzz": 0.05, "ivlFct": 1, "maxIvl": 36500, "minSpace": 1,
                        "bury": False}}}


def cloze_numbers(text: str) -> list[int]:
    """Distinct deletion numbers, ascending: one Anki card each.

    >>> cloze_numbers("{{c2::b}} and {{c1::a}} and {{c2::c}}")
    [1, 2]
    """
    return sorted({int(n) for n, _, _ in CLOZE.findall(text)})


def _note_fields(card: dict) -> tuple[int, list[str], list[int]]:
    if card["type"] == "basic":
        return BASIC_ID, [card["front"], card["back"]], [0]
    if card["type"] == "cloze":
        return CLOZE_ID, [card["text"], card.get("extra", "")], [n - 1 for n in cloze_numbers(card["text"])]
    raise InvalidInput(f"card type {card['type']!r} is not basic or cloze")


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).strip()


def write_apkg(cards: list[dict], deck_name: str = "Quire") -> bytes:
    """The bytes of an ``.apkg`` holding ``cards`` (Quire's basic / cloze dicts)."""
    deck_id = _id("deck", deck_name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "collection.anki2")
        db = sqlite3.connect(path)
        db.executescript(SCHEMA)
        conf = {"activeDecks": [1], "curDeck": deck_id, "curModel": str(BASIC_ID), "nextPos": len(cards) + 1,
                "newSpread": 0, "collapseTime": 1200, "timeLim": 0, "estTimes": True, "dueCounts": True,
                "sortType": "noteFld", "sortBackwards": False, "addToCur": True}
        decks = {"1": _deck(1, "Default"), str(deck_id): _deck(deck_id, deck_name)}
        db.execute("INSERT INTO col VALUES (1,?,?,?,11,0,0,0,?,?,?,?,?)",
                   (EPOCH, EPOCH * 1000, EPOCH * 1000, json.dumps(conf), json.dumps(models(deck_id)),
                    json.dumps(decks), json.dumps(_DCONF), "{}"))
        for position, card in enumerate(cards, 1):
            mid, fields, ords = _note_fields(card)
            joined = "\x1f".join(fields)
            guid = hashlib.sha256(f"{mid}\x00{joined}".encode()).hexdigest()[:10]
            nid = _id("note", deck_name, guid)
            first = _plain(fields[0])
            db.execute("INSERT OR IGNORE INTO notes VALUES (?,?,?,?,?,?,?,?,?,0,'')",
                       (nid, guid, mid, EPOCH, -1, " quire ", joined, first,
                        int(hashlib.sha1(first.encode()).hexdigest()[:8], 16)))
            for ord_ in ords:
                db.execute("INSERT OR IGNORE INTO cards VALUES (?,?,?,?,?,-1,0,0,?,0,0,0,0,0,0,0,0,'')",
                           (_id("card", str(nid), str(ord_)), nid, deck_id, ord_, EPOCH, position))
        db.commit()
        db.close()
        with open(path, "rb") as f:
            collection = f.read()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in (("collection.anki2", collection), ("media", b"{}")):
            z.writestr(zipfile.ZipInfo(name, date_time=ZIP_TIME), data, compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()
