"""axe-core finds no accessibility violation in any view, study player or dialog, in English and
German, at desktop and phone size, in the light and the dark theme, with every rule it has switched on: best practices, WCAG 2.2
and AAA, and the experimental and deprecated rules that are off by default (one of those,
landmark-complementary-is-top-level, found the chat list's <aside> inside <main>).
tests/test_engines_axe.py does the same in Firefox and WebKit.

axe-core is a test dependency, never part of dist/: its npm tarball is pinned in pyproject.toml
([tool.quire.test_npm.axe], version and integrity) and fetched and cached the way build.py fetches
its npm files.  It runs in a context with ``bypass_csp=True``; the page's own CSP stays as it is."""

import io
import json
import tarfile

import pytest

from conftest import wait_ready
from ui_pages import add_notes, ask, make_sets, open_page, show, states

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def axe_source() -> str:
    from quire_build.common import DEFAULT_CACHE, load_pins
    from quire_build.downloads import npm_tarball

    pin = load_pins()["test_npm"]["axe"]
    data = npm_tarball(pin["package"], pin["version"], pin["integrity"], DEFAULT_CACHE)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.extractfile("package/axe.min.js").read().decode()


# Every rule axe has, each switched on (experimental, deprecated, AAA and target-size are off by default).
AXE_RUN = """async () => {
  const rules = Object.fromEntries(axe.getRules().map(r => [r.ruleId, {enabled: true}]));
  const found = await axe.run(document, {rules, resultTypes: ['violations']});
  return found.violations.map(v => v.id + ' (' + v.impact + '): ' + v.nodes.map(n => n.target.join(' ')).slice(0, 4).join(' | '));
}"""


def violations(page) -> list[str]:
    return page.evaluate(AXE_RUN)


# Each language at desktop and phone size in the light theme, and in the dark one at one size.
# A page per language: the library, the chat and the study sets are made once, and each size
# and theme after the first reloads the page, where Ask reopens the chat (docs/testing.md, "How long the
# suite takes").
LOOKS = {"en": [(1280, 800, "light"), (360, 740, "light"), (1280, 800, "dark")],
         "de": [(1280, 800, "light"), (360, 740, "light"), (360, 740, "dark")]}
QUESTION = "Wo findet der Calvin-Zyklus statt?"


@pytest.mark.parametrize("lang", LOOKS)
def test_no_axe_violations_anywhere(lang, axe_source, browser, built_dist, serve, page_log):
    (width, height, scheme), *others = LOOKS[lang]
    context = browser.new_context(bypass_csp=True, viewport={"width": width, "height": height}, locale=lang,
                                  color_scheme=scheme)
    context.add_init_script(script=axe_source)
    page = open_page(context, serve(built_dist).url + f"?lang={lang}", page_log)
    page.get_by_test_id("welcome").wait_for()
    found = {}
    for look in LOOKS[lang]:  # the first run's welcome card, in each look
        width, height, scheme = look
        page.set_viewport_size({"width": width, "height": height})
        page.emulate_media(color_scheme=scheme)
        assert page.evaluate(f"matchMedia('(prefers-color-scheme: {scheme})').matches")
        found[f"{look} first run"] = violations(page)
    add_notes(page)
    sets = make_sets(page)
    for i, look in enumerate(LOOKS[lang]):
        width, height, scheme = look
        page.set_viewport_size({"width": width, "height": height})
        page.emulate_media(color_scheme=scheme)
        if not i:
            ask(page, QUESTION)
        else:  # the last look's walk ended by removing the dialogs it opened: a new page, and Ask
            page.reload()  # opens the latest chat again, its cited answer included
            wait_ready(page)
            show(page, "ask")
            page.get_by_test_id("msg-assistant").first.wait_for()
        for state in states(page, sets):
            found[f"{look} {state}"] = violations(page)
    context.close()
    bad = {k: v for k, v in found.items() if v}
    assert not bad, json.dumps(bad, indent=1, ensure_ascii=False)
    assert not page_log.errors
