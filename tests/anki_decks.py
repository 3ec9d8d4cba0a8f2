"""Real Anki packages, made at test time by Anki's own backend (PyPI ``anki``), not by hand.

Shared by the CPython and Chromium Anki tests."""

from pathlib import Path

from anki.collection import Collection, DeckIdLimit, ExportAnkiPackageOptions

DECK = "Biology::Cells"
BASIC = [("What makes ATP?", "Mitochondria"), ("Where is DNA kept?", "In the <b>nucleus</b>")]
CLOZE = [("{{c1::Mitosis}} splits {{c2::one cell}} into two.", "Cell division"),
         ("{{c1::Ribosomes}} build proteins.", "")]
EXPECTED = ([{"type": "basic", "front": "What makes ATP?", "back": "Mitochondria"},
             {"type": "basic", "front": "Where is DNA kept?", "back": "In the nucleus"}]
            + [{"type": "cloze", "text": t, "extra": e} for t, e in CLOZE])


def make_collection(folder: Path) -> tuple[Collection, int]:
    col = Collection(str(folder / "collection.anki2"))
    did = col.decks.id(DECK)
    basic, cloze = col.models.by_name("Basic"), col.models.by_name("Cloze")
    for front, back in BASIC:
        note = col.new_note(basic)
        note["Front"], note["Back"] = front, back
        col.add_note(note, did)
    for text, extra in CLOZE:
        note = col.new_note(cloze)
        note["Text"], note["Back Extra"] = text, extra
        col.add_note(note, did)
    return col, did


def export(folder: Path, legacy: bool) -> Path:
    """An .apkg of the deck as Anki exports it (default: the modern package)."""
    folder.mkdir(parents=True, exist_ok=True)
    col, did = make_collection(folder)
    out = folder / ("legacy.apkg" if legacy else "modern.apkg")
    try:
        col.export_anki_package(out_path=str(out), limit=DeckIdLimit(did),
                                options=ExportAnkiPackageOptions(with_scheduling=False, with_deck_configs=False,
                                                                 with_media=True, legacy=legacy))
    finally:
        col.close()
    return out
