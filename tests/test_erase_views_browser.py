"""Erase all knowledge and a vault 'replace' import empty every view at once, without a reload.

Each round fills Ask, Search and Study (a mind map open in the player) with content from one
trained note, then wipes, then checks every view in the same page."""

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready

pytestmark = pytest.mark.browser

NOTE = "# Cells\n## Energy\nMitochondria make ATP for the cell.\n## Division\nMitosis makes two identical daughter cells.\n"


def launch(playwright_instance, profile):
    ctx = playwright_instance.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport={"width": 1180, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    return ctx, page, log


def fill_views(page):
    """Train a note, ask, search, make and open a no-model mind map; check each view shows it."""
    page.evaluate("(t) => quire.stage({name: 'cells.md', text: t}).then(() => quire.train())", NOTE)
    page.get_by_test_id("nav-ask").click()
    page.get_by_test_id("chat-input").fill("What makes ATP?")
    page.get_by_test_id("chat-input").press("Enter")
    page.get_by_test_id("extractive-result").first.wait_for()
    page.get_by_test_id("chat-session").first.wait_for()

    page.get_by_test_id("nav-search").click()
    page.get_by_test_id("search-input").fill("mitochondria")
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("search-hit").first.wait_for()

    page.get_by_test_id("nav-study").click()
    page.get_by_test_id("tool-mindmap").click()
    page.get_by_test_id("study-generate").click()
    page.get_by_test_id("mm-node").first.wait_for()
    page.wait_for_function("() => !document.querySelector('[data-testid=study-generate]').disabled")


def assert_views_empty(page):
    """Every view, visited in the same page, shows nothing of what was there."""
    page.get_by_test_id("nav-ask").click()
    page.get_by_test_id("chat-empty").wait_for()
    assert page.get_by_test_id("msg-user").count() == 0
    assert page.get_by_test_id("extractive-result").count() == 0
    assert page.get_by_test_id("chat-session").count() == 0
    assert page.get_by_test_id("chat-title").inner_text() == "New chat"

    page.get_by_test_id("nav-search").click()
    assert page.get_by_test_id("search-input").input_value() == ""
    assert page.get_by_test_id("search-hit").count() == 0
    assert page.get_by_test_id("search-note").inner_text() == ""

    page.get_by_test_id("nav-study").click()
    page.get_by_test_id("study-empty").wait_for()
    assert page.get_by_test_id("study-player").is_hidden()
    assert page.get_by_test_id("mm-node").count() == 0
    assert page.get_by_test_id("study-set").count() == 0

    page.get_by_test_id("nav-progress").click()
    body = page.get_by_test_id("progress-body")
    body.wait_for()
    assert "cells.md" not in body.inner_text()

    page.get_by_test_id("nav-library").click()
    page.get_by_test_id("library-empty").wait_for()
    assert page.get_by_test_id("source-row").count() == 0
    assert page.get_by_test_id("train-progress").is_hidden()


def test_erase_and_replace_import_empty_every_view(playwright_instance, built_dist, serve, tmp_path):
    server = serve(built_dist)
    ctx, page, log = launch(playwright_instance, tmp_path / "profile")
    try:
        page.goto(server.url)
        wait_ready(page)
        page.evaluate("async () => { window.emptyVault = await quire.exportVault(); }")

        # --- Erase all knowledge through its dialog
        fill_views(page)
        page.get_by_test_id("nav-library").click()
        page.get_by_test_id("erase-all").click()
        page.get_by_test_id("erase-confirm-input").fill("ERASE")
        page.get_by_test_id("erase-confirm").click()
        page.get_by_test_id("erase-dialog").wait_for(state="detached")
        page.get_by_test_id("nav-ask").click()  # leave the view the dialog was in before checking
        assert_views_empty(page)

        # --- a vault 'replace' import of the empty vault does the same
        fill_views(page)
        summary = page.evaluate("() => quire.importVault(window.emptyVault, {mode: 'replace'}).then(r => r.mode)")
        assert summary == "replace"
        assert_views_empty(page)
        assert not log.errors, log.errors
    finally:
        ctx.close()
