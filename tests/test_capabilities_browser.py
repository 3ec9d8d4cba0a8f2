"""Feature detection: a browser without a feature Quire needs says which and what to do, and
About lists what this browser offers and what follows where something is missing."""

import pytest

from conftest import PageLog

pytestmark = pytest.mark.browser


def test_a_browser_without_decompression_stream_is_told_it_is_too_old(browser, built_dist, serve):
    ctx = browser.new_context()
    ctx.add_init_script("delete self.DecompressionStream;")
    page = PageLog().attach(ctx.new_page())
    page.goto(serve(built_dist).url)
    page.wait_for_function("() => window.quire && window.quire.status().stage === 'failed'")
    error = page.evaluate("window.quire.status().error")
    assert error["kind"] == "no-decompress" and error["title"] == "This browser is too old for Quire"
    assert "DecompressionStream" in error["message"] and "Safari 16.4" in error["message"]
    assert page.get_by_test_id("boot-error").is_visible()
    ctx.close()


@pytest.mark.parametrize("missing, label, says", [
    ("navigator.storage.estimate", "Storage figure", "does not report how much storage"),
    ("navigator.locks", "One tab writes at a time", "a lease in IndexedDB, as this browser has no Web Locks"),
    ("navigator.storage.getDirectory", "Full-disk check before large writes", "no origin private file system"),
])
def test_about_says_what_is_missing_and_what_follows(browser, built_dist, serve, missing, label, says):
    ctx = browser.new_context()
    owner, name = missing.rsplit(".", 1)
    ctx.add_init_script(f"Object.defineProperty(Object.getPrototypeOf({owner}), '{name}', {{value: undefined}});")
    page = PageLog().attach(ctx.new_page())
    page.goto(serve(built_dist).url + "#about")
    page.evaluate("async () => { await window.quire.ready; }")
    facts = page.evaluate("""() => { const out = {}; const dts = document.querySelectorAll('[data-testid=engine-facts] dt');
        dts.forEach(dt => { out[dt.textContent] = dt.nextElementSibling.textContent; }); return out; }""")
    assert says in facts[label], facts
    others = {k: v for k, v in facts.items() if k in ("Storage figure", "One tab writes at a time") and k != label}
    assert all(v in ("available", "yes (Web Locks)") for v in others.values()), others
    ctx.close()
