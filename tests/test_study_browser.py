"""The study hub in real Chromium against the Ollama stub: quiz with resume after a browser
restart, FSRS review, a workshop lesson, the mind map (expand + export), a prompt override."""

import json
import os

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, held, hold, release, wait_ready
from ollama_server import OllamaStub

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("QUIRE_SHOTS", "/tmp")

NOTES = ("# Cells\n## Energy\nMitochondria make ATP for the cell. The mitochondrion has its own DNA.\n"
         "## Division\nMitosis makes two identical daughter cells. Meiosis makes four gametes.\n"
         "## Membranes\nThe cell membrane is a lipid bilayer that controls what enters the cell.\n")
QUIZ = {"items": [
    {"type": "multiple_choice", "question": "What makes ATP?", "options": ["Mitochondria", "Ribosomes", "The nucleus", "Golgi"],
     "answer": 0, "explanation": "The Energy section: mitochondria make ATP for the cell.", "citations": [1]},
    {"type": "true_false", "question": "Mitosis makes four gametes.", "options": ["True", "False"], "answer": 1,
     "explanation": "Mitosis makes two identical daughter cells; meiosis makes gametes.", "citations": [2]},
    {"type": "multiple_choice", "question": "What is the cell membrane?", "options": ["A lipid bilayer", "A protein wall", "A sugar mesh"],
     "answer": 0, "explanation": "It is a lipid bilayer that controls what enters.", "citations": [3]}]}
CARDS = {"cards": [
    {"type": "basic", "front": "What makes ATP in the cell?", "back": "Mitochondria", "citations": [1]},
    {"type": "cloze", "front": "Mitosis makes two identical {{c1::daughter cells}}.", "back": "", "citations": [2]},
    {"type": "basic", "front": "What controls what enters the cell?", "back": "The cell membrane (a lipid bilayer)", "citations": [3]}]}
OUTLINE = {"title": "Cell basics", "modules": [
    {"title": "Energy", "summary": "Where cells get energy.", "lessons": [
        {"title": "Mitochondria and ATP", "objective": "Explain what mitochondria do.", "citations": [1]}]},
    {"title": "Life cycle", "summary": "How cells divide.", "lessons": [
        {"title": "Mitosis versus meiosis", "objective": "Compare the two divisions.", "citations": [2]}]}]}
LESSON = {"title": "Mitochondria and ATP", "introduction": "Every cell needs energy; mitochondria supply it.",
          "sections": [{"heading": "The power plant", "body": "Mitochondria make **ATP**, the energy currency of the cell [1].", "citations": [1]}],
          "key_points": ["Mitochondria make ATP.", "They have their own DNA."],
          "exercises": [{"prompt": "What do mitochondria make?", "answer": "ATP"}]}
MAP = {"topic": "The cell", "children": [
    {"label": "Energy", "citations": [1], "children": [
        {"label": "Mitochondria", "citations": [1], "children": [{"label": "ATP", "citations": [1]}, {"label": "Own DNA", "citations": [1]}]}]},
    {"label": "Division", "citations": [2], "children": [
        {"label": "Mitosis", "citations": [2], "children": []}, {"label": "Meiosis", "citations": [2], "children": []}]},
    {"label": "Membranes", "citations": [3], "children": [{"label": "Lipid bilayer", "citations": [3], "children": []}]}]}


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


def launch(playwright_instance, profile, stub):
    ctx = playwright_instance.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport={"width": 1180, "height": 900}, accept_downloads=True)
    ctx.add_init_script(f"localStorage.setItem('quire.llm.url', '{stub.url}')")
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    return ctx, page, log


def connect(page, stub):
    page.evaluate("url => quire.saveSettings({url, chat_model: 'llama3.2:3b', embed_model: ''})", stub.url)


def generate_in_page(page, tool, count=None):
    page.get_by_test_id("nav-study").click()
    if page.get_by_test_id("player-back").is_visible():
        page.get_by_test_id("player-back").click()
    page.get_by_test_id(f"tool-{tool}").click()
    if count:
        page.get_by_test_id("study-count").fill(str(count))
    page.get_by_test_id("study-generate").click()
    page.get_by_test_id("study-player").wait_for()
    page.wait_for_function("() => !document.querySelector('[data-testid=study-generate]').disabled")


def studying(playwright_instance, built_dist, serve, tmp_path, stub):
    """A fresh profile over http with the model server connected and NOTES trained."""
    ctx, page, log = launch(playwright_instance, tmp_path / "profile", stub)
    page.goto(serve(built_dist).url)
    wait_ready(page)
    connect(page, stub)
    page.evaluate("(t) => quire.stage({name: 'cells.md', text: t}).then(() => quire.train())", NOTES)
    return ctx, page, log


