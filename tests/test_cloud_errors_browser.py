"""Each cloud provider's errors as Settings shows them, in real Chromium, in English and in German
(issue 29): a 429 with the wait the provider gives (OpenAI's and Anthropic's ``retry-after`` header,
Gemini's ``RetryInfo.retryDelay``), a chat model the key may not use (what the provider offers
instead in Settings; the provider's own 404 words under a question asked in the chat), and CORS refused (for Anthropic: the header it needs from a page).  One local stand-in
answers as all three (tests/cloud_server.py, replaying tests/fixtures/*); nothing leaves the machine.
One page per language; the stand-in's ``mode`` changes between checks."""

import json

import pytest

from cloud_server import GEMINI_ROOT, CloudStandIn
from conftest import wait_ready

pytestmark = pytest.mark.browser

KEY = "sk-cloud-errors-0123456789"
SAVE = """async ([url, kind, model, key]) => {
    const s = await quire.saveSettings({url, kind, chat_model: model, api_key: key});
    return {status: s.status, text: JSON.stringify(s)};
}"""
# Per provider: (kind, path under the stand-in, a model it lists, one it does not, what it lists,
# the words of its 429, the wait it gives, the words of its 404 for the model it does not list).
PROVIDERS = {
    "openai": ("openai", "/v1", "model-id-0", "gpt-nope", "model-id-0, model-id-1, model-id-2",
               "Rate limit reached for gpt-4o-mini", "20s",
               "The model `gpt-nope` does not exist or you do not have access to it."),
    "gemini": ("openai", GEMINI_ROOT, "models/gemini-2.0-flash", "models/gemini-nope",
               "models/gemini-2.0-flash, models/text-embedding-004", "You exceeded your current quota", "35s",
               "models/gemini-nope is not found for API version v1beta"),
    "anthropic": ("anthropic", "", "claude-sonnet-4-5", "claude-nope", "claude-sonnet-4-5",
                  "Number of request tokens has exceeded your per-minute rate limit", "30s", "model: claude-nope"),
}
WORDS = {  # what Settings says, per language (the provider's own words are never translated)
    "en": {"limited": "refused the request for now (429: {words}",
           "wait": "Wait {wait} (the server's own figure)",
           "missing": 'does not offer the model "{model}" (it offers: {offered}).',
           "cors": "answers, but not to this page",
           "cors_fix": "Access-Control-Allow-Origin",
           "said": "The server said: ",
           "anthropic_fix": "only when the request carries the header `anthropic-dangerous-direct-browser-access: true`"},
    "de": {"limited": "hat die Anfrage vorerst abgelehnt (429: {words}",
           "wait": "{wait} warten (die Angabe des Servers)",
           "missing": "bietet das Modell „{model}“ nicht an (er bietet: {offered}).",
           "cors": "antwortet, aber nicht dieser Seite",
           "cors_fix": "Access-Control-Allow-Origin",
           "said": "Der Server meldete: ",
           "anthropic_fix": "nur lesen, wenn die Anfrage den Header `anthropic-dangerous-direct-browser-access: true` trägt"},
}


def asked_in_chat(page, answered: int) -> str:
    """Ask in the chat view; the connection line under the answer (then back to Settings)."""
    page.get_by_test_id("nav-ask").click()
    page.get_by_test_id("chat-input").fill("What is the weather in San Francisco?")
    page.get_by_test_id("chat-ask").click()
    # The passages shown instead of an answer come after the connection event: once they are there, it was shown.
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=extractive]').length === {answered} "
                           "&& document.querySelector('[data-testid=chat-stop]').hidden")
    line = page.get_by_test_id("chat-connection").inner_text()
    page.get_by_test_id("nav-settings").click()
    return line


def shown(page, state: str) -> tuple[str, str]:
    """Settings' status line and fix once it shows ``state``."""
    page.wait_for_selector(f"[data-testid=llm-state][data-state={state}]")
    line = page.locator("p", has=page.get_by_test_id("llm-state")).inner_text()
    return line, page.get_by_test_id("llm-fix").inner_text()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_each_providers_429_missing_model_and_cors_in_its_words(context, built_dist, serve, page_log, lang):
    words = WORDS[lang]
    with CloudStandIn(KEY) as cloud:
        page = page_log.attach(context.new_page())
        page.set_default_timeout(90_000)
        page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(cloud.url)})")  # read by csp.js
        page.goto(serve(built_dist).url + ("?lang=de" if lang == "de" else "") + "#settings")
        wait_ready(page)
        page.evaluate("async (text) => { await quire.stage({name: 'Weather.md', text}); await quire.train(); }",
                      "# San Francisco\nThe weather in San Francisco is often foggy in summer.")
        page.get_by_test_id("llm-state").wait_for()
        for asked, (name, (kind, root, model, missing, offered, said, wait, not_found)) in enumerate(PROVIDERS.items(), 1):
            url = cloud.url + root
            cloud.mode = "ok"
            ok = page.evaluate(SAVE, [url, kind, model, KEY])
            assert ok["status"] == "connected" and KEY not in ok["text"], (name, ok)

            cloud.mode = "limited"
            page.evaluate(SAVE, [url, kind, model, KEY])
            line, fix = shown(page, "rate_limited")
            assert words["limited"].format(words=said) in line, (name, line)
            assert words["wait"].format(wait=wait) in fix, (name, fix)

            cloud.mode = "ok"
            page.evaluate(SAVE, [url, kind, missing, KEY])
            line, _ = shown(page, "model_missing")
            assert words["missing"].format(model=missing, offered=offered) in line, (name, line)
            chat_line = asked_in_chat(page, asked)
            assert words["missing"].format(model=missing, offered=offered) in chat_line, (name, chat_line)
            assert words["said"] + not_found in chat_line, (name, chat_line)

            cloud.mode = "no_cors"
            page.evaluate(SAVE, [url, kind, model, KEY])
            line, fix = shown(page, "cors_refused")
            assert words["cors"] in line, (name, line)
            assert words["anthropic_fix" if kind == "anthropic" else "cors_fix"] in fix, (name, fix)
            if kind != "anthropic":
                assert "anthropic-dangerous-direct-browser-access" not in fix, (name, fix)
        asked = [r for r in cloud.requests if r["method"] != "OPTIONS" and r["headers"].get("origin")]
        assert {r["headers"].get("x-api-key") or r["headers"]["authorization"] for r in asked} == {KEY, f"Bearer {KEY}"}
        assert all(r["headers"]["anthropic-dangerous-direct-browser-access"] == "true"
                   for r in asked if "anthropic-version" in r["headers"])
