"""The cloud presets in Settings (issue 29), in real Chromium, with no internet: the providers' hosts
resolve to nothing here (``--host-resolver-rules ... ~NOTFOUND``), so a request could never leave.

Choosing OpenAI or Google Gemini fills in its OpenAI-compatible address; before anything is sent the
confirmation names the host and the provider and says what goes there; Save needs the tick; the key is
saved in IndexedDB quire.main for that origin only; Privacy names the provider, what each request
carries and where the key lives; after the reload the page's CSP admits exactly that host."""

import json

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready

pytestmark = pytest.mark.browser

KEY = "sk-test-preset-0123456789"
HOSTS = ("api.openai.com", "generativelanguage.googleapis.com")
CSP = "() => [...document.querySelectorAll('meta[http-equiv=\"Content-Security-Policy\"]')].map(m => m.content).join(' ')"


@pytest.fixture(scope="module")
def offline_browser(playwright_instance):
    rules = ", ".join(f"MAP {h} ~NOTFOUND" for h in HOSTS)
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + [f"--host-resolver-rules={rules}"])
    yield b
    b.close()


def open_settings(browser, url, log):
    ctx = browser.new_context()
    page = log.attach(ctx.new_page())
    page.set_default_timeout(90_000)
    page.goto(url)
    wait_ready(page)
    page.get_by_test_id("nav-settings").click()
    return ctx, page


def test_openai_preset_confirm_key_privacy_and_csp(offline_browser, built_dist, serve):
    log = PageLog()
    ctx, page = open_settings(offline_browser, serve(built_dist).url, log)
    try:
        page.get_by_test_id("llm-kind").select_option("openai:openai")
        assert page.get_by_test_id("llm-url").input_value() == "https://api.openai.com/v1"
        assert page.get_by_test_id("llm-remote-where").inner_text() == (
            "Questions and the passages found for them will be sent to api.openai.com (OpenAI). Your documents stay "
            "here; only the passages shown as citations are sent.")
        assert page.get_by_test_id("llm-api-key-row").is_visible()
        page.get_by_test_id("llm-api-key").fill(KEY)

        page.get_by_test_id("llm-save").click()  # no tick: not saved
        page.wait_for_selector(".toast >> text=Not saved")
        assert page.evaluate("async () => QuireStore.get('llm.api_key')") is None

        page.get_by_test_id("llm-remote-confirm").check()
        page.get_by_test_id("llm-save").click()
        page.wait_for_selector("[data-testid=llm-state][data-state=reload_needed]")
        assert json.loads(page.evaluate("async () => QuireStore.get('llm.api_key')")) == {
            "origin": "https://api.openai.com", "key": KEY}
        status = page.evaluate("async () => quire.llmStatus()")
        assert status["provider"] == "OpenAI" and status["has_key"] is True and KEY not in json.dumps(status)

        page.get_by_test_id("nav-privacy").click()
        assert page.get_by_test_id("privacy-provider").get_attribute("data-provider") == "OpenAI"
        assert "your question, the passages found for it" in page.get_by_test_id("privacy-provider").inner_text()
        page.wait_for_selector("[data-testid=privacy-api-key][data-state=saved]")
        assert "IndexedDB quire.main" in page.get_by_test_id("privacy-api-key").inner_text()

        page.reload()
        wait_ready(page)
        csp = page.evaluate(CSP)
        assert "https://api.openai.com" in csp and "googleapis" not in csp, csp
        assert KEY not in json.dumps(page.evaluate("() => quire.networkLog()"))
    finally:
        ctx.close()


def test_gemini_preset_names_google_before_anything_is_sent(offline_browser, built_dist, serve):
    log = PageLog()
    ctx, page = open_settings(offline_browser, serve(built_dist).url, log)
    try:
        page.get_by_test_id("llm-kind").select_option("openai:gemini")
        assert page.get_by_test_id("llm-url").input_value() == "https://generativelanguage.googleapis.com/v1beta/openai"
        assert "(Google Gemini)" in page.get_by_test_id("llm-remote-where").inner_text()
        assert not [r for r in page.evaluate("() => quire.networkLog()") if "googleapis" in r["url"]]
        assert not log.errors, log.errors
    finally:
        ctx.close()


ERASE = """async (keep) => {
    document.querySelector('[data-testid=nav-library]').click();
    document.querySelector('[data-testid=erase-all]').click();
    const box = document.querySelector('[data-testid=erase-keys]');
    const asked = !!box && box.checked;
    if (keep) box.click();
    const input = document.querySelector('[data-testid=erase-confirm-input]');
    input.value = 'ERASE';
    input.dispatchEvent(new Event('input'));
    document.querySelector('[data-testid=erase-confirm]').click();
    await new Promise(r => document.addEventListener('quire:erased', r, {once: true}));
    const s = await quire.llmStatus();
    return {asked, stored: await QuireStore.get('llm.api_key'), has_key: s.has_key};
}"""


@pytest.mark.parametrize("keep", [False, True])
def test_erase_all_asks_whether_to_remove_the_keys(offline_browser, built_dist, serve, keep):
    log = PageLog()
    ctx, page = open_settings(offline_browser, serve(built_dist).url, log)
    try:
        page.evaluate("async (key) => quire.saveSettings({url: 'http://127.0.0.1:9', kind: 'openai', api_key: key})", KEY)
        r = page.evaluate(ERASE, keep)
        assert r["asked"] is True
        if keep:
            assert json.loads(r["stored"])["key"] == KEY and r["has_key"] is True
        else:
            assert r["stored"] is None and r["has_key"] is False
    finally:
        ctx.close()
