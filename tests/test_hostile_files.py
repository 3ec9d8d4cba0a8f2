"""Strangers' files: each hostile file fails (or trains, bounded) alone; the good ones train.

Every hostile file is generated here at test time, just over the limit it tests.  Each
case goes through a real Train next to a good file, which must come out searchable.
"""

from __future__ import annotations

import asyncio
import io
import struct
import time
import types
import zipfile
import zlib

import pytest

from fixtures_docs import docx, epub, pptx, xlsx, zip_bytes
from quire import originals
from quire.chunking import chunk_units
from quire.extract import ExtractError, Limits, extract
from quire.extract.base import MAX_BREADCRUMB, Outline, parse_xml
from quire.library import Library
from quire.training import TrainCancelled
from quire.store import MemoryStore

GOOD = ("good.md", b"# Photosynthesis\nChlorophyll turns light into sugar in the leaves.\n")


def run(coro):
    return asyncio.run(coro)


# ---------------------------------------------------------------- generators

def wide_csv(columns: int = 10_000, rows: int = 20) -> bytes:
    header = ",".join(f"column{n}" for n in range(columns))
    body = "\n".join(",".join(str((r * 7 + c) % 10) for c in range(columns)) for r in range(rows))
    return f"{header}\n{body}\n".encode()


def long_headings_md(levels: int = 6, title_chars: int = 20_000, body_chars: int = 200_000) -> bytes:
    heads = "".join(f"{'#' * (n + 1)} {'Heading ' * (title_chars // 8)}\n" for n in range(levels))
    return (heads + ("A sentence about leaves. " * (body_chars // 25))).encode()


def many_headings_md(count: int = 3_000, title_chars: int = 500) -> bytes:
    return "".join(f"{'#' * (n % 6 + 1)} {'Title' * (title_chars // 5)} {n}\nx\n" for n in range(count)).encode()


BOMB_DTD = ('<?xml version="1.0" encoding="{enc}"?>{pad}<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><x>&c;</x>')


def dtd_xml(encoding: str = "UTF-8", comment_bytes: int = 0) -> bytes:
    pad = f"<!--{'c' * comment_bytes}-->" if comment_bytes else ""
    return BOMB_DTD.format(enc=encoding, pad=pad).encode("utf-16" if encoding == "UTF-16" else "utf-8")


def xml_bomb(part: str, size: int) -> bytes:
    """A zip whose one part inflates to ``size`` bytes of Word XML, built in well under a second.

    After a full flush deflate starts afresh, so one compressed block can be repeated."""
    block = b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 8192
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    count = size // len(block)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    body = packed * count + b"\x03\x00"  # an empty final block ends the stream
    name = part.encode()
    fields = struct.pack("<HHHHHIIIHH", 20, 0, 8, 0, 0, crc, len(body), len(block) * count, len(name), 0)
    local = b"PK\x03\x04" + fields + name + body
    central = b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHII", 0, 0, 0, 0, 0) + name
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, len(central), len(local), 0)
    return local + central + end


def replace_part(archive: bytes, part: str, data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        parts = {i.filename: z.read(i) for i in z.infolist()}
    parts[part] = data
    return zip_bytes(parts, stored_first="mimetype" if "mimetype" in parts else None)


def tiny_pdf(pages: int) -> bytes:
    """A valid PDF of ``pages`` pages of one short line each, written by hand (about 160 bytes a page)."""
    out, offsets = bytearray(b"%PDF-1.4\n"), {}

    def obj(n: int, body: str) -> None:
        offsets[n] = len(out)
        out.extend(f"{n} 0 obj\n{body}\nendobj\n".encode())

    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
    obj(2, f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>")
    obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i in range(pages):
        text = f"BT /F1 12 Tf 72 720 Td (Page {i + 1} of the endless archive) Tj ET"
        obj(4 + 2 * i, f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
                       f" /Contents {5 + 2 * i} 0 R >>")
        obj(5 + 2 * i, f"<< /Length {len(text)} >>\nstream\n{text}\nendstream")
    size, xref = 4 + 2 * pages, len(out)
    out.extend(f"xref\n0 {size}\n0000000000 65535 f \n".encode())
    out.extend("".join(f"{offsets[n]:010d} 00000 n \n" for n in range(1, size)).encode())
    out.extend(f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return bytes(out)


async def train_with_good(files: list[tuple[str, bytes]], *, lib: Library | None = None, **train):
    lib = lib or await Library.open(MemoryStore())
    await lib.stage(*GOOD)
    for name, data in files:
        await lib.stage(name, data)
    counts = await lib.train(**train)
    return lib, counts


def outcome(counts: dict, name: str) -> dict:
    return next(f for f in counts["files"] if f["name"] == name)


def assert_good_trained(lib: Library, counts: dict) -> None:
    assert outcome(counts, GOOD[0])["outcome"] == "added"
    assert [h["source"] for h in lib.search("chlorophyll leaves", k=3)][:1] == [GOOD[0]]


# ---------------------------------------------------------------- files that fail alone

DTD_REASON = "contains a DTD"

FAILING = [
    ("billion-laughs.docx", lambda: replace_part(docx([("", "x")]), "word/document.xml", dtd_xml()), DTD_REASON),
    ("utf16-dtd.xlsx", lambda: replace_part(xlsx({"S": [["a", "b"]]}), "xl/workbook.xml", dtd_xml("UTF-16")), DTD_REASON),
    ("comment-then-dtd.pptx", lambda: replace_part(pptx([("T", ["b"], "")]), "ppt/presentation.xml",
                                                   dtd_xml(comment_bytes=70_000)), DTD_REASON),
    ("comment-then-dtd.epub", lambda: replace_part(epub([("c.xhtml", "C", "<p>x</p>")]), "META-INF/container.xml",
                                                   dtd_xml(comment_bytes=70_000)), DTD_REASON),
    ("utf16-dtd.epub", lambda: replace_part(epub([("c.xhtml", "C", "<p>x</p>")]), "META-INF/container.xml",
                                            dtd_xml("UTF-16")), DTD_REASON),
    # 500 MB of XML packed into a few hundred KB: refused from the central directory, before inflating.
    ("unpacks-to-500mb.docx", lambda: xml_bomb("word/document.xml", 500 << 20), "would unpack to 499 MB"),
    ("cut-directory.docx", lambda: docx([("", "x")])[:-30], "central directory"),
    ("renamed.pdf", lambda: b"%PDF-1.4\n" + b"\0garbage" * 100, "could not read this PDF"),
]


@pytest.mark.parametrize("name, make, reason", FAILING, ids=[c[0] for c in FAILING])
def test_a_hostile_file_fails_alone_with_its_reason(name, make, reason):
    started = time.monotonic()
    lib, counts = run(train_with_good([(name, make())]))
    bad = outcome(counts, name)
    assert bad["outcome"] == "failed" and reason in bad["error"], bad
    assert "looks damaged or incomplete" not in bad["error"] or reason == "could not read this PDF"
    assert_good_trained(lib, counts)
    assert lib.source(next(s["id"] for s in lib.sources() if s["name"] == name))["status"] == "failed"
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("data", [dtd_xml(), dtd_xml("UTF-16"), dtd_xml(comment_bytes=70_000),
                                  b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'],
                         ids=["utf8", "utf16", "after-70kb-comment", "external-entity"])
def test_parse_xml_refuses_the_dtd_itself(data):
    with pytest.raises(ExtractError, match="contains a DTD"):
        parse_xml(data, "Word")


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">',
    "<!DOCTYPE html>",
])
def test_a_bare_doctype_declares_nothing_and_is_read(doctype):
    # EPUB 2 tables of contents and XHTML nav pages carry these; no entity can hide in them.
    root = parse_xml(f'<?xml version="1.0"?>{doctype}<ncx><navMap>Chapter</navMap></ncx>'.encode("utf-16"), "EPUB")
    assert root.find("navMap").text == "Chapter"


def test_parse_xml_names_where_broken_xml_breaks():
    with pytest.raises(ExtractError, match=r"XML error at line 1, column \d+ \(mismatched tag\)"):
        parse_xml(b"<a><b></a>", "Word")


def test_the_500mb_xml_bomb_is_real():
    with zipfile.ZipFile(io.BytesIO(xml_bomb("word/document.xml", 8 << 20))) as z:
        data = z.read("word/document.xml")  # checks the CRC too
    assert len(data) > 7 << 20 and data.startswith(b"<w:p><w:r><w:t>x")


def test_the_unzip_budget_is_sized_for_a_tab():
    # tests/bench/xml_memory.py: ~0.7 s and ~3.5 MB of Pyodide heap per MB of XML.
    assert Limits().max_unzipped_bytes <= 64 << 20


# ---------------------------------------------------------------- files that train, bounded

BOUNDED = [
    ("wide.csv", wide_csv, "column0 | column1"),
    ("long-headings.md", long_headings_md, "A sentence about leaves"),
    ("many-headings.md", many_headings_md, "Title"),
]


@pytest.mark.parametrize("name, make, sample", BOUNDED, ids=[c[0] for c in BOUNDED])
def test_repeated_headers_and_breadcrumbs_stay_bounded(name, make, sample):
    data = make()
    started = time.monotonic()
    lib, counts = run(train_with_good([(name, data)]))
    assert outcome(counts, name)["outcome"] == "added"
    source_id = next(s["id"] for s in lib.sources() if s["name"] == name)
    chunks = run(lib.chunks_of(source_id))
    passage_chars = sum(len(c["text"]) for c in chunks)
    location_chars = sum(len(str(c["location"])) for c in chunks)
    # Unbounded, these made 100x their size in passages (255 MB from a 2.1 MB CSV).
    assert passage_chars < 4 * len(data) + 300_000, (passage_chars, len(data))
    assert location_chars < len(data) + 300_000
    assert max(len(c["text"]) for c in chunks) <= 1000 + 400
    assert any(sample in c["text"] for c in chunks)
    assert_good_trained(lib, counts)
    assert time.monotonic() - started < 60


def test_a_5000_level_heading_path_is_cut_to_a_short_breadcrumb():
    outline = Outline()
    for level in range(1, 5001):
        outline.heading(level, f"Level {level} " + "long title " * 50)
        outline.text(f"body {level}")
    units = outline.units()
    assert len(units) == 5000
    deepest = units[-1]
    assert len(deepest.prefix) <= MAX_BREADCRUMB and deepest.prefix.endswith("]\n")
    assert "Level 1 " in deepest.prefix and "…" in deepest.prefix
    assert deepest.location["section"][-1].startswith("Level 5000")
    assert len(deepest.location["section"]) <= 9


def test_prefix_budget_caps_the_repetition_across_a_source():
    from quire.model import Unit

    units = [Unit(text="x", prefix="[Section: " + "h" * 380 + "]\n") for _ in range(5000)]
    text = sum(len(c.text) for c in chunk_units("s", units))
    assert text <= 2 * 5000 + 200_000 + 5000 + 400


# ---------------------------------------------------------------- whatever breaks, one file fails

def test_an_exception_while_indexing_fails_only_that_file(monkeypatch):
    async def go():
        lib = await Library.open(MemoryStore())
        real = lib.index.add_chunks

        def add_chunks(source_id, *args, **kwargs):
            if lib.table[source_id]["name"] == "poison.md":
                real(source_id, *args, **kwargs)  # half-added, then it blows up
                raise MemoryError()
            return real(source_id, *args, **kwargs)

        monkeypatch.setattr(lib.index, "add_chunks", add_chunks)
        await lib.stage("poison.md", b"# Poison\nAmanita phalloides is deadly.\n")
        return await train_with_good([("after.md", b"# After\nMitochondria make ATP.\n")], lib=lib)

    lib, counts = run(go())
    assert outcome(counts, "poison.md") == {"name": "poison.md", "outcome": "failed", "error":
                                             "poison.md needs more memory than the browser tab has; split it into "
                                             "smaller files and add those"}
    assert_good_trained(lib, counts)
    assert outcome(counts, "after.md")["outcome"] == "added"
    assert [h["source"] for h in lib.search("amanita", k=3)] == []  # nothing of it stayed in the index
    assert [h["source"] for h in lib.search("mitochondria", k=3)][:1] == ["after.md"]


@pytest.mark.parametrize("where", ["quire.training.chunk_units", "quire.training.detect_language"])
def test_a_bug_in_chunking_or_language_detection_fails_one_file(monkeypatch, where):
    import quire.training

    target = getattr(quire.training, where.rsplit(".", 1)[1])

    def flaky(*args, **kwargs):
        if "Poison" in repr(args):
            raise RuntimeError("boom")
        return target(*args, **kwargs)

    monkeypatch.setattr(where, flaky)
    lib, counts = run(train_with_good([("poison.md", b"# Poison\nAmanita phalloides is deadly.\n")]))
    bad = outcome(counts, "poison.md")
    assert bad["outcome"] == "failed" and "RuntimeError: boom" in bad["error"] and "bug in Quire" in bad["error"]
    assert bad["detail"].startswith("Traceback (most recent call last):") and "in flaky" in bad["detail"]
    assert "detail" not in outcome(counts, GOOD[0])
    assert_good_trained(lib, counts)


def test_a_reader_bug_names_its_cause(monkeypatch, caplog):
    import quire.extract.text

    def broken(data, name):
        raise KeyError("surprise")

    monkeypatch.setattr(quire.extract.text, "extract_text", broken)
    with pytest.raises(ExtractError, match=r"could not read a.txt: KeyError: 'surprise'"):
        extract("a.txt", b"hello")
    lib, counts = run(train_with_good([("a.txt", b"hello")]))
    bad = outcome(counts, "a.txt")  # one bad file fails alone, its traceback in its row
    assert bad["outcome"] == "failed" and "KeyError: 'surprise'" in bad["error"] and "in broken" in bad["detail"]
    assert_good_trained(lib, counts)
    assert any("could not read a.txt" in r.message and r.exc_info for r in caplog.records)


# ---------------------------------------------------------------- staged files and big originals

def test_a_staged_file_without_its_original_fails_and_never_blocks_later_trains():
    async def go():
        lib = await Library.open(MemoryStore())
        lost = await lib.stage("lost.txt", b"The browser refused to store these bytes.")
        await lib.store.commit(deletes=originals.deletes(lost["id"], lost["size"]))  # as when the put was refused
        first = await lib.train()
        await lib.stage("tiny.txt", b"Tiny file about photosynthesis.")
        second = await lib.train()
        return lib, first, second

    lib, first, second = run(go())
    assert outcome(first, "lost.txt")["outcome"] == "failed"
    assert "was not saved" in outcome(first, "lost.txt")["error"]
    assert second["added"] == 1 and second["failed"] == 0
    assert [s["status"] for s in lib.sources()] == ["failed", "trained"]


def test_a_large_original_is_stored_in_pieces_and_trains(monkeypatch):
    monkeypatch.setattr(originals, "PIECE", 4096)
    monkeypatch.setattr(originals.puts, "__defaults__", (4096,))
    monkeypatch.setattr(originals.deletes, "__defaults__", (4096,))
    data = ("Osmosis moves water across a membrane. " * 400).encode()  # ~16 KB: five pieces

    async def go():
        from quire.app import Quire

        q = await Quire.open(MemoryStore())
        rec = await q.stage("big.txt", data)
        stored = await q.store.all("originals")
        counts = await q.train()
        return q, rec, stored, counts

    q, rec, stored, counts = run(go())
    assert sorted(stored) == [rec["id"]] + [f"{rec['id']}#{i}" for i in range(4)]
    assert all(len(v) <= 4096 for k, v in stored.items() if "#" in k)
    assert counts["added"] == 1
    assert run(q.original(rec["id"])) == data
    run(q.remove(rec["id"]))
    assert run(q.store.all("originals")) == {}


def test_passages_too_large_to_store_fail_that_file_only(monkeypatch):
    import quire.training

    monkeypatch.setattr(quire.training, "MAX_CHUNKS_VALUE", 200_000)
    lib, counts = run(train_with_good([("huge.txt", ("Granite is coarse. " * 20_000).encode())]))
    bad = outcome(counts, "huge.txt")
    assert bad["outcome"] == "failed" and "more than the browser stores for one file" in bad["error"]
    assert_good_trained(lib, counts)


# ---------------------------------------------------------------- long PDFs: cancel and time budget

@pytest.fixture(scope="module")
def endless_pdf() -> bytes:
    return tiny_pdf(5000)


def test_cancel_is_heard_between_pages_of_one_long_pdf(endless_pdf):
    pages = []

    async def go():
        lib = await Library.open(MemoryStore())
        await lib.stage("endless.pdf", endless_pdf)
        import quire.extract.pdf as pdf

        real = pdf.clean_page

        def counting(text):
            pages.append(text)
            return real(text)

        pdf.clean_page = counting
        try:
            try:
                await lib.train(cancelled=lambda: len(pages) >= 30)
            except TrainCancelled as exc:
                message = str(exc)
            else:
                message = None
        finally:
            pdf.clean_page = real
        await lib.stage("tiny.txt", b"Tiny file about photosynthesis.")
        lib.limits = Limits(max_seconds=0)  # the PDF stops at once, the tiny file trains
        return lib, message, await lib.train()

    lib, message, after = run(go())
    assert message and "cancelled" in message and "page 31" in message
    assert len(pages) == 30
    assert after["added"] == 2  # nothing was committed by the cancelled Train: the PDF was still staged
    pdf_record = next(s for s in lib.sources() if s["name"] == "endless.pdf")
    assert any("only pages 1–0 of 5000 were read" in w for w in pdf_record["warnings"]), pdf_record["warnings"]


def test_the_time_budget_keeps_the_pages_read_and_says_so(endless_pdf, monkeypatch):
    # The reader's clock advances 0.1 s per look, so the budget runs out after page 10 however
    # fast or busy the machine (on the real clock a quiet machine read all 5,000 pages within 1 s
    # and a loaded one failed a wall-clock bound).
    from quire.extract import pdf

    ticks = iter(range(10**6))
    monkeypatch.setattr(pdf, "time", types.SimpleNamespace(monotonic=lambda: next(ticks) / 10))
    ex = extract("endless.pdf", endless_pdf, limits=Limits(max_seconds=1.0))
    assert len(ex.units) == 10 and ex.meta["pages_read"] == 10
    assert any("only pages 1–10 of 5000 were read: reading one file may take at most 1 s" in w for w in ex.warnings)
    assert ex.units[0].text.startswith("Page 1 of the endless archive")
