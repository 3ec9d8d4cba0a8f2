"""The page in real Chromium, as a student meets it: in German (chosen, remembered, or from the
browser's own language) with no English left in any view, player or dialog; no sideways
scrolling on a phone; a Library table whose long file names get the room; SVG icons, no emoji."""

import json
import re

import pytest

from ui_pages import LONG_NAMES, add_long_names, add_notes, ask, make_sets, open_page, search, show, states

pytestmark = pytest.mark.browser

# Words of the English interface that have no place on a German page (whole words, case-sensitive).
# The German notes, German file names and code identifiers never contain them.
ENGLISH = re.compile(r"\b(Library|Search|Ask|Study|Progress|Privacy|About|passages?|sources?|Remove|Delete|Cancel|"
                     r"Close|Loading|Choose|Drop|Train|Welcome|Sample|questions?|cards?|Export|Import|Refresh|Today|"
                     r"Achievements|earned|Storage|Generate|Answer|answer|Next|Score|Correct|Keyword|relevance|matches|"
                     r"the|and|with|your|from|of|to|is|are|Add|Show|Dismiss|Language|Category)\b")

# The language menu names each language in itself; <code> holds identifiers (store names, addresses).
VISIBLE_TEXT = """() => {
  const skip = '[data-testid=lang-switch], code';
  const shown = (el) => el && !el.closest(skip) && el.checkVisibility();
  const parts = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) if (shown(n.parentElement)) parts.push(n.textContent);
  for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]'))
    if (shown(el)) for (const a of ['aria-label', 'title', 'placeholder']) if (el.hasAttribute(a)) parts.push(el.getAttribute(a));
  for (const o of document.querySelectorAll('select option, optgroup')) if (shown(o.closest('select'))) parts.push(o.label || o.textContent);
  return parts.join('\\n');
}"""


def leftovers(page) -> list[str]:
    text = page.evaluate(VISIBLE_TEXT)
    return sorted({line.strip() for line in text.splitlines() if ENGLISH.search(line)})


def test_language_switch_is_remembered_and_defaults_to_the_browser_language(browser, built_dist, serve, page_log):
    url = serve(built_dist).url
    english = browser.new_context(locale="en-US")
    page = open_page(english, url, page_log)
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.get_by_test_id("nav-library").inner_text() == "Library"
    page.get_by_test_id("lang-switch").select_option("de")
    page.wait_for_function("() => document.documentElement.lang === 'de' && window.quire && window.quire.ready")
    page.evaluate("async () => { await quire.ready }")
    assert page.get_by_test_id("nav-library").inner_text() == "Bibliothek"
    page.reload()
    page.evaluate("async () => { await quire.ready }")
    assert page.get_by_test_id("nav-study").inner_text() == "Lernen", "the choice is remembered"
    english.close()

    german = browser.new_context(locale="de-DE")
    page = open_page(german, url, page_log)
    assert page.evaluate("document.documentElement.lang") == "de", "default from navigator.language"
    assert page.get_by_test_id("sample-load").inner_text() == "Mit einer Beispielbibliothek ausprobieren"
    # ?lang= wins for one visit (kiosk demos, screenshots).
    page.goto(url + "?lang=en")
    page.evaluate("async () => { await quire.ready }")
    assert page.get_by_test_id("sample-load").inner_text() == "Try it with a sample library"
    german.close()
    assert not page_log.errors


def test_german_page_has_no_english_left_in_any_view(browser, built_dist, serve, page_log):
    context = browser.new_context(locale="de-DE")
    page = open_page(context, serve(built_dist).url, page_log)
    page.get_by_test_id("welcome").wait_for()
    found = {"first run": leftovers(page)}
    add_notes(page)
    ask(page, "Wo findet der Calvin-Zyklus statt?")
    sets = make_sets(page)
    for state in states(page, sets):
        found[state] = leftovers(page)
    # Counts, dates and sizes follow German conventions.
    show(page, "library")
    row = page.get_by_test_id("source-row").first
    assert re.fullmatch(r"\d+(,\d)? (B|KB)", row.get_by_test_id("source-size").inner_text())
    search(page, "Rubisco")
    assert "Textstelle" in page.get_by_test_id("search-note").inner_text()
    context.close()
    english = {k: v for k, v in found.items() if v}
    assert not english, "English left on the German page:\n" + json.dumps(english, indent=1, ensure_ascii=False)
    assert not page_log.errors


