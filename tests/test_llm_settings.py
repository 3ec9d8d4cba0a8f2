"""quire.llm.settings and the settings half of quire.services.llm: a server per role, migration,
confirmation of both servers, and vaults that never move either server."""

import asyncio

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.llm import BlockingAsyncTransport
from quire.llm.settings import DEFAULTS, migrate, roles, same_server, validate
from quire.services import llm as llm_service
from quire.store import MemoryStore
from quire.vault_settings import engine_settings, page_settings


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("saved,expected", [
    (None, {"url": DEFAULTS["url"], "kind": "ollama", "embed_url": DEFAULTS["url"], "embed_kind": "ollama"}),
    # One URL from before embeddings had their own server: both roles are that server.
    ({"url": "http://127.0.0.1:8080", "kind": "openai", "chat_model": "g", "embed_model": "e5"},
     {"url": "http://127.0.0.1:8080", "kind": "openai", "embed_url": "http://127.0.0.1:8080", "embed_kind": "openai",
      "chat_model": "g", "embed_model": "e5"}),
    ({"url": "http://127.0.0.1:8080", "kind": "openai", "embed_url": "http://127.0.0.1:11434", "embed_kind": "ollama"},
     {"url": "http://127.0.0.1:8080", "embed_url": "http://127.0.0.1:11434", "embed_kind": "ollama"}),
    # Unknown keys and broken prefix settings are dropped, good ones kept.
    ({"network": "x", "prefixes": {"a": {"mode": "server"}, "b": {"mode": "nonsense"}, "c": 3}},
     {"prefixes": {"a": {"mode": "server"}}}),
    ({"prefixes": "not a dict", "picked": {"chat": "http://127.0.0.1:11434", "spy": "x"}},
     {"prefixes": {}, "picked": {"chat": "http://127.0.0.1:11434"}}),
])
def test_migrate(saved, expected):
    out = migrate(saved)
    assert set(out) == set(DEFAULTS)
    assert {k: out[k] for k in expected} == expected


@pytest.mark.parametrize("change,error", [
    ({"embed_kind": "vllm"}, "server kind must be one of ollama, openai"),
    ({"embed_url": "127.0.0.1:8000"}, "must start with http://"),
    ({"embed_url": "http://user:pw@127.0.0.1:8000"}, "user name or password"),
    ({"prefixes": {"e5": {"mode": "sometimes"}}}, "mode, one of auto, server, custom"),
    ({"prefixes": {"e5": {"mode": "custom", "query": "q" * 501}}}, "at most 500"),
])
def test_validate_names_the_problem(change, error):
    with pytest.raises(ValueError, match=error):
        validate({**migrate({}), **change})


def test_roles_and_same_server():
    s = migrate({"url": "http://127.0.0.1:8080", "kind": "openai"})
    assert roles(s) == {"chat": ("openai", "http://127.0.0.1:8080"), "embeddings": ("openai", "http://127.0.0.1:8080")}
    assert same_server(s) and not same_server({**s, "embed_url": "http://127.0.0.1:9000"})


async def engine(**stored):
    store = MemoryStore()
    if stored:
        await store.commit([("settings", llm_service.SETTINGS_KEY, stored)])
    return await Quire.open(store, transport=BlockingAsyncTransport())


def test_one_server_moves_both_roles_until_set_apart():
    async def go():
        q = await engine()
        await q.llm.save({"url": "http://127.0.0.1:8080", "kind": "openai"})
        together = dict(q.llm.settings)
        await q.llm.save({"embed_url": "http://127.0.0.1:9000"})
        await q.llm.save({"url": "http://127.0.0.1:8081"})
        return together, dict(q.llm.settings), await q.store.get("settings", "llm")
    together, apart, stored = run(go())
    assert together["embed_url"] == "http://127.0.0.1:8080" and together["embed_kind"] == "openai"
    assert apart["url"] == "http://127.0.0.1:8081" and apart["embed_url"] == "http://127.0.0.1:9000"
    assert stored["embed_url"] == "http://127.0.0.1:9000"


