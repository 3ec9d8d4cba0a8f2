"""quire.model: the one chunk-id scheme, the one location label, chunks from stored dicts."""

import pytest

from quire.chunking import chunk_units
from quire.model import Chunk, Unit, chunk_id, location_label, parse_chunk_id


@pytest.mark.parametrize("location,label", [
    ({"page": 5}, "p. 5"), ({"slide": 3}, "slide 3"), ({"sheet": "Sheet1", "rows": [2, 21]}, "Sheet1 rows 2–21"),
    ({"sheet": "Sales", "rows": [7, 7]}, "Sales row 7"), ({"sheet": "Sales"}, "Sales"), ({"rows": [2, 21]}, "rows 2–21"),
    ({"section": ["Setup", "Install"]}, "Setup › Install"), ({"chapter": "Loomings"}, "Loomings"),
    ({}, ""), (None, ""),
])
def test_location_label(location, label):
    assert location_label(location) == label


@pytest.mark.parametrize("cid,parsed", [
    ("3f9a0c:12", ("3f9a0c", 12)),
    ("a1b2c3d4e5f60718-again:0", ("a1b2c3d4e5f60718-again", 0)),
    ("notes:v2.md:3", ("notes:v2.md", 3)),  # only the last colon separates the number
    ("notes.md", ("notes.md", None)),
    ("bio:x", ("bio", None)),
    ("", ("", None)),
])
def test_parse_chunk_id(cid, parsed):
    assert parse_chunk_id(cid) == parsed
    if parsed[1] is not None:
        assert chunk_id(*parsed) == cid


def test_chunk_units_number_chunks_as_the_library_ids_them():
    units = [Unit("Alpha beta gamma delta. " * 8, {"page": 1}), Unit("Epsilon zeta. " * 8, {"page": 2})]
    chunks = chunk_units("src", units, size=60, overlap=10)
    assert len(chunks) > 3
    assert [c.id for c in chunks] == [f"src:{n}" for n in range(len(chunks))]
    assert all(c.source == "src" for c in chunks)


STORED = {"chunk_id": "3f9a0c:4", "source_id": "3f9a0c", "location": {"page": 2}, "start": 700, "end": 900,
          "text": "Cells divide.", "hash": "h1", "n": 4}


@pytest.mark.parametrize("stored,want_id,want_start", [
    (STORED, "3f9a0c:4", 700),
    ({**STORED, "source_id": "other"}, "3f9a0c:4", 700),  # the id is the authority, as the page opens it
    ({"chunk_id": "bio:3", "location": {"page": 1}, "text": "Mitosis."}, "bio:3", 0),  # a search hit
    ({"source_id": "bio", "n": 2, "text": "Meiosis."}, "bio:2", 0),
])
def test_from_dict(stored, want_id, want_start):
    c = Chunk.from_dict(stored, source="Biology.pdf")
    assert (c.id, c.start, c.source) == (want_id, want_start, "Biology.pdf")


def test_stored_form_round_trips_without_the_name():
    c = Chunk.from_dict(STORED, source="Biology.pdf")
    assert c.to_dict() == STORED  # what training stores, byte for byte the same keys
    assert Chunk.from_dict(STORED) == Chunk.from_dict(c.to_dict())


def test_a_passage_has_one_id_key():
    """Stored passages, hits and citations all say "chunk_id"; none says "id" as well."""
    c = Chunk("bio", {"page": 1}, 0, 8, "Mitosis.", n=3)
    assert c.to_dict()["chunk_id"] == "bio:3" and "id" not in c.to_dict()
