"""The browsers Debian ships besides Chromium, driven the way their own vendors drive them.

    with open_engine("firefox", tmp_path) as b:     # Firefox ESR over Marionette
        b.goto(url); status = b.wait_ready()
        hits = b.run("async (q) => quire.search(q, {k: 3})", "mitosis")
    with open_engine("webkit", tmp_path) as b:      # WebKitGTK (Safari's engine) over WebDriver, on Xvfb
    with open_engine("webkit-app", folder) as b:    # WebKitGTK as an app: storage kept in folder across b.restart()

Playwright's own Firefox and WebKit builds cannot be downloaded here, and they are not what
people run anyway.  ``run`` awaits a page-side async function and returns its JSON value; a
page-side exception comes back as :class:`PageError` with the page's stack.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

FIREFOX = os.environ.get("QUIRE_FIREFOX", "/usr/bin/firefox-esr")
MINIBROWSER = os.environ.get("QUIRE_MINIBROWSER", "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")
WEBKIT_DRIVER = os.environ.get("QUIRE_WEBKIT_DRIVER", "/usr/bin/WebKitWebDriver")
ENGINES = ("firefox", "webkit")
# Debian's packages for each engine (tests/run.py and .ci/run install them as root).
PACKAGES = {"firefox": ["firefox-esr"], "webkit": ["webkit2gtk-driver", "xvfb"]}
SCRIPT_TIMEOUT_S = 600  # a page call's own bound; the suite's per-test timeout is the real limit

# Awaits FN(...args) in the page; the driver's callback is the last argument in both protocols.
RUN_JS = """
var done = arguments[arguments.length - 1], args = Array.prototype.slice.call(arguments, 0, -1);
Promise.resolve().then(function () { return (%s).apply(null, args); }).then(
  function (v) { done(JSON.stringify({ ok: v === undefined ? null : v })); },
  function (e) { done(JSON.stringify({ error: String(e && e.message || e), stack: String(e && e.stack || '') })); });
"""


class PageError(RuntimeError):
    """A page-side exception, with the page's stack."""


