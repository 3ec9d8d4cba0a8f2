"""Anki round trips with real packages: decks exported by Anki's own backend (modern
zstd ``collection.anki21b`` and legacy) import with their name, Basic and Cloze told
apart by note type kind, never the "Please update" stub; Quire's own export imports
into real Anki; hostile packages are refused with a reason."""

import asyncio
import io
import json
import os
import sqlite3
import zipfile

import pytest
import zstandard
from anki.collection import Collection, ImportAnkiPackageRequest

from anki_decks import DECK, EXPECTED, export
from quire.app import Quire
from quire.services import Context
from quire.store import MemoryStore
from quire.study import anki, anki_read, zstd
from quire.study.anki_read import AnkiError


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    root = tmp_path_factory.mktemp("anki")
    return {"modern": export(root / "modern", legacy=False), "legacy": export(root / "legacy", legacy=True)}


def members(path):
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def repack(members_):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members_.items():
            z.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("kind, collection", [("modern", "collection.anki21b"), ("legacy", "collection.anki21")])
def test_anki_packages_import_with_their_deck_name_and_note_kinds(packages, kind, collection):
    names = members(packages[kind])
    assert collection in names and "collection.anki2" in names  # Anki's stub is there too
    deck = anki.read_deck(packages[kind].read_bytes())
    assert deck.name == DECK and deck.cards == EXPECTED
    assert not any("Please update" in json.dumps(c) for c in deck.cards)


def test_the_stub_alone_is_refused_not_imported(packages):
    stub = repack({"collection.anki2": members(packages["modern"])["collection.anki2"]})
    with pytest.raises(AnkiError, match="only Anki's placeholder note"):
        anki.read_deck(stub)


@pytest.mark.parametrize("kind", ["modern", "legacy"])
def test_study_import_through_the_engine(packages, kind):
    from quire.services import study

    async def go():
        q = await Quire.open(MemoryStore())
        ctx = Context(payload=packages[kind].read_bytes())
        return await study.METHODS["studyImport"](q, ctx, f"{kind}.apkg")
    view = asyncio.run(go())
    assert view["title"] == DECK
    assert [(i["type"], i.get("front") or i.get("text")) for i in view["items"]] == \
        [(c["type"], c.get("front") or c.get("text")) for c in EXPECTED]


def test_quires_own_export_imports_into_real_anki(tmp_path):
    path = tmp_path / "quire.apkg"
    path.write_bytes(anki.write_apkg(EXPECTED, "Quire deck"))
    col = Collection(str(tmp_path / "target.anki2"))
    try:
        col.import_anki_package(ImportAnkiPackageRequest(package_path=str(path)))
        notes = [col.get_note(nid) for nid in col.find_notes("")]
        kinds = sorted((n.note_type()["type"], n.fields[0]) for n in notes)
        decks = {d.name for d in col.decks.all_names_and_ids()}
        cards = col.card_count()
    finally:
        col.close()
    assert kinds == sorted([(0, c["front"]) for c in EXPECTED if c["type"] == "basic"]
                           + [(1, c["text"]) for c in EXPECTED if c["type"] == "cloze"])
    assert "Quire deck" in decks and cards == 2 + 2 + 1  # one card per cloze number


# ---------------------------------------------------------------- zstd, checked against the reference library
@pytest.mark.parametrize("level", [1, 3, 9, 19, -5])
@pytest.mark.parametrize("kind", ["text", "random", "zeros", "sqlite"])
def test_zstd_decoder_matches_the_reference(level, kind, packages):
    words = "mitochondria nucleus ribosome membrane chloroplast vesicle golgi lysosome".split()
    data = {"text": " ".join(words[(i * 7919) % len(words)] + str(i % 97) for i in range(40_000)).encode(),
            "random": os.urandom(300_000),
            "zeros": bytes(1_000_000),
            "sqlite": zstandard.ZstdDecompressor().decompress(members(packages["modern"])["collection.anki21b"],
                                                              max_output_size=1 << 26)}[kind]
    compressed = zstandard.ZstdCompressor(level=level, write_checksum=True).compress(data)
    assert zstd.decompress(compressed) == data


def test_zstd_output_is_capped():
    bomb = zstandard.ZstdCompressor(level=3).compress(bytes(10 << 20))
    with pytest.raises(zstd.ZstdError, match="more than"):
        zstd.decompress(bomb, limit=1 << 20)


def test_a_zstd_bomb_in_a_package_is_refused(packages, monkeypatch):
    monkeypatch.setattr(anki_read, "MAX_COLLECTION", 4 << 20)
    bomb = zstandard.ZstdCompressor(level=3).compress(bytes(64 << 20))
    with pytest.raises(AnkiError, match="cannot be unpacked .*more than"):
        anki.read_deck(repack({"collection.anki21b": bomb, "collection.anki2": b""}))


def test_deep_json_in_an_old_collection_is_refused(tmp_path):
    data = anki.write_apkg(EXPECTED, "Deep")
    path = tmp_path / "c.anki2"
    path.write_bytes(members_of(data)["collection.anki2"])
    db = sqlite3.connect(path)
    db.execute("UPDATE col SET models = ?", ('{"1": ' + "[" * 5000 + "]" * 5000 + "}",))
    db.commit()
    db.close()
    with pytest.raises(AnkiError, match="nested 5001 levels deep"):
        anki.read_deck(repack({"collection.anki2": path.read_bytes()}))


def members_of(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


@pytest.mark.parametrize("make, message", [
    (lambda: b"not a zip", "not a zip archive, as every Anki file is: it holds plain text"),
    (lambda: repack({"notes.txt": b"hi"}), "holds no collection"),
    (lambda: repack({"collection.anki21b": b"\x28\xb5\x2f\xfd garbage"}), "cannot be unpacked"),
    (lambda: repack({"collection.anki21": b"SQLite format 3\x00" + bytes(100)}), "not a readable Anki database"),
])
def test_broken_packages_say_why(make, message):
    with pytest.raises(AnkiError, match=message):
        anki.read_deck(make())