def test_old_stored_settings_load_as_both_roles():
    async def go():
        q = await engine(url="http://127.0.0.1:8080", kind="openai", chat_model="g", embed_model="e5")
        return q.llm.settings, q.llm.client().base_url, q.llm.embed_client().base_url
    settings, chat, embed = run(go())
    assert settings["embed_url"] == settings["url"] == "http://127.0.0.1:8080"
    assert chat == embed == "http://127.0.0.1:8080/v1"


def test_an_embedding_server_on_another_computer_needs_its_own_confirmation():
    async def go():
        q = await engine()
        refused = None
        try:
            await q.llm.save({"embed_url": "http://192.168.1.9:8000"})
        except ValueError as exc:
            refused = str(exc)
        before = q.llm.allows("http://192.168.1.9:8000")
        await q.llm.save({"embed_url": "http://192.168.1.9:8000"}, confirm=["http://192.168.1.9:8000"])
        return refused, before, q.llm.allows("http://192.168.1.9:8000"), q.llm.settings
    refused, before, after, settings = run(go())
    assert "would be sent to http://192.168.1.9:8000, which is not this computer" in refused
    assert not before and after and settings["url"] == DEFAULTS["url"]


def test_an_unconfirmed_embedding_server_is_not_contacted():
    with OllamaStub() as stub:
        async def go():
            remote = f"http://evil.test:{stub.port}"
            q = await engine(url=stub.url, embed_url=remote, embed_model="embeddinggemma")
            status = await q.llm.status()
            try:
                await q.llm.embed_texts(["x"], "query")
            except llm_service.Unconfirmed as exc:
                return status, str(exc)
        status, error = run(go())
    assert status["status"] == "connected"  # chat is on this computer
    assert status["embed"]["status"] == "unconfirmed" and "evil.test" in status["embed"]["message"]
    assert "did not contact http://evil.test" in error


def test_a_vault_changes_neither_server():
    mine = {"llm": migrate({"url": "http://127.0.0.1:11434", "embed_url": "http://127.0.0.1:8000",
                            "embed_kind": "openai", "embed_model": "mine"})}
    theirs = {"llm": {"url": "http://127.0.0.1:11434", "embed_url": "http://evil.invalid:8000", "embed_kind": "openai",
                      "embed_model": "theirs"}}
    kept, ignored = engine_settings(theirs, mine, "replace")
    assert kept["llm"] == mine["llm"]
    assert ignored[0] == ("The vault named the embedding server http://evil.invalid:8000; your own setting "
                          "(http://127.0.0.1:8000) was kept.")
    # An old vault (one url) equal to ours on both roles brings its model choice.
    old = {"llm": {"url": "http://127.0.0.1:11434", "chat_model": "theirs"}}
    kept, ignored = engine_settings(old, {"llm": migrate({})}, "replace")
    assert ignored == [] and kept["llm"]["chat_model"] == "theirs"
    page, said = page_settings({"quire.llm.embed_url": "http://evil.invalid:8000"}, {"quire.llm.url": DEFAULTS["url"]})
    assert page == {} and said == ["The vault named the embedding server http://evil.invalid:8000; your own setting was kept."]


def test_two_saves_that_overlap_both_stay():
    # The first connection's model pick and the person's own change, written at the same time:
    # each merged into the settings from before the other, and the last one written undid the first.
    async def go():
        q = await engine()
        commit, gate, waiting = q.store.commit, asyncio.Event(), asyncio.Event()

        async def slow_first(*args, **kw):
            q.store.commit = commit  # only the first write is slow
            waiting.set()
            await gate.wait()
            return await commit(*args, **kw)
        q.store.commit = slow_first
        first = asyncio.ensure_future(q.llm.save({"chat_model": "qwen3:4b"}))
        await waiting.wait()
        second = asyncio.ensure_future(q.llm.save({"temperature": 0.5}))
        gate.set()
        await first
        await second
        return dict(q.llm.settings), await q.store.get("settings", "llm")
    memory, stored = run(go())
    for settings in (memory, stored):
        assert settings["chat_model"] == "qwen3:4b" and settings["temperature"] == 0.5