def test_quiz_plays_scores_and_resumes_after_a_browser_restart(playwright_instance, built_dist, serve, tmp_path, stub):
    server = serve(built_dist)
    profile = tmp_path / "profile"
    ctx, page, log = launch(playwright_instance, profile, stub)
    page.goto(server.url)
    wait_ready(page)
    connect(page, stub)
    page.evaluate("(t) => quire.stage({name: 'cells.md', text: t}).then(() => quire.train())", NOTES)
    stub.enqueue_chat(json.dumps(QUIZ))
    generate_in_page(page, "quiz", 3)
    body = stub.bodies("/api/chat")[-1]
    assert body["format"]["required"] == ["items"] and body["options"]["temperature"] == 0.1
    assert page.get_by_test_id("quiz-progress").inner_text() == "Question 1 of 3"
    assert page.get_by_test_id("quiz-question").inner_text() == "What makes ATP?"
    page.get_by_test_id("quiz-option").nth(0).click()
    feedback = page.get_by_test_id("quiz-feedback")
    feedback.wait_for()
    assert feedback.get_attribute("data-correct") == "true" and "mitochondria make ATP" in feedback.inner_text()
    page.screenshot(path=f"{SHOTS}/study-quiz.png")
    assert feedback.get_by_test_id("source-link").inner_text() == "Source: cells.md"  # the chunk id's source, named
    feedback.get_by_test_id("source-link").click()  # the citation opens the passage in context
    assert "Mitochondria make ATP" in page.get_by_test_id("passage-mark").inner_text()
    page.get_by_test_id("passage-close").click()
    assert not log.errors, log.errors
    ctx.close()

    ctx, page, log = launch(playwright_instance, profile, stub)  # a browser restart
    page.goto(server.url + "#study")
    wait_ready(page)
    row = page.get_by_test_id("study-set").first
    row.wait_for()
    assert "In progress: 1 of 3 answered" in row.inner_text()
    row.get_by_test_id("set-open").click()
    assert page.get_by_test_id("quiz-progress").inner_text() == "Question 2 of 3"
    page.get_by_test_id("quiz-option").nth(0).click()  # "True": wrong
    page.get_by_test_id("quiz-next").click()
    page.get_by_test_id("quiz-option").nth(0).click()
    page.get_by_test_id("quiz-next").click()
    score = page.get_by_test_id("quiz-score")
    score.wait_for()
    assert score.get_attribute("data-correct") == "2" and "2 of 3 correct" in score.inner_text()
    page.screenshot(path=f"{SHOTS}/study-quiz-score.png")
    page.get_by_test_id("quiz-retry-wrong").click()
    assert page.get_by_test_id("quiz-progress").inner_text() == "Question 1 of 1"
    assert page.get_by_test_id("quiz-question").inner_text() == "Mitosis makes four gametes."
    history = page.evaluate("async () => (await quire.studySets())[0].stats")
    assert history["attempts"] == 1 and history["position"] == 0
    assert not log.errors, log.errors
    ctx.close()


