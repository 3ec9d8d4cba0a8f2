"""Shared steps for the UI browser tests: open the page in a language, fill the library the way a
student would (German notes, or many real-looking file names), make one study set of each kind,
and walk every view, player and dialog.  Everything waits on the page's own signals."""

from conftest import wait_ready

VIEWS = ["library", "search", "ask", "study", "progress", "privacy", "settings", "about"]

# A German student's notes: enough full sentences for quizzes, cards, a workshop and a mind map
# made without a model, so every view shows German content only.
NOTES = """# Photosynthese

## Lichtreaktion

Die Lichtreaktion findet in den Thylakoidmembranen der Chloroplasten statt. Chlorophyll nimmt die
Energie des Sonnenlichts auf und gibt angeregte Elektronen an eine Transportkette weiter. Dabei wird
Wasser gespalten, und es entsteht Sauerstoff als Nebenprodukt. Die Energie wird in ATP und NADPH
gespeichert, die der Calvin-Zyklus anschließend verbraucht.

## Calvin-Zyklus

Der Calvin-Zyklus läuft im Stroma der Chloroplasten ab. Das Enzym Rubisco bindet Kohlenstoffdioxid
an Ribulose-1,5-bisphosphat. Aus den entstehenden Molekülen bildet die Pflanze mit ATP und NADPH
Zucker. Ein Teil der Moleküle wird wieder zu Ribulose-1,5-bisphosphat regeneriert, damit der Zyklus
weiterlaufen kann.

## Einflussfaktoren

Die Geschwindigkeit der Photosynthese hängt von der Lichtstärke, der Temperatur und der
Konzentration von Kohlenstoffdioxid ab. Bei zu hoher Temperatur verlieren Enzyme ihre Form und die
Leistung sinkt. Pflanzen in trockenen Gebieten schließen tagsüber ihre Spaltöffnungen, um Wasser zu
sparen. Manche Pflanzen nutzen deshalb besondere Wege wie den C4-Stoffwechsel.
"""

# File names as students keep them: long, with underscores, versions and dates, no spaces.
LONG_NAMES = [f"{prefix}_{i:02d}_Vorlesungsskript_Molekularbiologie_Proteinfaltung_und_Chaperone_WS2025_final_v{i % 4 + 1}.txt"
              for i, prefix in enumerate(["Kapitel", "Uebung", "Zusammenfassung", "Klausurvorbereitung", "Mitschrift"] * 5)]


def open_page(context, url: str, page_log=None):
    page = context.new_page()
    if page_log is not None:
        page_log.attach(page)
    page.goto(url)
    wait_ready(page)
    return page


def train(page) -> None:
    page.evaluate("() => quire.train()")
    page.wait_for_function("() => !document.querySelector('[data-testid=source-row][data-status=staged]')")


def add_notes(page, name: str = "Photosynthese.md") -> None:
    """Stage and train the German notes."""
    page.evaluate("([name, text]) => quire.stage([{name, text}])", [name, NOTES])
    train(page)


def add_long_names(page) -> None:
    """Stage 25 short texts under long file names (staged rows are enough for the table's layout)."""
    page.evaluate("""(names) => quire.stage(names.map((name, i) =>
        ({name, text: 'Notizen ' + i + ': Proteine falten sich mit Hilfe von Chaperonen.'})))""", LONG_NAMES)
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=source-row]').length >= {len(LONG_NAMES)}")


def make_sets(page) -> dict[str, str]:
    """One study set of each kind, made without a model: {kind: set id}."""
    return page.evaluate("""async () => {
        const out = {};
        for (const kind of ['quiz', 'flashcards', 'workshop', 'mindmap'])
            out[kind] = (await quire.generate(kind, {count: 4, offline: true})).id;
        return out; }""")


def show(page, view: str) -> None:
    page.evaluate("(v) => { location.hash = '#' + v; }", view)
    page.wait_for_function("(v) => !document.querySelector(`[data-view=${v}]`).hidden", arg=view)


def open_set(page, set_id: str) -> None:
    show(page, "study")
    page.evaluate("(id) => document.dispatchEvent(new CustomEvent('quire:open-set', {detail: {id}}))", set_id)
    page.wait_for_function("(id) => { const p = document.querySelector('[data-testid=study-player]');"
                           " return p && !p.hidden && p.querySelector('[data-testid=player-title]'); }", arg=set_id)


def search(page, words: str) -> None:
    show(page, "search")
    page.get_by_test_id("search-input").fill(words)
    page.get_by_test_id("search-button").click()
    page.wait_for_function("() => !document.querySelector('[data-testid=search-results]').hasAttribute('aria-busy')")
    page.get_by_test_id("search-hit").first.wait_for()


def ask(page, question: str) -> None:
    show(page, "ask")
    before = page.get_by_test_id("msg-assistant").count()
    page.get_by_test_id("chat-input").fill(question)
    page.get_by_test_id("chat-ask").click()
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=msg-assistant]').length === {before + 1} "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")


def states(page, sets: dict[str, str]):
    """Every view, study player and dialog in turn; yields a name for each state reached."""
    for view in VIEWS:
        show(page, view)
        if view == "progress":
            page.get_by_test_id("progress-stats").wait_for()
        if view == "privacy":
            page.get_by_test_id("inventory-row").first.wait_for()
        yield view
    for kind, set_id in sets.items():
        open_set(page, set_id)
        if kind == "mindmap":
            page.locator("svg.mindmap").wait_for()
        yield f"player:{kind}"
    search(page, "Chlorophyll Sonnenlicht")
    page.get_by_test_id("open-passage").first.click()
    page.get_by_test_id("passage-dialog").wait_for()
    yield "dialog:passage"
    page.get_by_test_id("passage-close").click()
    show(page, "library")
    page.get_by_test_id("erase-all").click()
    page.get_by_test_id("erase-dialog").wait_for()
    yield "dialog:erase"
    page.keyboard.press("Escape")
    page.evaluate("() => document.querySelectorAll('dialog').forEach(d => d.remove())")
