"""A student's first hour in real Chromium: counts read "1 page", the storage figure follows
Train, the finished Train panel closes, and an error toast never covers the page."""

import base64

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready

pytestmark = pytest.mark.browser

DROP = """async ([files]) => {
  const dt = new DataTransfer();
  for (const f of files) dt.items.add(new File([Uint8Array.fromBase64(f.b64)], f.name));
  const zone = document.querySelector('[data-testid="dropzone"]');
  zone.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
}"""
STORAGE = "() => document.querySelector('[data-testid=storage-status]').textContent"


def launch(playwright_instance, profile, viewport):
    ctx = playwright_instance.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport=viewport)
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    return ctx, page, log


def overlaps(a, b):
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


def test_plural_storage_after_train_and_train_close(playwright_instance, built_dist, serve, tmp_path, pdf_dir):
    server = serve(built_dist)
    ctx, page, log = launch(playwright_instance, tmp_path / "profile", {"width": 1180, "height": 900})
    try:
        page.goto(server.url)
        wait_ready(page)
        files = [{"name": name, "b64": base64.b64encode((pdf_dir / path).read_bytes()).decode()}
                 for name, path in [("habibi.pdf", "py-pdf-sample-files/habibi.pdf"), ("N18-3011.pdf", "acl-papers/N18-3011.pdf")]]
        page.evaluate(DROP, [files])
        page.wait_for_function("() => document.querySelectorAll('[data-testid=source-row][data-status=staged]').length === 2")
        assert page.get_by_test_id("train-button").inner_text() == "Train 2 staged sources"
        page.evaluate("() => quire.refreshStorage()")
        before = page.evaluate(STORAGE)
        assert before.startswith("Storage: ") and "used" in before

        page.get_by_test_id("train-button").click()
        page.get_by_test_id("train-result").wait_for()
        assert page.get_by_test_id("train-close").is_visible()
        # Nothing but Train's own end refreshes the figure here.
        page.wait_for_function(f"() => ({STORAGE})() !== {before!r}")

        parts = dict(page.eval_on_selector_all('[data-testid="source-row"]', "rs => rs.map(r => [r.dataset.name, r.querySelector('[data-testid=source-parts]').textContent])"))
        assert parts["habibi.pdf"] == "1 page"
        assert parts["N18-3011.pdf"].endswith(" pages") and not parts["N18-3011.pdf"].startswith("1 ")

        page.get_by_test_id("train-close").click()
        assert page.get_by_test_id("train-progress").is_hidden()
        assert page.get_by_test_id("train-result").count() == 0
        assert not log.errors, log.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("view", ["ask", "library"])
def test_error_toast_covers_no_content(playwright_instance, built_dist, serve, tmp_path, view):
    server = serve(built_dist)
    ctx, page, log = launch(playwright_instance, tmp_path / "profile", {"width": 1000, "height": 600})
    try:
        page.goto(server.url + "#" + view)
        wait_ready(page)
        page.evaluate("() => quire.stage({name: 'a.md', text: '# A\\nSome text.'})")  # the Library shows its Train button
        page.get_by_test_id("nav-" + view).click()
        page.evaluate("() => { for (let i = 0; i < 3; i++) QuireUI.toast('The file could not be read: it is damaged. Export it again and drop the new copy here.', 'error'); }")
        toasts = page.get_by_test_id("toasts").bounding_box()
        assert toasts["height"] > 0
        main = page.locator("main").bounding_box()
        assert not overlaps(toasts, main), (toasts, main)
        buttons = page.eval_on_selector_all("main button.primary", "bs => bs.filter(b => b.offsetParent).map(b => { const r = b.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; })")
        assert buttons
        for box in buttons:
            for t in page.get_by_test_id("toast").all():
                assert not overlaps(t.bounding_box(), box), (t.bounding_box(), box)
        # An error stays until dismissed; the close button removes it.
        page.get_by_test_id("toast").first.get_by_role("button", name="Dismiss").click()
        assert page.get_by_test_id("toast").count() == 2
        assert not log.errors, log.errors
    finally:
        ctx.close()