def test_flashcards_workshop_mindmap_and_prompt_override(playwright_instance, built_dist, serve, tmp_path, stub):
    ctx, page, log = studying(playwright_instance, built_dist, serve, tmp_path, stub)

    # --- flashcards: the intervals on the buttons, and due dates that move
    stub.enqueue_chat(json.dumps(CARDS))
    generate_in_page(page, "flashcards", 3)
    reviewer = page.get_by_test_id("flash-reviewer")
    assert "3 due" in reviewer.get_by_test_id("flash-counts").inner_text()
    assert page.get_by_test_id("flash-front").inner_text() == "What makes ATP in the cell?"
    page.get_by_test_id("flash-show").click()
    labels = {r: page.get_by_test_id(f"rate-{r}").inner_text().split() for r in ("again", "hard", "good", "easy")}
    assert labels == {"again": ["Again", "1m"], "hard": ["Hard", "6m"], "good": ["Good", "10m"], "easy": ["Easy", "8d"]}
    page.screenshot(path=f"{SHOTS}/study-flashcards.png")
    deck_id = page.evaluate("async () => (await quire.studySets())[0].id")
    before = page.evaluate("id => quire.review(id)", deck_id)["schedule"]
    card_id = page.get_by_test_id("flashcard").get_attribute("data-id")
    page.get_by_test_id("rate-easy").click()
    page.get_by_test_id("flash-rated").wait_for()
    assert "2 due" in reviewer.get_by_test_id("flash-counts").inner_text()
    after = page.evaluate("id => quire.review(id)", deck_id)["schedule"]
    assert after[card_id] > before[card_id] and after[card_id][:10] != before[card_id][:10]  # 8 days later
    row = page.locator(f'[data-testid="card-due"][data-id="{card_id}"]')
    assert row.get_attribute("data-due") == after[card_id] and "in 8 days" in row.text_content()
    front = page.get_by_test_id("flash-front").inner_text()
    page.get_by_test_id("flash-show").click()  # Again is a lapse: the card offers its passage
    page.get_by_test_id("rate-again").click()
    page.get_by_test_id("show-passage").click()
    expected = "daughter cells" if "Mitosis" in front else "lipid bilayer"
    assert expected in page.get_by_test_id("passage-mark").inner_text()
    page.get_by_test_id("passage-close").click()
    with page.expect_download() as dl:
        page.get_by_test_id("export-csv").click()
    assert "What makes ATP in the cell?,Mitochondria" in open(dl.value.path(), encoding="utf-8").read()

    # --- workshop: the outline first, a lesson written when opened
    stub.enqueue_chat(json.dumps(OUTLINE))
    generate_in_page(page, "workshop")
    links = page.get_by_test_id("lesson-link")
    assert links.count() == 2
    stub.enqueue_chat(json.dumps(LESSON))
    links.first.click()
    page.get_by_test_id("lesson-title").wait_for()
    assert page.get_by_test_id("lesson-title").inner_text() == "Mitochondria and ATP"
    assert "Lesson: Mitochondria and ATP" in stub.bodies("/api/chat")[-1]["messages"][0]["content"]
    assert page.locator(".ws-section strong").inner_text() == "ATP"
    page.get_by_test_id("lesson-done").click()
    page.wait_for_function("() => document.querySelector('[data-testid=workshop-progress]').textContent.startsWith('1 of 2')")

    # --- mind map: expand a node, see its passages, export SVG and Markdown
    stub.enqueue_chat(json.dumps(MAP))
    generate_in_page(page, "mindmap")
    nodes = page.get_by_test_id("mm-node")
    shown = nodes.count()
    assert shown == 8  # the topic, 3 branches and their 4 children; deeper levels folded
    page.locator('[data-testid="mm-toggle"][data-key="0.0"]').click()
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=mm-node]').length === {shown + 2}")
    page.locator('[data-testid="mm-node"][data-key="0.0.0"]').click()
    assert page.get_by_test_id("mm-selected").inner_text() == "ATP"
    page.get_by_test_id("mm-open-passage").first.wait_for()
    assert "cells.md" in page.get_by_test_id("mm-open-passage").first.inner_text()
    page.screenshot(path=f"{SHOTS}/study-mindmap.png")
    with page.expect_download() as dl:
        page.get_by_test_id("export-svg").click()
    svg = open(dl.value.path(), encoding="utf-8").read()
    assert dl.value.suggested_filename.endswith(".svg") and svg.startswith("<?xml") and "<svg" in svg
    assert ">ATP<" in svg and ">Own DNA<" in svg and ">Lipid bilayer<" in svg
    with page.expect_download() as dl:
        page.get_by_test_id("export-markdown").click()
    md = open(dl.value.path(), encoding="utf-8").read()
    assert md.startswith("# The cell") and "    - ATP" in md
    with page.expect_download() as dl:
        page.get_by_test_id("export-png").click()
    assert open(dl.value.path(), "rb").read()[:8] == b"\x89PNG\r\n\x1a\n"

    # --- a prompt template edit applies to the next generation, without a reload
    page.get_by_test_id("player-back").click()
    page.locator("[data-testid=prompt-editor] summary").click()
    text = page.get_by_test_id("prompt-text")
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-text]').value.includes('$context')")
    assert page.get_by_test_id("prompt-select").input_value() == "quiz"
    original = text.input_value()
    text.fill(original + "\nUse $tone.")
    page.get_by_test_id("prompt-save").click()
    page.get_by_test_id("prompt-error").wait_for()
    assert "$tone" in page.get_by_test_id("prompt-error").inner_text()
    text.fill("Write every question about ZEBRAFISH-MARKER.\n" + original)
    page.get_by_test_id("prompt-save").click()
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-status]').textContent === 'Your version'")
    stub.enqueue_chat(json.dumps(QUIZ))
    generate_in_page(page, "quiz", 3)
    assert stub.bodies("/api/chat")[-1]["messages"][0]["content"].startswith("Write every question about ZEBRAFISH-MARKER.")
    page.get_by_test_id("player-back").click()
    page.get_by_test_id("prompt-reset").click()
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-status]').textContent === 'Default'")
    assert page.get_by_test_id("prompt-text").input_value() == original
    assert not log.errors, log.errors
    ctx.close()


