"""Two servers, two keys, in real Chromium (issue 29's ``embed_api_key``): the chat server and a separate
embedding server, two local stand-ins (tests/cloud_server.py) that each refuse any request without their
own ``Authorization: Bearer``.  The page's worker sends each server only its own key (the stand-ins
record every request), and neither key is in ``llmStatus()``, the page, quire.main's settings or an
exported vault (every member inflated)."""

import base64
import io
import json
import zipfile

import pytest

from cloud_server import CloudStandIn
from conftest import wait_ready

pytestmark = pytest.mark.browser

CHAT_KEY = "sk-chat-browser-0123456789"
EMBED_KEY = "sk-embed-browser-9876543210"
EXPORT = """async () => {
    const file = await quire.exportVault();
    const bytes = new Uint8Array(await file.arrayBuffer());
    let s = ''; for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
}"""


def members(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return data + b"".join(z.read(n) for n in z.namelist())


def test_chat_and_embedding_servers_each_get_their_own_key_in_chromium(context, built_dist, serve, page_log):
    with CloudStandIn(CHAT_KEY) as chat, CloudStandIn(EMBED_KEY) as embed:
        page = page_log.attach(context.new_page())
        page.set_default_timeout(90_000)
        page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(chat.url)}); "  # read by csp.js
                             f"localStorage.setItem('quire.llm.embed_url', {json.dumps(embed.url)})")
        page.goto(serve(built_dist).url)
        wait_ready(page)
        status = page.evaluate("""async ([chat, embed, chatKey, embedKey]) => {
            await quire.stage({name: 'Weather.md', text: '# San Francisco\\nThe weather in San Francisco is often foggy in summer.'});
            await quire.train();
            const s = await quire.saveSettings({url: chat, kind: 'openai', chat_model: 'model-id-0', api_key: chatKey,
                                                embed_url: embed, embed_kind: 'openai', embed_model: 'model-id-1',
                                                embed_api_key: embedKey});
            await quire.embed();
            const r = await quire.ask('What is the weather in San Francisco?');
            const again = await quire.llmStatus();
            return {saved: s.status, embedSaved: s.embed.status, has: [again.has_key, again.embed.has_key],
                    mode: r.mode, answer: r.answer, text: JSON.stringify([s, again, r])};
        }""", [chat.url, embed.url, CHAT_KEY, EMBED_KEY])
        assert (status["saved"], status["embedSaved"], status["has"]) == ("connected", "connected", [True, True]), status
        assert status["mode"] == "llm" and status["answer"].startswith("I'm unable to provide real-time weather updates.")

        assert [r for r in embed.requests if r["path"] == "/v1/embeddings"]
        assert [r for r in chat.requests if r["path"] == "/v1/chat/completions"]
        assert not [r for r in chat.requests if r["path"] == "/v1/embeddings"]
        assert {r["headers"].get("authorization") for r in chat.requests} == {f"Bearer {CHAT_KEY}"}
        assert {r["headers"].get("authorization") for r in embed.requests} == {f"Bearer {EMBED_KEY}"}
        assert all(r["headers"].get("origin") for r in chat.requests + embed.requests)  # from the page, not from here

        vault = members(base64.b64decode(page.evaluate(EXPORT)))
        settings = json.dumps(page.evaluate("() => quire._call('llmSettings')"))
        for key in (CHAT_KEY, EMBED_KEY):
            assert key not in status["text"] and key not in settings and key not in page.content()
            assert key.encode() not in vault
        assert not page_log.errors, page_log.errors
