import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

FIXTURES = ROOT / "tests" / "fixtures"
# --doctest-modules imports every module under testpaths: benchmarks and the runner are scripts.
collect_ignore = ["run.py", "webkit_app.py"]  # webkit_app.py: run by the system Python (gi), never imported here
collect_ignore_glob = ["bench/*"]


def pytest_collection_modifyitems(session, config, items):
    """The run's order, which tests/run.py's two xdist workers take file by file: browser tests
    first (the long ones), then the quick CPython tests, which even out the two workers' ends,
    and the real-server tier last, so the llama-server build started by tests/run.py has the
    suite's time."""
    real_tier = ROOT / "tests" / "real"

    def rank(item) -> int:
        if real_tier in Path(str(item.fspath)).parents:
            return 2
        return 0 if item.get_closest_marker("browser") else 1

    items.sort(key=rank)  # stable: each file's own order stays


@pytest.fixture(scope="session")
def pdf_dir() -> Path:
    """Real third-party PDFs (licences in tests/fixtures/pdfs/SOURCE.md); no shared corpus needed."""
    return FIXTURES / "pdfs"


# --------------------------------------------------------------------------
# The built bundle and real Chromium (tests marked "browser" use these).
# --------------------------------------------------------------------------
import shutil
import subprocess

CHROMIUM = os.environ.get("QUIRE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    # This machine's network is closed: without these Chromium retries Google hosts forever.
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def shared_build(tmp_path_factory, name: str, args: list[str]) -> Path:
    """One build of the bundle with ``args`` for the whole run, never written into the working
    tree.  Under pytest-xdist (tests/run.py runs two workers) the first worker to ask builds it
    into the run's shared folder while the others wait on a lock; every test copies what it changes."""
    sys.path.insert(0, str(ROOT))
    import fcntl

    import build

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    dist = shared / name / "dist"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / name / "built").exists():
            dist.parent.mkdir(exist_ok=True)
            assert build.main(["--dist", str(dist), *args]) == 0, "build.py failed; see its output above"
            (shared / name / "built").write_text("ok")
    return dist


# What a teacher who wants the smallest bundle builds: no OCR, no voice, no in-tab embedder.
LEAN_BUILD = ["--no-ocr", "--no-voice", "--no-embedder"]


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory) -> Path:
    """The whole bundle, as ``python3 build.py`` makes it."""
    return shared_build(tmp_path_factory, "build", [])


@pytest.fixture(scope="session")
def lean_dist(tmp_path_factory) -> Path:
    """The bundle built with LEAN_BUILD, once for the run: the tests of each part's absence
    (OCR, voice, the embedder) share it instead of building their own."""
    return shared_build(tmp_path_factory, "lean", LEAN_BUILD)


def pack_bytes(dist: Path, part: str) -> int:
    """Bytes of the files under ``assets/pack/<part>/`` (a part the build may leave out), per the manifest."""
    import json

    files = json.loads((dist / "manifest.json").read_text())["files"]
    return sum(f["size"] for name, f in files.items() if name.startswith(f"assets/pack/{part}/"))


class StaticServer:
    """``serve.py`` as a subprocess on a free port; ready when it prints its URL."""

    def __init__(self, dist: Path, port: int = 0):
        self.dist, self.port, self.proc, self.url = dist, port, None, None

    def start(self) -> "StaticServer":
        env = {**os.environ, "QUIRE_SERVE_QUIET": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "serve.py"), "--no-build", "--dist", str(self.dist), "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        if "running at" not in line:
            raise RuntimeError(f"serve.py did not start: {line}{self.proc.stderr.read()}")
        self.url = line.split("running at ")[1].split()[0]
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def serve():
    servers = []

    def start(dist: Path, port: int = 0) -> StaticServer:
        servers.append(StaticServer(dist, port).start())
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is open, and CPython tests in later modules call asyncio.run().
@pytest.fixture(scope="module")
def playwright_instance():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium (or set QUIRE_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright_instance):
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


class PageLog:
    """The browser console and page errors, copied into the test log."""

    def __init__(self):
        self.lines: list[str] = []
        self.errors: list[str] = []

    def attach(self, page):
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        return page

    def _console(self, msg):
        line = f"console.{msg.type}: {msg.text}"
        self.lines.append(line)
        print(line)
        if msg.type == "error":
            self.errors.append(line)


@pytest.fixture
def page_log():
    return PageLog()


# The in-tab embedder (issue 26) embeds every trained passage in the background: 72 MB of weights
# and about a second of CPU per passage.  Browser tests about something else choose "None (keywords
# only)" for it, as a person can in Settings (localStorage quire.embed.tab, read at start-up), so
# the suite's time goes to what each test is about; tests marked ``embedder`` keep the default
# (test_embed_in_tab_browser.py, test_engines_embedder.py).  Every context and persistent context
# Playwright opens in a test gets the choice, unless the page already stored one.
KEYWORDS_ONLY = ("try { if (localStorage.getItem('quire.embed.tab') === null) localStorage.setItem('quire.embed.tab', 'off'); }"
                 " catch (e) { /* about:blank has no storage */ }")
_embedder_on = False
# The service worker precaches the whole bundle (144 MB with the voice, OCR and embedder packs) on
# every first visit over http: about 4.5 CPU-seconds of a fresh context's 10 (tests/bench/boot.py
# measures what a person pays).  Chromium tests block it, as a file:// page has none, unless they
# are marked ``service_worker`` (offline reloads, updates, the caches).
_service_worker_on = False