def test_the_lesson_and_template_last_chosen_stay_when_answers_come_late(playwright_instance, built_dist, serve, tmp_path, stub):
    # A lesson takes a model a minute to write; the user clicks another meanwhile. The first used to
    # fill (or replace) the panel when it arrived, and a double click on "done" flipped its label
    # back. Saving a prompt template jumped the editor to the first template.
    ctx, page, log = studying(playwright_instance, built_dist, serve, tmp_path, stub)
    stub.enqueue_chat(json.dumps(OUTLINE))
    generate_in_page(page, "workshop")
    links = page.get_by_test_id("lesson-link")
    hold(page, "openLesson")
    links.nth(0).click()
    links.nth(1).click()
    links.nth(1).click()  # already being written: not asked for twice
    assert held(page, "openLesson") == 2
    stub.enqueue_chat(json.dumps({**LESSON, "title": "Mitosis versus meiosis"}))
    release(page, "openLesson", 1)
    page.get_by_test_id("lesson-title").wait_for()
    stub.enqueue_chat(json.dumps(LESSON))
    release(page, "openLesson", 0)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=lesson-link].written').length === 2")
    assert page.get_by_test_id("lesson-title").inner_text() == "Mitosis versus meiosis"
    page.get_by_test_id("lesson-done").dblclick()
    page.wait_for_function("() => document.querySelector('[data-testid=workshop-progress]').textContent.startsWith('1 of 2')")
    page.wait_for_function("() => !document.querySelector('[data-testid=lesson-done]').disabled")
    assert page.get_by_test_id("lesson-done").inner_text() == "Mark as not done"
    assert page.evaluate("async () => (await quire.openSet((await quire.studySets())[0].id)).done") == ["1.0"]

    page.get_by_test_id("player-back").click()
    page.locator("[data-testid=prompt-editor] summary").click()
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-text]').value.includes('$context')")
    page.get_by_test_id("prompt-select").select_option("flashcards")
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-text]').value.toLowerCase().includes('card')")
    text = page.get_by_test_id("prompt-text")
    text.fill("Cards about ZEBRAFISH-MARKER only.\n" + text.input_value())
    page.get_by_test_id("prompt-save").click()
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-status]').textContent === 'Your version'")
    page.wait_for_function("() => document.querySelector('[data-testid=prompt-select] option[value=flashcards]').textContent.includes('yours')")
    assert page.get_by_test_id("prompt-select").input_value() == "flashcards"
    assert text.input_value().startswith("Cards about ZEBRAFISH-MARKER only.")
    assert not log.errors, log.errors
    ctx.close()


def test_a_set_finishing_while_the_user_reviews_another_does_not_replace_it(playwright_instance, built_dist, serve, tmp_path, stub):
    # Generating takes minutes with a model; the user opens an older set meanwhile. The new set used
    # to replace it when it was done. And of two sets clicked quickly, the slower answer won.
    ctx, page, log = studying(playwright_instance, built_dist, serve, tmp_path, stub)
    stub.enqueue_chat(json.dumps(QUIZ))
    generate_in_page(page, "quiz", 3)
    stub.enqueue_chat(json.dumps(CARDS))
    generate_in_page(page, "flashcards", 3)
    page.get_by_test_id("player-back").click()
    sets = page.evaluate("quire.studySets()")
    assert sorted(s["kind"] for s in sets) == ["flashcards", "quiz"]
    hold(page, "generate", "openSet")
    stub.enqueue_chat(json.dumps(MAP))
    page.get_by_test_id("tool-mindmap").click()
    page.get_by_test_id("study-generate").click()
    quiz = page.locator("[data-testid=study-set][data-kind=quiz] [data-testid=set-open]")
    cards = page.locator("[data-testid=study-set][data-kind=flashcards] [data-testid=set-open]")
    quiz.click()
    cards.click()
    release(page, "openSet", 1)
    release(page, "openSet", 0)
    page.get_by_test_id("player-title").wait_for()
    assert page.get_by_test_id("flash-reviewer").count() == 1 and page.get_by_test_id("quiz-player").count() == 0
    title = page.get_by_test_id("player-title").inner_text()
    release(page, "generate", 0)
    page.wait_for_function("() => !document.querySelector('[data-testid=study-generate]').disabled")
    assert held(page, "openSet") == 2  # the new map was not opened over the deck
    assert page.get_by_test_id("player-title").inner_text() == title
    assert page.locator("[data-testid=toast]", has_text="It is on the shelf under").count() == 1
    assert sorted(s["kind"] for s in page.evaluate("quire.studySets()")) == ["flashcards", "mindmap", "quiz"]
    assert not log.errors, log.errors
    ctx.close()
