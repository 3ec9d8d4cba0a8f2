"""API keys against a real ``llama-server --api-key``: it refuses (401) any request without the right
``Authorization: Bearer`` header, as OpenAI, Gemini and any keyed host do.  The key flow of Settings
(wrong key, right key, key removed) in Chromium over http and from file://, and on CPython; a vault
exported with a key saved is searched byte for byte (every member inflated) for it: never found."""

import base64
import io
import json
import zipfile

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready

from .conftest import CHAT_ALIAS, KEY
from .test_real_browser import BIO, SHORT, open_page

pytestmark = pytest.mark.browser

WRONG = "quire-test-wrong-key-0000"


def vault_holds(data: bytes, secret: str) -> list[str]:
    """Where ``secret`` occurs in a vault file: the raw bytes, or any member once inflated."""
    found = ["(the file)"] if secret.encode() in data else []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        found += [n for n in z.namelist() if secret.encode() in z.read(n)]
    return found


SAVE = """async ([url, key]) => {
    const s = await quire.saveSettings({url, kind: 'openai', chat_model: '%s', num_predict: %d, api_key: key});
    return {status: s.status, has_key: s.has_key, message: s.message, fix: s.fix, text: JSON.stringify(s)};
}""" % (CHAT_ALIAS, SHORT)


def key_flow(page, url, log):
    """Wrong key, right key (an answer from the model), the vault, key removed."""
    page.evaluate("async (text) => { await quire.stage({name: 'Biology.md', text}); await quire.train(); }", BIO)
    wrong = page.evaluate(SAVE, [url, WRONG])
    assert wrong["status"] == "key_refused" and wrong["has_key"] is True, wrong
    assert "Invalid API Key" in wrong["message"] and WRONG not in wrong["text"]

    right = page.evaluate(SAVE, [url, KEY])
    assert right["status"] == "connected" and right["has_key"] is True, right
    assert KEY not in right["text"]  # llmStatus says whether, never which
    r = page.evaluate("async () => { const r = await quire.ask('What does mitosis make?'); return {mode: r.mode, answer: r.answer}; }")
    assert r["mode"] == "llm" and r["answer"].strip(), r

    # Where it lives: quire.main's kv, for that server's origin; nowhere in the engine's settings.
    stored = page.evaluate("async () => QuireStore.get('llm.api_key')")
    assert json.loads(stored) == {"origin": url, "key": KEY}
    assert KEY not in json.dumps(page.evaluate("() => quire._call('llmSettings')"))
    assert KEY not in json.dumps(page.evaluate("() => quire.networkLog()"))
    page.get_by_test_id("nav-privacy").click()
    page.wait_for_selector("[data-testid=privacy-api-key][data-state=saved]")
    assert KEY not in page.content()

    vault = page.evaluate("""async () => {
        const file = await quire.exportVault();
        const bytes = new Uint8Array(await file.arrayBuffer());
        let s = ''; for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
        return btoa(s);
    }""")
    assert vault_holds(base64.b64decode(vault), KEY) == []

    page.get_by_test_id("nav-settings").click()
    page.get_by_test_id("llm-api-key-remove").click()
    page.wait_for_selector("[data-testid=llm-state][data-state=key_needed]")
    assert page.evaluate("async () => QuireStore.get('llm.api_key')") is None
    gone = page.evaluate("async () => { const s = await quire.llmStatus(); return {status: s.status, has_key: s.has_key}; }")
    assert gone == {"status": "key_needed", "has_key": False}
    assert not log.errors, log.errors


def test_key_flow_in_chromium_over_http(context, built_dist, serve, llama_keyed, page_log):
    page = open_page(context, serve(built_dist).url, llama_keyed.url, page_log)
    key_flow(page, llama_keyed.url, page_log)


def test_key_flow_in_chromium_from_file(playwright_instance, built_dist, llama_keyed, tmp_path):
    ctx = playwright_instance.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                                 args=CHROMIUM_ARGS)
    try:
        log = PageLog()
        page = open_page(ctx, (built_dist / "index.html").as_uri(), llama_keyed.url, log)
        key_flow(page, llama_keyed.url, log)
    finally:
        ctx.close()


def test_key_typed_in_settings_is_masked_shown_and_saved(context, built_dist, serve, llama_keyed, page_log):
    """What a person does: type the key under API key (masked), Show it, Save; the field is emptied."""
    page = open_page(context, serve(built_dist).url, llama_keyed.url, page_log)
    page.get_by_test_id("nav-settings").click()
    page.get_by_test_id("llm-kind").select_option("openai")
    page.get_by_test_id("llm-url").fill(llama_keyed.url)
    field = page.get_by_test_id("llm-api-key")
    field.fill(KEY)
    assert field.get_attribute("type") == "password"
    page.get_by_test_id("llm-api-key-show").click()
    assert field.get_attribute("type") == "text"
    page.get_by_test_id("llm-save").click()
    page.wait_for_selector("[data-testid=llm-api-key-state][data-has-key=true]")
    page.wait_for_selector("[data-testid=llm-state][data-state=connected]")
    assert field.input_value() == ""
    assert not page_log.errors, page_log.errors
