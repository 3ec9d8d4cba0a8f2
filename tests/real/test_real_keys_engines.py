"""The API key flow against a real ``llama-server --api-key`` in Firefox ESR and WebKitGTK (the
browsers Debian ships), over http: wrong key, right key and an answer, key removed."""

import pytest

from conftest import StaticServer
from engines import ENGINES, open_engine
from test_engines_browser import engine_ok

from .conftest import CHAT_ALIAS, KEY
from .test_real_browser import BIO, SHORT
from .test_real_keys import WRONG

pytestmark = pytest.mark.browser

SAVE = """async (url, key) => {
    const s = await quire.saveSettings({url, kind: 'openai', chat_model: '%s', num_predict: %d, api_key: key});
    return {status: s.status, has_key: s.has_key, text: JSON.stringify(s)};
}""" % (CHAT_ALIAS, SHORT)


@pytest.mark.parametrize("name", ENGINES)
def test_key_flow_in_firefox_and_webkit(name, llama_keyed, built_dist, tmp_path):
    engine_ok(name)
    site = StaticServer(built_dist).start()
    try:
        with open_engine(name, tmp_path) as b:
            b.goto(site.url)
            b.wait_ready()
            b.run("async (url) => localStorage.setItem('quire.llm.url', url)", llama_keyed.url)  # read by csp.js
            b.goto(site.url)
            b.wait_ready()
            b.run("async (text) => { await quire.stage({name: 'Biology.md', text}); await quire.train(); }", BIO)
            wrong = b.run(SAVE, llama_keyed.url, WRONG)
            assert wrong["status"] == "key_refused" and wrong["has_key"] is True, wrong
            right = b.run(SAVE, llama_keyed.url, KEY)
            assert right["status"] == "connected" and KEY not in right["text"], right
            r = b.run("async () => { const r = await quire.ask('What does mitosis make?'); return {mode: r.mode, answer: r.answer}; }")
            assert r["mode"] == "llm" and r["answer"].strip(), r
            gone = b.run("async () => { await quire.saveSettings({api_key: ''}); const s = await quire.llmStatus(); return [s.status, s.has_key]; }")
            assert gone == ["key_needed", False]
    finally:
        site.stop()
