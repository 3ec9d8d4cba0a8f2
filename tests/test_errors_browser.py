"""A bug in the engine, as the page meets it in real Chromium: the rejected Error says kind "bug"
and carries the Python traceback, the console gets that traceback once (console.error), and the
error toast's "Copy details" puts message and traceback on the clipboard, or, where there is no
clipboard (file://), shows them selected in a read-only box.

The bug is made in the worker's Python: ``quire.app.stitch`` (which the passage view uses) is
replaced by one that hits ``json.loads`` on bad text, a ValueError that is not an expected error."""

import pytest

from conftest import wait_ready, with_test_hooks

pytestmark = pytest.mark.browser

BREAK_STITCH = """
import json
import quire.app
def _broken_stitch(chunks, target):
    return json.loads("{" + target["text"][:0])  # JSONDecodeError, a ValueError: a bug, not a user error
quire.app.stitch = _broken_stitch
"""

NOTES = "# Photosynthesis\nChlorophyll in the leaves turns light, water and carbon dioxide into sugar."


def bug_lines(page_log) -> list[str]:
    return [line for line in page_log.lines if line.startswith("console.error: Quire engine bug")]


def test_a_bug_reaches_the_page_with_its_traceback_and_can_be_copied(browser, built_dist, serve, page_log):
    url = serve(built_dist).url
    context = browser.new_context(locale="en-US")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
    page = context.new_page()
    page_log.attach(page)
    page.goto(with_test_hooks(url))  # quire.run breaks the engine on purpose
    wait_ready(page)
    page.evaluate("""async (text) => {
      await window.quire.stage({name: 'leaves.md', text: text});
      await window.quire.train();
    }""", NOTES)
    chunk = page.evaluate("async () => (await window.quire.search('chlorophyll leaves'))[0].chunk_id")

    # An expected error first: its class as kind, no detail, nothing logged as a bug.
    gone = page.evaluate("""async () => {
      try { await window.quire._call('passage', ['no-such-source:0']); return null; }
      catch (err) { return {kind: err.kind, detail: err.detail || null, message: err.message}; }
    }""")
    assert gone == {"kind": "LibraryError", "detail": None,
                    "message": "that passage is no longer in the library (its source was removed or retrained)"}
    assert bug_lines(page_log) == []

    page.evaluate("(src) => window.quire.run(src)", BREAK_STITCH)
    err = page.evaluate("""async (id) => {
      try { await window.quire._call('passage', [id]); return null; }
      catch (err) { return {kind: err.kind, detail: err.detail, message: err.message}; }
    }""", chunk)
    assert err["kind"] == "bug" and err["message"].startswith("JSONDecodeError: Expecting property name"), err
    assert err["detail"].startswith("Traceback (most recent call last):")
    assert "_broken_stitch" in err["detail"] and "json.decoder.JSONDecodeError" in err["detail"]
    logged = bug_lines(page_log)
    assert len(logged) == 1 and "Traceback (most recent call last):" in logged[0] and "_broken_stitch" in logged[0]

    # Through the page: open the passage from a search hit; the error toast offers its details.
    page.goto(with_test_hooks(url + "#search"))
    wait_ready(page)
    page.evaluate("(src) => window.quire.run(src)", BREAK_STITCH)
    page.get_by_test_id("search-input").fill("chlorophyll leaves")
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("open-passage").first.click()
    toast = page.locator("[data-testid=toast].error", has=page.get_by_test_id("copy-details"))
    toast.wait_for()
    assert "JSONDecodeError" in toast.inner_text()
    button = toast.get_by_test_id("copy-details")
    assert button.inner_text() == "Copy details"
    button.click()
    page.wait_for_function("() => document.querySelector('[data-testid=copy-details]').textContent === 'Details copied'")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied.startswith("JSONDecodeError: Expecting property name")
    assert "Traceback (most recent call last):" in copied and "_broken_stitch" in copied
    assert len(bug_lines(page_log)) == 2, "each bug is logged once"

    # Without a clipboard (as on file://): the report is shown selected, ready for Ctrl+C.
    page.evaluate("() => Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true})")
    button.click()
    box = toast.get_by_test_id("toast-detail")
    box.wait_for()
    state = box.evaluate("""(el) => ({value: el.value, readOnly: el.readOnly, focused: document.activeElement === el,
                                      selected: el.selectionEnd - el.selectionStart})""")
    assert state["readOnly"] and state["focused"] and state["selected"] == len(state["value"]) > 0
    assert state["value"] == copied
    assert [e for e in page_log.errors if "Quire engine bug" not in e] == []
    context.close()
