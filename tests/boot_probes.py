"""What the boot tests ask a page, in Chromium (tests/test_boot_browser.py) and in Firefox and
WebKit (tests/test_engines_embedder.py): both need the page opened with test hooks (``quire.run``)."""

# numpy's shared libraries the engine linked at start-up that the build did not compile ahead
# (the snapshot's preloadedWasm): each one is a synchronous compile in the middle of `import numpy`.
NUMPY_LIBS_NOT_LINKED_AHEAD = """
import pyodide_js
linked = set(pyodide_js._module.preloadedWasm.object_keys())
[name for name in pyodide_js._module.LDSO.loadedLibsByName.object_keys() if "/numpy/" in name and name not in linked]
"""

# The page keeps calling the engine while scikit-learn loads, as a person clicking about does,
# and one call never settles (a model that never answers); returns when each call was answered
# and the engine's marks, or why it gave up.
CALLS_WHILE_LOADING = """async () => {
    await quire.ready;
    quire.run('import asyncio\\nawait asyncio.Future()');  // never settles
    let loaded = false;
    const sklearn = quire.sklearnReady.then(() => { loaded = true; });
    const answered = [];
    const calling = (async () => {
        while (!loaded) {
            await quire.sources();
            answered.push(performance.now());
            await new Promise(r => setTimeout(r, 400));
        }
    })();
    const gaveUp = new Promise(r => setTimeout(() => r('scikit-learn still loading after 300 s'), 300000));
    const why = await Promise.race([sklearn.then(() => null), gaveUp]);
    await calling;
    return {why, answered, marks: quire.status().marks};
}"""
