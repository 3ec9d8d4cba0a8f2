"""Anthropic's own API from the page, in real Chromium, against the local stand-in that replays its
recorded exchanges (tests/anthropic_server.py): the worker's fetch carries ``x-api-key``,
``anthropic-version`` and ``anthropic-dangerous-direct-browser-access: true`` (without which
Anthropic refuses a browser), the key flow (wrong, right, removed) and a streamed cited answer."""

import json

import pytest

from anthropic_server import AnthropicStandIn
from conftest import wait_ready

pytestmark = pytest.mark.browser

KEY = "sk-ant-browser-test-0123456789"
BIO = "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells."
SAVE = """async ([url, key]) => {
    const s = await quire.saveSettings({url, kind: 'anthropic', chat_model: 'claude-sonnet-4-5', num_predict: 64, api_key: key});
    return {status: s.status, has_key: s.has_key, message: s.message, text: JSON.stringify(s)};
}"""


def test_anthropic_key_flow_and_a_streamed_answer_in_chromium(context, built_dist, serve, page_log):
    with AnthropicStandIn(KEY) as server:
        page = page_log.attach(context.new_page())
        page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(server.url)})")  # read by csp.js
        page.goto(serve(built_dist).url)
        wait_ready(page)
        page.evaluate("async (text) => { await quire.stage({name: 'Biology.md', text}); await quire.train(); }", BIO)

        wrong = page.evaluate(SAVE, [server.url, "sk-ant-wrong"])
        assert wrong["status"] == "key_refused" and "invalid x-api-key" in wrong["message"], wrong
        right = page.evaluate(SAVE, [server.url, KEY])
        assert right["status"] == "connected" and right["has_key"] and KEY not in right["text"], right

        r = page.evaluate("async () => { const r = await quire.ask('What do mitochondria make?'); return {mode: r.mode, answer: r.answer, citations: r.citations.length}; }")
        assert r == {"mode": "llm", "answer": "Hello!", "citations": r["citations"]} and r["citations"] > 0
        asked = [q for q in server.requests if q["path"] == "/v1/messages"][-1]
        assert asked["headers"]["anthropic-dangerous-direct-browser-access"] == "true"
        assert asked["headers"]["anthropic-version"] == "2023-06-01" and asked["headers"]["x-api-key"] == KEY
        assert asked["headers"]["origin"]  # it really came from the page

        page.get_by_test_id("nav-settings").click()
        page.get_by_test_id("llm-api-key-remove").click()
        page.wait_for_selector("[data-testid=llm-state][data-state=key_refused], [data-testid=llm-state][data-state=key_needed]")
        assert page.evaluate("async () => (await quire.llmStatus()).has_key") is False
        assert not page_log.errors, page_log.errors
