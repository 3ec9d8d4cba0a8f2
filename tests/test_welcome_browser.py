"""The first run in real Chromium: a welcome card on an empty library, the sample library in one
click (over http and from file://), its suggestions working without a model, and one-click removal."""

import pytest

from conftest import hold, release, wait_ready

pytestmark = pytest.mark.browser

GUIDE = "Quire user guide (sample).md"
GERMAN = "Der Wasserkreislauf (Beispiel).md"


def open_page(context, built_dist, serve, page_log, mode):
    page = page_log.attach(context.new_page())
    page.goto(serve(built_dist).url if mode == "http" else (built_dist / "index.html").as_uri())
    wait_ready(page)
    return page


def answered(page, count):
    """The Ask view has finished its count-th answer (not merely shown its first passages)."""
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=msg-assistant]').length === {count} "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")


def load_sample(page):
    page.get_by_test_id("welcome").wait_for()
    assert page.get_by_test_id("source-row").count() == 0
    page.get_by_test_id("sample-load").click()
    page.get_by_test_id("sample-card").wait_for()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=sample-tag]').length === 2")
    rows = page.evaluate("""() => [...document.querySelectorAll('[data-testid=source-row]')]
        .map(r => [r.dataset.name, r.dataset.status])""")
    assert sorted(rows) == sorted([[GERMAN, "trained"], [GUIDE, "trained"]])
    assert page.get_by_test_id("welcome").count() == 0


@pytest.mark.parametrize("mode", ["http", "file"])
def test_sample_library_in_one_click_then_removed_in_one(mode, context, built_dist, serve, page_log):
    page = open_page(context, built_dist, serve, page_log, mode)
    load_sample(page)
    categories = page.evaluate("quire.categories()")
    assert categories == ["Sample library"]

    # A suggested question, asked with no model server: the answer cites the sample's right section.
    page.get_by_test_id("sample-question").first.click()
    answered(page, 1)
    first = page.get_by_test_id("extractive-result").first.inner_text()
    assert GUIDE in first and "Staging and training are two separate steps" in first

    # The German question finds the table's passage in the German document.
    page.goto(page.url.split("#")[0] + "#library")
    page.get_by_test_id("sample-question").nth(2).click()
    answered(page, 2)
    german = page.evaluate("() => [...document.querySelectorAll('[data-testid=msg-assistant]')].pop().innerText")
    assert GERMAN in german and "500.000 Kubikkilometer" in german

    # The suggested search shows the passage about spaced repetition first.
    page.goto(page.url.split("#")[0] + "#library")
    page.get_by_test_id("sample-search").click()
    page.get_by_test_id("search-hit").first.wait_for()
    assert page.get_by_test_id("search-input").input_value() == "spaced repetition"
    hit = page.get_by_test_id("search-hit").first.inner_text()
    assert GUIDE in hit and "FSRS" in hit

    # The quiz suggestion makes a quiz from the sample and opens it.
    page.goto(page.url.split("#")[0] + "#library")
    page.get_by_test_id("sample-quiz").click()
    page.get_by_test_id("player-title").wait_for()
    assert not page.get_by_test_id("view-study").is_hidden()

    # One click removes the sample: the library is empty and the welcome card is back.
    page.goto(page.url.split("#")[0] + "#library")
    page.get_by_test_id("sample-remove").click()
    page.get_by_test_id("welcome").wait_for()
    assert page.evaluate("quire.sources()") == [] and page.evaluate("quire.sampleIds()") == []
    assert page.evaluate("quire.search('spaced repetition')") == []
    assert not page_log.errors


def test_own_documents_never_show_the_welcome_or_a_sample_tag(context, built_dist, serve, page_log):
    page = open_page(context, built_dist, serve, page_log, "http")
    page.get_by_test_id("welcome").wait_for()
    page.evaluate("""async () => { await quire.stage({name: 'mine.md', text: '# Rocks\\nGranite is igneous.'});
                                   await quire.train(); }""")
    page.wait_for_function("() => document.querySelector('[data-testid=source-row][data-status=trained]')")
    assert page.get_by_test_id("welcome").count() == 0
    assert page.get_by_test_id("sample-card").count() == 0 and page.get_by_test_id("sample-tag").count() == 0
    # Removing "the sample" when there is none touches nothing of the user's.
    assert page.evaluate("quire.removeSample()") == {"removed": 0}
    assert [s["name"] for s in page.evaluate("quire.sources()")] == ["mine.md"]


@pytest.mark.parametrize("mode", ["http", "file"])
def test_german_page_suggests_german_questions_that_find_their_passages(mode, context, built_dist, serve, page_log):
    """A German student gets questions and a search in German (they find the German document's
    passages without a model, where a German question about the English guide would not), plus one
    English question for the English guide, marked as such and tagged lang="en" for screen readers."""
    page = page_log.attach(context.new_page())
    page.goto((serve(built_dist).url if mode == "http" else (built_dist / "index.html").as_uri()) + "?lang=de")
    wait_ready(page)
    load_sample(page)
    asks = page.evaluate("""() => [...document.querySelectorAll('[data-testid=sample-question]')]
        .map(b => [b.innerText, b.querySelector('[lang]').lang, b.parentElement.innerText])""")
    assert [a[1] for a in asks] == ["de", "de", "en"], asks
    assert all(a[0].startswith("Fragen: „") for a in asks), asks
    assert "(englisches Dokument)" in asks[2][2] and "Dokument)" not in asks[0][2] + asks[1][2], asks
    info = page.evaluate("quire.sampleInfo()")
    assert info["lang"] == "de" and info["search"] == "Niederschlag"
    assert page.evaluate("quire.categories()") == ["Beispielbibliothek"] == [info["category"]]
    assert "„Beispielbibliothek“" in page.get_by_test_id("sample-card").inner_text()

    page.get_by_test_id("sample-question").nth(1).click()  # Wie lange bleibt Grundwasser im Gestein?
    answered(page, 1)
    first = page.get_by_test_id("extractive-result").first.inner_text()
    assert GERMAN in first and "Jahrtausende im Gestein" in first, first

    page.goto(page.url.split("#")[0] + "#library")
    page.get_by_test_id("sample-question").nth(2).click()  # the English question finds the English guide
    answered(page, 2)
    english = page.get_by_test_id("msg-assistant").last.get_by_test_id("extractive-result").first.inner_text()
    assert GUIDE in english and "Staging and training are two separate steps" in english, english

    page.goto(page.url.split("#")[0] + "#library")
    page.get_by_test_id("sample-search").click()
    page.get_by_test_id("search-hit").first.wait_for()
    assert page.get_by_test_id("search-input").input_value() == "Niederschlag"
    hit = page.get_by_test_id("search-hit").first.inner_text()
    assert GERMAN in hit and "als Niederschlag zur Erde" in hit, hit
    assert not page_log.errors


def test_a_sample_quiz_finishing_after_the_user_left_does_not_pull_them_back(context, built_dist, serve, page_log):
    page = open_page(context, built_dist, serve, page_log, "http")
    load_sample(page)
    hold(page, "generate")
    page.get_by_test_id("sample-quiz").click()
    page.get_by_test_id("nav-ask").click()
    release(page, "generate", 0)
    page.wait_for_function("() => [...document.querySelectorAll('.toast')].some(t => t.textContent.includes('Your quiz is ready under Study.'))")
    assert page.evaluate("location.hash") == "#ask" and not page.get_by_test_id("view-ask").is_hidden()
    assert [s["kind"] for s in page.evaluate("quire.studySets()")] == ["quiz"]
    assert not page_log.errors
