"""The key flow on CPython against a real ``llama-server --api-key`` (no key, wrong key, right key),
and the vault searched for the key.  Apart from the Chromium tests: Playwright's sync API keeps an
event loop running in the thread, and ``asyncio.run`` refuses to start beside it."""

import asyncio
import base64

from .conftest import CHAT_ALIAS, KEY
from .test_real_browser import SHORT
from .test_real_keys import WRONG, vault_holds


def test_key_flow_on_cpython(llama_keyed):
    from quire.app import Quire
    from quire.store import MemoryStore

    async def main():
        q = await Quire.open(MemoryStore())
        await q.llm.save({"url": llama_keyed.url, "kind": "openai", "chat_model": CHAT_ALIAS, "num_predict": SHORT})
        none = await q.llm.status()
        await q.llm.save({"api_key": WRONG})
        wrong = await q.llm.status()
        await q.llm.save({"api_key": KEY})
        right = await q.llm.status()
        vault = base64.b64decode((await q.export_vault())["base64"])
        return none, wrong, right, vault

    none, wrong, right, vault = asyncio.run(main())
    assert (none["status"], none["has_key"]) == ("key_needed", False)
    assert (wrong["status"], wrong["has_key"]) == ("key_refused", True)
    assert (right["status"], right["has_key"]) == ("connected", True)
    assert vault_holds(vault, KEY) == []


def test_a_study_generator_gets_bounded_structured_output_through_the_key(llama_keyed):
    """What works keyless works with a key: flashcards through the bounded schema, every request keyed."""
    from quire.app import Quire
    from quire.store import MemoryStore

    from .test_real_browser import BIO

    async def main():
        q = await Quire.open(MemoryStore())
        await q.stage_text("Biology", BIO)
        await q.train()
        await q.llm.save({"url": llama_keyed.url, "kind": "openai", "chat_model": CHAT_ALIAS, "api_key": KEY})
        return await q.generate("flashcards", count=2)

    made = asyncio.run(main())
    assert not made["made_without_ai"] and made["report"]["kept"] >= 1, made["report"]
    assert 0 < len(made["items"]) <= 2 and all(item["chunk_ids"] for item in made["items"])
