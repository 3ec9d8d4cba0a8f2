"""API keys (issue 29): kept apart from the settings a vault carries, sent as ``Authorization: Bearer``
only to the server each was saved for, never repeated in a status, a message or a vault; a vault can
never set one.  The transport here records what would have been sent and answers like an
OpenAI-compatible server that wants the key (the real ``llama-server --api-key``: tests/real/test_real_keys.py)."""

import asyncio
import base64
import io
import json
import zipfile

import pytest

from quire.app import Quire
from quire.errors import InvalidInput
from quire.llm.parse import http_error
from quire.services.llm import MemorySecrets
from quire.store import MemoryStore

KEY = "sk-test-Zq81x0-abcdef"
URL = "http://127.0.0.1:8080"  # a keyed server on this computer: no confirmation needed


class _Resp:
    def __init__(self, status, body, headers=None):
        self.status, self._body, self._headers = status, body, headers or {}

    async def json(self):
        return json.loads(self._body)

    async def text(self):
        return self._body

    async def iter_lines(self):
        for line in self._body.splitlines():
            yield line

    async def close(self):
        pass

    def header(self, name):
        return self._headers.get(name)


class Keyed:
    """Answers /v1/models only with the right key; a wrong one gets a 401 quoting it (as some servers do)."""

    def __init__(self, key=KEY):
        self.key, self.sent = key, []

    async def request(self, method, url, body=None, stream=False, headers=None):
        self.sent.append((url, dict(headers or {})))
        auth = (headers or {}).get("Authorization", "")
        if auth != f"Bearer {self.key}":
            given = auth.removeprefix("Bearer ")
            return _Resp(401, json.dumps({"error": {"message": f"Incorrect API key provided: {given}",
                                                    "type": "invalid_request_error", "code": "invalid_api_key"}}))
        if url.endswith("/props"):
            return _Resp(404, "")
        return _Resp(200, json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}))


def run(coro):
    return asyncio.run(coro)


async def engine(transport, secrets=None):
    q = await Quire.open(MemoryStore(), transport=transport, secrets=secrets)
    await q.llm.save({"url": URL, "kind": "openai", "chat_model": "m"})
    return q


def test_a_key_is_sent_as_bearer_and_only_whether_it_is_set_is_said():
    async def main():
        t = Keyed()
        q = await engine(t)
        before = await q.llm.status()
        await q.llm.save({"api_key": KEY})
        after = await q.llm.status()
        return t, q, before, after

    t, q, before, after = run(main())
    assert (before["status"], before["has_key"]) == ("key_needed", False)
    assert (after["status"], after["has_key"], after["embed"]["has_key"]) == ("connected", True, True)
    assert KEY not in json.dumps(after, default=str) and "api_key" not in after["settings"]
    assert t.sent[-1][1] == {"Authorization": f"Bearer {KEY}"}


def test_a_refused_key_is_never_repeated_in_the_message():
    async def main():
        q = await engine(Keyed(key="the-right-one"))
        await q.llm.save({"api_key": KEY})
        return await q.llm.status()

    s = run(main())
    assert s["status"] == "key_refused" and "Incorrect API key provided: [API key]" in s["message"]
    assert KEY not in json.dumps(s, default=str)


def test_the_key_stays_with_its_server_when_the_address_changes():
    """A key saved for one server is never sent to another (a changed or planted address)."""
    async def main():
        t = Keyed()
        q = await engine(t)
        await q.llm.save({"api_key": KEY})
        await q.llm.save({"url": "http://127.0.0.1:9090"})
        t.sent.clear()
        s = await q.llm.status()
        return t, s

    t, s = run(main())
    assert s["has_key"] is False
    assert t.sent and all("Authorization" not in h for _, h in t.sent)


def test_keys_live_only_in_the_secrets_store_and_remove_forgets_them():
    async def main():
        secrets = MemorySecrets()
        q = await engine(Keyed(), secrets)
        await q.llm.save({"api_key": KEY})
        stored = dict(secrets._values)
        settings = await q.store.get("settings", "llm")
        await q.llm.remove_keys()
        return stored, settings, dict(secrets._values), await q.llm.status()

    stored, settings, after, s = run(main())
    assert stored == {"llm.api_key": {"origin": URL, "key": KEY}, "llm.embed_api_key": {"origin": URL, "key": KEY}}
    assert KEY not in json.dumps(settings)
    assert after == {} and s["has_key"] is False


@pytest.mark.parametrize("bad", ["sk test", "sk-\u00e9", "x" * 5000])
def test_a_malformed_key_is_refused_without_repeating_it(bad):
    async def main():
        q = await engine(Keyed())
        with pytest.raises(InvalidInput) as err:
            await q.llm.save({"api_key": bad})
        return str(err.value)

    assert bad not in run(main())


def members(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return data + b"".join(z.read(n) for n in z.namelist())


def test_a_vault_never_carries_a_key_and_never_sets_one():
    async def main():
        q = await engine(Keyed())
        await q.llm.save({"api_key": KEY})
        vault = base64.b64decode((await q.export_vault())["base64"])
        # A vault from elsewhere whose settings name a key (and a provider's address): nothing of it is used.
        other = await engine(Keyed())
        await other.store.commit([("settings", "llm", {**other.llm.settings, "api_key": "planted-key",
                                                        "embed_api_key": "planted-key", "provider": "openai"})])
        crafted = base64.b64decode((await other.export_vault())["base64"])
        fresh = await engine(Keyed())
        result = await fresh.import_vault(crafted, "replace")
        await fresh.llm.load()
        return vault, crafted, result, fresh

    vault, crafted, result, fresh = run(main())
    assert KEY.encode() not in members(vault)
    assert b"planted-key" in members(crafted)  # the crafted vault really names one
    assert fresh.llm.key("chat") == "" and fresh.llm.key("embeddings") == ""
    assert "api_key" not in fresh.llm.settings and "provider" not in fresh.llm.settings


def test_429_keeps_the_wait_the_server_gives():
    gemini = json.dumps({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                                   "status": "RESOURCE_EXHAUSTED",
                                   "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34s"}]}})
    assert http_error(429, gemini).retry_after == "34s"
    assert http_error(429, '{"error": {"message": "Rate limit reached"}}', "20").retry_after == "20s"
    from quire.llm.diagnosis import diagnose
    d = diagnose("null", reachable=True, cors_ok=False, error=http_error(429, gemini), kind="openai", has_key=True)
    assert d.status == "rate_limited" and "34s" in d.fix and "Resource has been exhausted" in d.message
