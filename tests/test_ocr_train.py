"""OCR inside Train with a scripted engine: which pages are read, language, cache and resume,
forced OCR, images, and a bundle without OCR."""

import asyncio

import pytest

from quire.app import Quire
from quire.training import TrainCancelled
from quire.store import MemoryStore


class FakeEngine:
    """Answers like QuireOCR would, and remembers what it was asked."""

    def __init__(self):
        self.calls = []

    async def __call__(self, key, data, page, kind, lang):
        self.calls.append((page, kind, lang))
        n = page or 1
        return {"text": f"Recognised words on scanned page {n} about lighthouses{n}.", "confidence": 90 + n}


def run(coro):
    return asyncio.run(coro)


async def open_with(engine, store=None):
    q = await Quire.open(store or MemoryStore())
    q.library.recognise = engine
    return q


def test_only_pages_without_text_are_read_and_become_searchable(pdf_dir):
    async def go():
        engine = FakeEngine()
        q = await open_with(engine)
        await q.stage("multipage.pdf", (pdf_dir / "ocrmypdf-scans/multipage.pdf").read_bytes())
        counts = await q.train()
        assert counts["added"] == 1
        assert [c[0] for c in engine.calls] == [1, 2, 3, 5, 6]  # page 4 has a text layer
        assert {c[2] for c in engine.calls} == {"eng+deu"}  # a scan's language is unknown: both
        source = q.sources()[0]
        assert source["ocr_pages"] == {"1": 91.0, "2": 92.0, "3": 93.0, "5": 95.0, "6": 96.0}
        assert source["needs_ocr_pages"] == []
        hit = (await q.search("lighthouses3"))[0]
        assert hit["location"] == {"page": 3}
        page4 = (await q.search("percentage oppose"))[0]
        assert page4["location"] == {"page": 4}  # page 4 keeps its own text layer
    run(go())


def test_cancel_keeps_read_pages_and_train_resumes(pdf_dir):
    async def go():
        store = MemoryStore()
        engine = FakeEngine()
        q = await open_with(engine, store)
        await q.stage("multipage.pdf", (pdf_dir / "ocrmypdf-scans/multipage.pdf").read_bytes())
        with pytest.raises(TrainCancelled, match="OCR stopped after 2 of 5 pages"):
            await q.train(cancelled=lambda: len(engine.calls) >= 2)
        assert q.sources()[0]["status"] == "staged" and len(await store.keys("ocr")) == 2
        await q.train()
        assert [c[0] for c in engine.calls] == [1, 2, 3, 5, 6]  # pages 1 and 2 came from the cache
        assert q.sources()[0]["status"] == "trained"
    run(go())


def test_language_follows_the_source_or_the_setting(pdf_dir):
    async def go():
        engine = FakeEngine()
        q = await open_with(engine)
        await q.stage("c02-22.pdf", (pdf_dir / "ocrmypdf-scans/c02-22.pdf").read_bytes(), language="de")
        await q.train()
        await q.library.set_ocr_language("eng")
        await q.stage("linn.pdf", (pdf_dir / "ocrmypdf-scans/linn.pdf").read_bytes())
        await q.train()
        assert [c[2] for c in engine.calls] == ["deu", "eng"]
    run(go())


def test_forced_ocr_reads_every_page_again(pdf_dir):
    async def go():
        engine = FakeEngine()
        q = await open_with(engine)
        rec = await q.stage("paper.pdf", (pdf_dir / "py-pdf-sample-files/pdflatex-4-pages.pdf").read_bytes())
        await q.train()
        assert engine.calls == []
        staged = await q.library.set_force_ocr(rec["id"], True)
        assert staged["status"] == "staged"
        counts = await q.train()
        assert counts["changed"] == 1 and [c[0] for c in engine.calls] == [1, 2, 3, 4]
        assert (await q.search("lighthouses2"))[0]["location"] == {"page": 2}
    run(go())


def test_images_are_read_by_ocr(tmp_path):
    async def go():
        engine = FakeEngine()
        q = await open_with(engine)
        png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
        await q.stage("whiteboard.png", png)
        await q.train()
        assert engine.calls == [(None, "image", "eng+deu")]
        hit = (await q.search("lighthouses"))[0]
        assert hit["source"] == "whiteboard.png" and hit["location"] == {"page": 1}
    run(go())


def test_without_ocr_scans_stay_marked_and_say_why(pdf_dir):
    async def go():
        q = await open_with(None)
        await q.stage("c02-22.pdf", (pdf_dir / "ocrmypdf-scans/c02-22.pdf").read_bytes())
        counts = await q.train()
        source = q.sources()[0]
        assert counts["added"] == 1 and source["needs_ocr_pages"] == [1]
        assert any("OCR is not included" in w for w in source["warnings"])
    run(go())
