"""WebKitGTK as an app embeds it, with its storage kept in a folder: the host ``engines.WebKitApp`` drives.

WebKitWebDriver starts MiniBrowser with ephemeral storage, so a restart of the browser, or its
storage on a small disk, cannot be tried through it.  This host is what GNOME Web (Epiphany) and
other WebKitGTK apps are: a GTK window with one ``WebKit2.WebView`` whose website data (IndexedDB,
the service worker's cache, localStorage) lives under ``--data``, and so survives a quit and a new
start on the same folder.  It needs Debian's ``python3-gi`` and ``gir1.2-webkit2-4.1``, so it runs
under the system's own ``/usr/bin/python3``, not the test venv.

It reads one JSON command per line on stdin and answers one JSON line on stdout:

    {"op": "goto", "url": "http://127.0.0.1:8000/"}           -> {"ok": null} once the page has loaded
    {"op": "run", "fn": "async (q) => quire.search(q)", "args": ["mitosis"]}
                                                               -> {"ok": <JSON value>} or {"error", "stack"}
    {"op": "version"}                                          -> {"ok": "WebKitGTK 2.50.6"}
    {"op": "quit"}                                             -> {"ok": null}, then the process ends
"""

import json
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import GLib, Gtk, WebKit2  # noqa: E402

# Awaits FN(...args) in the page and hands back its JSON, or the page's error and stack.
CALL = """
return (async () => {
  try {
    const v = await (%s).apply(null, JSON.parse(argsJson));
    return JSON.stringify({ok: v === undefined ? null : v});
  } catch (e) {
    return JSON.stringify({error: String(e && e.message || e), stack: String(e && e.stack || '')});
  }
})();
"""


class Host:
    def __init__(self, data: str, cache: str, disk_cache: bool):
        manager = WebKit2.WebsiteDataManager(base_data_directory=data, base_cache_directory=cache)
        context = WebKit2.WebContext(website_data_manager=manager)
        if not disk_cache:  # no HTTP disk cache (a small disk's room is then the page's own storage)
            context.set_cache_model(WebKit2.CacheModel.DOCUMENT_VIEWER)
        self.view = WebKit2.WebView(web_context=context)
        self.view.get_settings().set_enable_write_console_messages_to_stdout(False)
        self.window = Gtk.Window()
        self.window.set_default_size(1280, 900)
        self.window.add(self.view)
        self.window.show_all()
        self.loading = None  # the "goto" waiting for its page
        self.view.connect("load-changed", self.on_load)
        self.view.connect("load-failed", self.on_load_failed)
        GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.PRIORITY_DEFAULT,
                          GLib.IOCondition.IN | GLib.IOCondition.HUP, self.on_command)

    def reply(self, message: dict) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def on_command(self, _channel, condition) -> bool:
        line = sys.stdin.readline()
        if not line:  # the test went away: quit as a closed window would
            Gtk.main_quit()
            return False
        command = json.loads(line)
        op = command["op"]
        if op == "goto":
            self.loading = command["url"]
            self.view.load_uri(command["url"])
        elif op == "run":
            self.view.call_async_javascript_function(
                CALL % command["fn"], -1, GLib.Variant("a{sv}", {"argsJson": GLib.Variant("s", json.dumps(command["args"]))}),
                None, None, None, self.on_result)
        elif op == "version":
            self.reply({"ok": "WebKitGTK %d.%d.%d" % (WebKit2.get_major_version(), WebKit2.get_minor_version(),
                                                       WebKit2.get_micro_version())})
        elif op == "quit":
            self.window.destroy()
            self.reply({"ok": None})
            Gtk.main_quit()
            return False
        else:
            self.reply({"error": f"unknown op {op!r}", "stack": ""})
        return True

    def on_load(self, _view, event) -> None:
        if event == WebKit2.LoadEvent.FINISHED and self.loading is not None:
            self.loading = None
            self.reply({"ok": None})

    def on_load_failed(self, _view, _event, uri, error) -> bool:
        if self.loading is not None:
            self.loading = None
            self.reply({"error": f"could not load {uri}: {error.message}", "stack": ""})
        return False

    def on_result(self, view, result) -> None:
        try:
            value = view.call_async_javascript_function_finish(result)
            self.reply(json.loads(value.to_string()))
        except GLib.Error as err:  # the page went away mid-call, or the script did not compile
            self.reply({"error": err.message, "stack": ""})


def main() -> None:
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    Host(args["--data"], args["--cache"], args.get("--disk-cache", "yes") == "yes")
    Gtk.main()


if __name__ == "__main__":
    main()
