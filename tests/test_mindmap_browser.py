"""The mind map in real Chromium: the first view and Fit show the whole map inside its frame at a
readable size (deeper levels collapse when needed), nothing sits under the toolbar, no label is
clipped, and every node is reachable and operable by keyboard with visible focus."""

import pytest

from ui_pages import open_page, open_set, train

pytestmark = pytest.mark.browser

# Twelve sections of five subsections: opened one level deep that is 60 rows, far too tall for the
# frame at a readable size.  Wide capitals in long headings catch labels wider than a guess per character.
NOTES = "\n\n".join(
    f"## Kapitel {i}: WASSERKREISLAUF UND WOLKENBILDUNG MMWW\n\n" + "\n\n".join(
        f"### Teil {i}.{j} Verdunstung über Meeren\n\nWasser verdunstet über dem Meer {i} und steigt als Dampf {j} auf. "
        f"Der Dampf kühlt sich ab und bildet Wolken über dem Gebirge {i}{j}."
        for j in range(5))
    for i in range(12))

GEOMETRY = """() => {
  const svg = document.querySelector('[data-testid=mindmap-svg]').getBoundingClientRect();
  const bar = document.querySelector('.mm-toolbar').getBoundingClientRect();
  const nodes = [...document.querySelectorAll('[data-testid=mm-node]')].map(g => {
    const r = g.querySelector('rect'), box = r.getBoundingClientRect(), text = g.querySelector('text');
    return {key: g.dataset.key, left: box.left, right: box.right, top: box.top, bottom: box.bottom,
            scale: box.height / Number(r.getAttribute('height')),
            textFits: text.getComputedTextLength() <= Number(r.getAttribute('width')) - 8};
  });
  return {svg: {left: svg.left, right: svg.right, top: svg.top, bottom: svg.bottom}, barBottom: bar.bottom, nodes};
}"""


def check_whole_and_readable(page, what):
    g = page.evaluate(GEOMETRY)
    s = g["svg"]
    assert g["barBottom"] <= s["top"], f"{what}: the map starts below the toolbar"
    outside = [n["key"] for n in g["nodes"] if n["left"] < s["left"] - 1 or n["right"] > s["right"] + 1
               or n["top"] < s["top"] - 1 or n["bottom"] > s["bottom"] + 1]
    assert outside == [], f"{what}: nodes outside the frame"
    assert min(n["scale"] for n in g["nodes"]) >= 0.7, f"{what}: labels too small to read"
    assert [n["key"] for n in g["nodes"] if not n["textFits"]] == [], f"{what}: clipped labels"
    return g["nodes"]


def focused(page):
    return page.evaluate("() => { const a = document.activeElement; return a && a.dataset.testid === 'mm-node' ? "
                         "[a.dataset.key, a.getAttribute('aria-expanded'), a.matches(':focus-visible')] : null; }")


@pytest.mark.parametrize("width,height", [(1280, 800), (360, 740)])
def test_mind_map_fits_reads_and_works_by_keyboard(width, height, browser, built_dist, serve, page_log):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = open_page(context, serve(built_dist).url, page_log)
    page.evaluate("(text) => quire.stage([{name: 'Wasserkreislauf.md', text}])", NOTES)
    train(page)
    set_id = page.evaluate("async () => (await quire.generate('mindmap', {offline: true})).id")
    open_set(page, set_id)
    page.locator("[data-testid=mm-node]").first.wait_for()
    page.locator("[data-testid=mindmap-svg][data-fitted]").wait_for()

    first = check_whole_and_readable(page, "first view")
    assert len(first) > 12, "the first level shows"
    page.get_by_test_id("mm-expand-all").click()
    page.get_by_test_id("mm-fit").click()
    check_whole_and_readable(page, "Fit after Expand all")

    # Keyboard: one node in the tab order; arrows reach every visible node, Space collapses and
    # expands, Enter opens the node's passages, and the focused node is visibly marked.
    keys = [n["key"] for n in page.evaluate(GEOMETRY)["nodes"]]
    page.locator("[data-testid=mm-node][tabindex='0']").focus()
    page.keyboard.press("Home")
    seen = [focused(page)[0]]
    for _ in range(len(keys)):
        page.keyboard.press("ArrowDown")
        seen.append(focused(page)[0])
    assert sorted(set(seen)) == sorted(keys)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowDown")  # the first section, collapsed by Fit
    key, expanded, visible = focused(page)
    assert visible, "the focused node is visibly marked"
    assert expanded == "false"
    page.keyboard.press("Space")
    assert focused(page)[:2] == [key, "true"]
    page.keyboard.press("ArrowRight")
    assert focused(page)[0] == key + ".0", "Right goes to the first child of an open node"
    page.keyboard.press("Enter")
    page.get_by_test_id("mm-selected").wait_for()
    assert "Teil 0.0" in page.get_by_test_id("mm-selected").inner_text()
    page.get_by_test_id("mm-passage").first.wait_for()
    page.keyboard.press("ArrowLeft")
    assert focused(page)[0] == key, "Left goes back to the parent"
    page.keyboard.press("Space")
    assert focused(page)[:2] == [key, "false"]
    context.close()
    assert not page_log.errors