def _keywords_only(make):
    def wrapper(*args, **kwargs):
        if not _service_worker_on:
            kwargs.setdefault("service_workers", "block")
        made = make(*args, **kwargs)
        if not _embedder_on:
            (made.context if hasattr(made, "goto") else made).add_init_script(KEYWORDS_ONLY)
        return made
    wrapper.__wrapped__ = make
    return wrapper


@pytest.fixture(scope="session", autouse=True)
def _embedder_choice_for_tests():
    try:
        from playwright.sync_api import Browser, BrowserType
    except ImportError:  # the CPython-only tier without Playwright
        yield
        return
    patched = [(Browser, "new_context"), (Browser, "new_page"), (BrowserType, "launch_persistent_context")]
    for cls, name in patched:
        setattr(cls, name, _keywords_only(getattr(cls, name)))
    yield
    for cls, name in patched:
        setattr(cls, name, getattr(cls, name).__wrapped__)


@pytest.fixture(autouse=True)
def _embedder_marker(request):
    global _embedder_on, _service_worker_on
    _embedder_on = request.node.get_closest_marker("embedder") is not None
    _service_worker_on = request.node.get_closest_marker("service_worker") is not None
    yield
    _embedder_on = _service_worker_on = False


@pytest.fixture
def context(browser):
    ctx = browser.new_context()
    yield ctx
    ctx.close()


# A page opened with this query parameter has quire.run(source), which runs any Python in the
# engine: a hook for tests, absent from a normal page (site/assets/boot-calls.js).
TEST_HOOKS = "test-hooks"


def with_test_hooks(url: str) -> str:
    """``url`` (http or file://, with or without a query or a #view) opening a page that has ``quire.run``.

    >>> with_test_hooks("http://127.0.0.1:8000/#search"), with_test_hooks("file:///q/index.html?lang=de")
    ('http://127.0.0.1:8000/?test-hooks#search', 'file:///q/index.html?lang=de&test-hooks')
    """
    base, hash_, view = url.partition("#")
    return base + ("&" if "?" in base else "?") + TEST_HOOKS + hash_ + view


def launch_profile(pw, profile, args=(), **options):
    """Chromium on a persistent profile (IndexedDB survives closing it: a browser restart)."""
    return pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM,
                                                args=CHROMIUM_ARGS + list(args), **options)


def open_logged(ctx, url: str, timeout_ms: int = 180_000):
    """A new page of ``ctx`` at ``url`` with its console in a PageLog, once the engine is ready;
    opened with the test hooks (``quire.run``)."""
    page = ctx.new_page()
    page.set_default_timeout(timeout_ms)
    log = PageLog()
    log.attach(page)
    page.goto(with_test_hooks(url))
    wait_ready(page)
    return page, log


def wait_until(page, condition: str, every_ms: int = 100):
    """Poll an async page-side condition (an expression that may await) until it is truthy; its
    value.  page.wait_for_function() does not await a predicate's promise (a promise is truthy,
    so it returns at once).  The suite's per-test timeout bounds the wait."""
    return page.evaluate(f"async () => {{ for (;;) {{ const v = await ({condition}); if (v) return v; "
                         f"await new Promise(r => setTimeout(r, {every_ms})); }} }}")


HOLD_JS = """([names, askedNow]) => {
    window.held = window.held || {};
    for (const name of names) {
        const call = quire[name].bind(quire), queue = window.held[name] = [];
        queue.call = call;
        quire[name] = (...args) => {
            const answer = askedNow ? call(...args) : null;
            return new Promise((resolve, reject) => {
                let going = null;  // released once, however often asked
                queue.push(() => going || (going = (answer || call(...args)).then(resolve, reject)));
            });
        };
    }
}"""


def hold(page, *names: str, asked_now: bool = False) -> None:
    """A slow engine on demand: every later ``quire.<name>(...)`` waits until ``release``.  By
    default the call itself waits (the engine is busy); with ``asked_now`` it reaches the engine
    at once and only its answer waits (an answer that arrives late)."""
    page.evaluate(HOLD_JS, [list(names), asked_now])


def held(page, name: str) -> int:
    """How many calls of ``quire.<name>`` are waiting (released ones included)."""
    return page.evaluate("(n) => window.held[n].length", name)


def release(page, name: str, i: int) -> None:
    """Let the i-th held call of ``quire.<name>`` go, and return once its answer (and the page's
    handlers of it, up to the next task) have run."""
    page.evaluate("async ([n, i]) => { await window.held[n][i]().catch(() => {}); await new Promise(r => setTimeout(r, 0)); }",
                  [name, i])


def unhold(page) -> None:
    """The real calls back, and every call still waiting let go."""
    page.evaluate("() => { for (const [n, q] of Object.entries(window.held || {})) { quire[n] = q.call; q.forEach(f => f()); } "
                  "window.held = {}; }")


def wait_ready(page) -> dict:
    """Await ``window.quire.ready`` (the page's own readiness signal); return ``status()``."""
    page.wait_for_function("() => window.quire && window.quire.ready")
    return page.evaluate("async () => { await window.quire.ready; return window.quire.status(); }")


def copy_dist(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def bundle_url(where: str, built_dist: Path, serve, tmp_path: Path) -> tuple[str, str | None]:
    """``(url, origin)`` of the bundle served over http (``where`` "http") or copied to a folder
    and opened from disk ("file", origin None): what the bundle's own requests may go to."""
    from urllib.parse import urlparse

    if where == "http":
        url = serve(built_dist).url
        return url, "{0.scheme}://{0.netloc}".format(urlparse(url))
    return (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri(), None