def missing(engine: str) -> str | None:
    """Why ``engine`` cannot run here, or None."""
    if engine == "firefox":
        return None if Path(FIREFOX).exists() else f"{FIREFOX} not found (apt-get install -y firefox-esr)"
    if not Path(MINIBROWSER).exists() or not Path(WEBKIT_DRIVER).exists():
        return "WebKitGTK's MiniBrowser or WebKitWebDriver not found (apt-get install -y webkit2gtk-driver)"
    if shutil.which("Xvfb") is None:
        return "Xvfb not found (apt-get install -y xvfb)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ended(proc: subprocess.Popen) -> None:
    """A browser asked to quit: given 30 s to write its storage and end, then terminated."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(30)
    if proc.poll() is None:
        proc.terminate()
        proc.wait(30)


class Engine:
    """One real browser window; subclasses speak its protocol."""

    name = "?"
    version = "?"
    embedder = False  # the in-tab embedder stays on (open_engine(..., embedder=True)); else keywords only

    def goto(self, url: str) -> None:
        raise NotImplementedError

    def _execute_async(self, script: str, args: list):
        raise NotImplementedError

    def _execute(self, script: str, args: list):
        raise NotImplementedError

    def js(self, script: str, *args):
        """A synchronous page expression's value (``script`` is a function body with ``return``)."""
        return self._execute(script, list(args))

    def run(self, fn: str, *args):
        """Await the page-side async function ``fn`` (source of a JS function) with ``args``."""
        out = json.loads(self._execute_async(RUN_JS % fn, list(args)))
        if "error" in out:
            raise PageError(f"{out['error']}\n{out['stack']}")
        return out["ok"]

    def wait(self, condition: str, every_ms: int = 100, describe: str | None = None):
        """Poll a page-side expression (it may await) until truthy; its value.  No time limit of its
        own: the driver's script timeout bounds it, and then ``describe`` (a page expression) says
        what the page showed instead."""
        try:
            return self.run(f"async () => {{ for (;;) {{ let v; try {{ v = await ({condition}); }} catch (e) {{ v = null; }} "
                            f"if (v) return v; await new Promise(r => setTimeout(r, {every_ms})); }} }}")
        except PageError:
            raise
        except Exception as err:
            if describe is None:
                raise
            try:
                seen = self.js(f"return String({describe});")
            except Exception as again:
                seen = f"(the page did not answer either: {again})"
            raise PageError(f"{condition} never held; the page showed: {seen}") from err

    def wait_ready(self) -> dict:
        """The page's own readiness signal (``window.quire.ready``), then ``status()``; a boot
        failure raises with the page's error box."""
        self.wait("window.quire && (window.quire.status().stage === 'ready' || window.quire.status().stage === 'failed')")
        status = self.run("async () => window.quire.status()")
        if status["stage"] != "ready":
            raise PageError(f"{self.name} did not start Quire: {json.dumps(status.get('error'), ensure_ascii=False)}")
        if not self.embedder:  # keywords only, as tests/conftest.py chooses for Chromium's tests
            self.run("async () => { if (window.quire.embedInTab) await window.quire.embedInTab(false); }")
        return status

    def screenshot(self, path: Path) -> Path:
        raise NotImplementedError

    def new_tab(self) -> str:
        """Open a tab of this window's profile and make it the current one; its handle."""
        raise NotImplementedError

    def switch(self, handle: str) -> None:
        """Send the next commands to the tab ``handle``."""
        raise NotImplementedError

    def set_size(self, width: int, height: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class Firefox(Engine):
    """Firefox ESR, headless, over Marionette, on a profile of its own (kept across ``restart``)."""

    name = "firefox"

    def __init__(self, profile: Path, prefs: dict | None = None, dark: bool = False):
        """``dark``: pages see prefers-color-scheme: dark."""
        self.profile = Path(profile)
        self.profile.mkdir(parents=True, exist_ok=True)
        self.prefs = {
            # A fake microphone that plays a tone, allowed without a prompt (the voice tests).
            "media.navigator.streams.fake": True, "media.navigator.permission.disabled": True,
            # The closed network: no update, telemetry or remote-settings requests.
            "app.update.enabled": False, "browser.shell.checkDefaultBrowser": False,
            "datareporting.policy.dataSubmissionEnabled": False, "toolkit.telemetry.reportingpolicy.firstRun": False,
            "browser.aboutwelcome.enabled": False, "browser.startup.homepage_override.mstone": "ignore",
            **({"layout.css.prefers-color-scheme.content-override": 0} if dark else {}),
            **(prefs or {}),
        }
        self.proc = None
        self.client = None
        self.version = subprocess.run([FIREFOX, "--version"], capture_output=True, text=True).stdout.strip()
        self._start()

    def _start(self) -> None:
        from marionette_driver.marionette import Marionette

        port = free_port()
        lines = [f'user_pref("marionette.port", {port});']
        lines += [f"user_pref({json.dumps(k)}, {json.dumps(v)});" for k, v in self.prefs.items()]
        (self.profile / "user.js").write_text("\n".join(lines) + "\n")
        self.log = (self.profile.parent / f"{self.profile.name}-firefox.log").open("a")
        self.proc = subprocess.Popen([FIREFOX, "--headless", "--marionette", "--no-remote", "-profile", str(self.profile)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.client = Marionette(host="127.0.0.1", port=port)
        self.client.start_session()
        self.client.timeout.script = SCRIPT_TIMEOUT_S
        self.client.timeout.page_load = SCRIPT_TIMEOUT_S

    def goto(self, url: str) -> None:
        self.client.navigate(url)

    def _execute(self, script, args):
        return self.client.execute_script(script, script_args=args, sandbox=None)

    def _execute_async(self, script, args):
        return self.client.execute_async_script(script, script_args=args, sandbox=None)

    def screenshot(self, path: Path) -> Path:
        import base64

        Path(path).write_bytes(base64.b64decode(self.client.screenshot()))
        return Path(path)

    def set_size(self, width: int, height: int) -> None:
        self.client.set_window_rect(width=width, height=height)

    def new_tab(self) -> str:
        handle = self.client.open(type="tab", focus=True)["handle"]
        self.client.switch_to_window(handle)
        return handle

    def switch(self, handle: str) -> None:
        self.client.switch_to_window(handle)

    @property
    def handle(self) -> str:
        return self.client.current_window_handle

    def restart(self) -> None:
        """Quit Firefox as a person would and start it again on the same profile."""
        self.close()
        self._start()

    def close(self) -> None:
        if self.client is not None:
            # Marionette's own quit() only serves instances it launched: ask Firefox to quit cleanly
            # (it writes its profile to disk), as a person closing the window would.
            with contextlib.suppress(Exception):
                self.client._send_message("Marionette:Quit", {"flags": ["eAttemptQuit"]})
            with contextlib.suppress(Exception):
                self.client.client.close()
            self.client = None
        if self.proc is not None:
            ended(self.proc)
            self.proc = None
            self.log.close()


class Xvfb:
    """A virtual screen for WebKitGTK, on a display number Xvfb picks itself."""

    def __init__(self):
        r, w = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1400x1000x24", "-nolisten", "tcp"],
                                     pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        with os.fdopen(r) as f:
            self.display = ":" + f.readline().strip()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class WebKit(Engine):
    """WebKitGTK's MiniBrowser in automation mode, over WebKitWebDriver and Selenium, on Xvfb."""

    name = "webkit"

    def __init__(self, screen: Xvfb, args: tuple[str, ...] = (), dark: bool = False):
        """``args``: more MiniBrowser switches (tests/test_engines_voice.py: its mock microphone);
        ``dark``: GTK's dark theme, which WebKitGTK reports to pages as prefers-color-scheme: dark."""
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        options = Options()
        options.binary_location = MINIBROWSER
        options.add_argument("--automation")
        for arg in args:
            options.add_argument(arg)
        env = {**os.environ, "DISPLAY": screen.display, **({"GTK_THEME": "Adwaita:dark"} if dark else {})}
        service = Service(WEBKIT_DRIVER, env=env)
        self.driver = webdriver.WebKitGTK(options=options, service=service)
        self.driver.set_script_timeout(SCRIPT_TIMEOUT_S)
        self.driver.set_page_load_timeout(SCRIPT_TIMEOUT_S)
        caps = self.driver.capabilities
        self.version = f"WebKitGTK {caps.get('browserVersion', '?')}"

    def goto(self, url: str) -> None:
        self.driver.get(url)

    def _execute(self, script, args):
        return self.driver.execute_script(script, *args)

    def _execute_async(self, script, args):
        return self.driver.execute_async_script(script, *args)

    def screenshot(self, path: Path) -> Path:
        self.driver.save_screenshot(str(path))
        return Path(path)

    def set_size(self, width: int, height: int) -> None:
        self.driver.set_window_size(width, height)

    def new_tab(self) -> str:
        self.driver.switch_to.new_window("tab")
        return self.driver.current_window_handle

    def switch(self, handle: str) -> None:
        self.driver.switch_to.window(handle)

    @property
    def handle(self) -> str:
        return self.driver.current_window_handle

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.driver.quit()


SYSTEM_PYTHON = os.environ.get("QUIRE_SYSTEM_PYTHON", "/usr/bin/python3")


def missing_webkit_app() -> str | None:
    """Why the WebKitGTK app host (tests/webkit_app.py) cannot run here, or None."""
    if shutil.which("Xvfb") is None:
        return "Xvfb not found (apt-get install -y xvfb)"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import gi; gi.require_version('WebKit2', '4.1'); "
                            "from gi.repository import WebKit2"], capture_output=True, text=True)
    if probe.returncode != 0:
        return ("WebKitGTK's Python bindings are missing for " + SYSTEM_PYTHON +
                " (apt-get install -y python3-gi gir1.2-webkit2-4.1): " + probe.stderr.strip()[-200:])
    return None


class WebKitApp(Engine):
    """WebKitGTK embedded as an app embeds it (GNOME Web does), its storage kept in ``folder``:
    unlike MiniBrowser under WebKitWebDriver, its library survives ``restart`` and can be put on a
    small disk.  It speaks tests/webkit_app.py's line protocol."""

    name = "webkit"

    def __init__(self, screen: Xvfb, folder: Path, disk_cache: bool = True):
        """``disk_cache``: keep WebKit's HTTP disk cache (off for a test on a small disk)."""
        self.screen = screen
        self.folder = Path(folder)
        self.disk_cache = disk_cache
        (self.folder / "data").mkdir(parents=True, exist_ok=True)
        (self.folder / "cache").mkdir(parents=True, exist_ok=True)
        self.proc = None
        self._start()
        self.version = self._ask({"op": "version"})

    def _start(self) -> None:
        self.log = (self.folder / "webkit-app.log").open("a")
        host = Path(__file__).with_name("webkit_app.py")
        self.proc = subprocess.Popen([SYSTEM_PYTHON, str(host), "--data", str(self.folder / "data"),
                                      "--cache", str(self.folder / "cache"),
                                      "--disk-cache", "yes" if self.disk_cache else "no"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env={**os.environ, "DISPLAY": self.screen.display})

    def _ask(self, command: dict):
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise PageError(f"the WebKitGTK app ended (exit {self.proc.wait()}); its log: {self.folder / 'webkit-app.log'}")
        out = json.loads(line)
        if "error" in out:
            raise PageError(f"{out['error']}\n{out.get('stack', '')}")
        return out["ok"]

    def goto(self, url: str) -> None:
        self._ask({"op": "goto", "url": url})

    def run(self, fn: str, *args):
        return self._ask({"op": "run", "fn": fn, "args": list(args)})

    def js(self, script: str, *args):
        return self.run(f"function () {{ {script} }}", *args)

    def restart(self) -> None:
        """Quit the app as a person closing its window would, and start it again on the same folder."""
        self.close()
        self._start()

    def close(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(Exception):
            self._ask({"op": "quit"})
        ended(self.proc)
        self.proc = None
        self.log.close()


@contextlib.contextmanager
def open_engine(name: str, workdir: Path | None = None, embedder: bool = False, **options):
    """One browser of ``name``, closed (and its screen stopped) after: "firefox", "webkit"
    (MiniBrowser under WebKitWebDriver) or "webkit-app" (WebKitGTK as an app, its storage in
    ``workdir``, kept across ``restart``).  Its pages choose keywords only (no in-tab embedding
    after Train) unless ``embedder``."""
    why = missing_webkit_app() if name == "webkit-app" else missing(name)
    if why:
        raise RuntimeError(why)
    workdir = Path(workdir or tempfile.mkdtemp())
    screen = None
    try:
        if name == "firefox":
            engine = Firefox(workdir / "firefox-profile", **options)
        elif name == "webkit-app":
            screen = Xvfb()
            engine = WebKitApp(screen, workdir, **options)
        else:
            screen = Xvfb()
            engine = WebKit(screen, **options)
        engine.embedder = embedder
        try:
            yield engine
        finally:
            engine.close()
    finally:
        if screen is not None:
            screen.stop()