@pytest.mark.parametrize("width,height,lang", [(360, 740, "de"), (390, 844, "en")])
def test_no_view_scrolls_sideways_on_a_phone(width, height, lang, browser, built_dist, serve, page_log):
    context = browser.new_context(viewport={"width": width, "height": height}, locale=lang)
    page = open_page(context, serve(built_dist).url + f"?lang={lang}", page_log)
    page.get_by_test_id("welcome").wait_for()
    wide = {}

    def measure(state):
        sizes = page.evaluate("""() => { const m = document.querySelector('main');
            return [document.documentElement.scrollWidth, innerWidth, m.scrollWidth, m.clientWidth,
                    ...[...document.querySelectorAll('dialog[open]')].map(d => d.scrollWidth - d.clientWidth)]; }""")
        page_w, inner, main_w, main_client = sizes[:4]
        if page_w > inner or main_w > main_client or any(x > 0 for x in sizes[4:]):
            wide[state] = sizes

    measure("first run")
    add_notes(page)
    add_long_names(page)
    ask(page, "Was macht Rubisco?" if lang == "de" else "What does Rubisco do?")
    for state in states(page, make_sets(page)):
        measure(state)
    context.close()
    assert wide == {}
    assert not page_log.errors


def test_library_table_gives_long_names_the_room(browser, built_dist, serve, page_log):
    """25 real-looking file names: before, names wrapped every 4-6 characters and the page grew to 4,000 px."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = open_page(context, serve(built_dist).url, page_log)
    add_long_names(page)
    rows = page.evaluate("""() => [...document.querySelectorAll('[data-testid=source-row]')].map(r => {
        const name = r.querySelector('[data-testid=source-name]'), added = r.querySelector('[data-testid=source-added]');
        const line = parseFloat(getComputedStyle(name).lineHeight);
        return {width: name.getBoundingClientRect().width, lines: Math.round(name.getBoundingClientRect().height / line),
                title: name.title, tabindex: name.tabIndex, added: added.innerText, addedTitle: added.title,
                height: r.getBoundingClientRect().height}; })""")
    assert len(rows) == len(LONG_NAMES)
    assert min(r["width"] for r in rows) >= 250, "the name column gets the room"
    assert max(r["lines"] for r in rows) <= 2, "a long name takes at most two lines"
    assert sum(r["height"] for r in rows) < 25 * 80
    assert sorted(r["title"] for r in rows) == sorted(LONG_NAMES), "the full name shows on hover"
    assert all(r["tabindex"] == 0 for r in rows), "and on keyboard focus"
    assert all(len(r["added"]) <= 8 and len(r["addedTitle"]) > len(r["added"]) for r in rows), "dates are compact"
    # Focus shows the whole name in place.
    name = page.get_by_test_id("source-name").first
    name.focus()
    assert name.evaluate("n => n.scrollHeight <= n.clientHeight + 1")
    context.close()
    assert not page_log.errors


def test_badges_and_streaks_draw_svg_icons(browser, built_dist, serve, page_log):
    """Emoji render as empty boxes on a Linux without an emoji font."""
    context = browser.new_context()
    page = open_page(context, serve(built_dist).url, page_log)
    show(page, "progress")
    page.get_by_test_id("badge").first.wait_for()
    icons = page.evaluate("""() => [...document.querySelectorAll('[data-testid=badge] .badge-icon')].map(i =>
        [i.textContent.trim(), !!i.querySelector('svg path[d]'), i.querySelector('svg').getBoundingClientRect().width])""")
    assert len(icons) == 25
    assert all(text == "" and has_path and width > 10 for text, has_path, width in icons)
    show(page, "study")
    assert page.locator(".study-tool .tool-icon svg").count() == 4
    context.close()
    assert not page_log.errors
