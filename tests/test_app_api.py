"""The Python API mirrors window.quire: the same methods by the same names, on CPython."""

import asyncio
import base64

from quire.app import Quire
from quire.store import MemoryStore

NOTES = b"""# Cells
Mitochondria make ATP for the cell. The nucleus holds the DNA of the cell.

# Division
Mitosis makes two identical cells. Meiosis makes four cells with half the chromosomes.
"""


def test_ask_generate_progress_and_vault_without_a_model(pdf_dir):
    async def go():
        q = await Quire.open(MemoryStore())
        await q.llm.save({"url": "http://127.0.0.1:9"})  # nothing listens: the no-model paths
        await q.stage("cells.md", NOTES, category="Biology")
        await q.stage("N18-3011.pdf", (pdf_dir / "acl-papers/N18-3011.pdf").read_bytes(), category="Papers")
        await q.train()
        answer = await q.ask("What makes ATP?", scope={"category": "Biology"})
        assert answer["mode"] != "llm" and answer["citations"][0]["source"] == "cells.md"
        quiz = await q.generate("quiz", scope={"category": "Papers"}, count=3)
        assert quiz["kind"] == "quiz" and len(quiz["items"]) == 3
        assert (await q.call("studySets"))  # the same call the page makes
        progress = await q.progress(0)
        assert "streak" in str(progress).lower()
        vault = await q.export_vault()
        other = await Quire.open(MemoryStore())
        await other.import_vault(base64.b64decode(vault["base64"]), "replace")
        assert sorted(s["name"] for s in other.sources()) == ["N18-3011.pdf", "cells.md"]
        assert (await other.search("mitochondria"))[0]["source"] == "cells.md"
    asyncio.run(go())
