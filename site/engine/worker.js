/* The engine worker: boots Pyodide from the bundle and answers the page's calls.
 *
 * A call from the page (site/assets/boot-calls.js) is {type: 'call', id, method, argsJson,
 * payload}: the worker answers waitForLazy (and run, the test hook, in a page opened with it)
 * itself and hands every other method to quire.browser.dispatch, under the one-writer lock if
 * the method writes (quire.browser.WRITES).  The answer goes back as {type: 'result'}; the
 * engine posts a call's progress and its own news itself (py/quire/browser/page.py).
 *
 * It is one blob: script (py/quire_build/assemble.py: Pyodide's loader, QuireAssets,
 * QuireSnapshot, quireKernels, QuireStore (store-*.js), then the worker's own files, each a
 * global object, in this order), so it starts the same way over http and from file://:
 *   worker-quiet.js    QuireQuiet       when no page call has run for a while
 *   worker-lease.js    QuireLease       the writer lock where the browser has no Web Locks
 *   worker-report.js   QuireReport      stages, marks, console lines and failures, to the page
 *   worker-images.js   QuireImages      the file images in site-packages; their libraries linked ahead
 *   worker-boot.js     QuireEngineBoot  Pyodide started from the bundle, Quire imported
 *   worker-study-order.js QuireStudyOrder  the order scipy and scikit-learn are imported in, in pieces
 *   worker-lazy.js     QuireLazy        the wheels, services and study tools loaded after ready
 *   worker-writer.js   QuireWriter      one writer at a time, across tabs
 *   worker.js          this file: the page's messages, the call dispatch and the engine's page calls
 */
(function () {
  'use strict';
  var post = QuireReport.post, logWarning = QuireReport.warn, logError = QuireReport.error;
  var booted = null;

  function engine() { return QuireEngineBoot.pyodide(); }

  /* The engine asks the page for things only a page can do (OCR draws on canvases). */
  var pageCalls = {};
  var nextPageCall = 1;
  self.quirePageCall = function (method, args) {
    var id = nextPageCall++;
    return new Promise(function (resolve, reject) {
      pageCalls[id] = { resolve: resolve, reject: reject };
      // A recording's bytes (transcribe's data) move to the page instead of being copied: a
      // lecture video is hundreds of MB, and the copy here would wait for the collector.
      var data = args && args.data;
      self.postMessage({ type: 'page-call', id: id, method: method, args: args },
        data && data.buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? [data.buffer] : []);
    });
  };

  async function boot(cfg) {
    var started = await QuireEngineBoot.start(cfg);  // a failure is posted as 'fatal' there
    var library = started.library;
    QuireWriter.start(started.writes, cancel);
    QuireReport.stage('ready', { versions: started.versions, pyodide: started.pyodide.version, library: library });
    var afterReady = QuireLazy.start(started.pyodide, cfg);
    // An index that did not match the stored passages was repaired in memory; save it
    // once this tab holds the writer lock.
    // So is an index in the old single-blob format, rewritten as segments.
    if (library && ((library.repaired && library.repaired.length) || library.save)) {
      afterReady.then(function () { return py('repairIndex', '[]', null, 0); })
        .catch(function (err) { logWarning('The repaired search index was not saved: ' + err.message); });
    }
    if (library && library.merge) mergeSoon();
  }

  /* The engine call `id` stops at its next check (ctx.cancelled()). */
  function cancel(id) {
    var pyodide = engine();
    if (pyodide) pyodide.runPython('import quire.browser as b; b.cancel(' + Number(id) + ')');
  }

  /* Dead rows or segments have piled up in the stored index: merge them once this tab has
   * been quiet for MERGE_IDLE ms (a write like any other, under the lock; it rewrites the
   * index, so it never runs in the middle of someone's edits). */
  var MERGE_IDLE = 3000;
  var mergeTimer = null;
  function mergeSoon() {
    if (mergeTimer) clearTimeout(mergeTimer);
    mergeTimer = setTimeout(function () {
      mergeTimer = null;
      if (QuireWriter.busy()) { mergeSoon(); return; }
      py('mergeIndex', '[]', null, -1).then(function (r) {
        if (r && r.merged) QuireReport.info('Quire: search index merged (' + r.rows_before + ' stored rows, ' + r.rows + ' live)');
      }, function (err) { logWarning('The search index was not merged: ' + err.message); });
    }, MERGE_IDLE);
  }

  var REPLY_TEXT = new TextDecoder();
  async function dispatch(name, argsJson, payload, id) {
    var bridge = engine().pyimport('quire.browser');
    try {
      var raw = await bridge.dispatch(name, argsJson, id, payload);  // JSON in UTF-8 bytes
      var reply = JSON.parse(typeof raw === 'string' ? raw : REPLY_TEXT.decode(raw));
    } finally {
      bridge.destroy();
    }
    if (reply.changed) post({ type: 'library-changed', method: name });
    if (reply.merge) mergeSoon();
    QuireWriter.settle(name, id, reply);
    if (!reply.ok) {  // kind and detail (a traceback) go to the page with the error, which logs them once
      var err = new Error(reply.error);
      err.kind = reply.kind;
      if (typeof reply.detail === 'string' && reply.detail) err.detail = reply.detail;
      throw err;
    }
    return reply.value;
  }

  // Calls that leave much of the heap changed: a full collection follows once the engine is quiet.
  var SETTLE = { train: 1, eraseAll: 1, importVault: 1 };

  /* An engine method (quire.browser.dispatch), under the writer lock if it writes. */
  async function py(name, argsJson, payload, id) {
    if (!QuireLazy.quick(name)) await QuireLazy.needLibraries();
    var run = function () { return dispatch(name, argsJson, payload, id); };
    try {
      return await (QuireWriter.writes(name) ? QuireWriter.write(name, id, run) : run());
    } finally {
      if (SETTLE[name]) QuireLazy.settleSoon();
    }
  }

  /* The calls the worker answers itself; any other name is an engine method (py). */
  var own = Object.create(null);
  own.waitForLazy = QuireLazy.waitForLazy;
  /* original(sourceId): the bytes of a source as added (QuireStore.library.original) or null,
   * read here so a recording on its way to the page's play button skips the engine's heap. */
  own.original = function (id) { return QuireStore.library.original(id); };
  /* quire.run(source): any Python, a hook for tests only.  The page asks for it in its init
   * message when it was opened with ?test-hooks (boot-calls.js); otherwise "run" is unknown. */
  async function runPython(source) {
    var pyodide = engine();
    await pyodide.loadPackagesFromImports(source, { messageCallback: function () {}, errorCallback: logError });
    return QuireEngineBoot.toPlain(await pyodide.runPythonAsync(source));
  }

  async function call(msg) {
    // A call that waits for the work after ready must not hold that work back.
    var token = msg.method !== 'waitForLazy' && QuireQuiet.begin();
    try {
      await booted;
      var fn = own[msg.method];
      var value = fn ? await fn.apply(null, JSON.parse(msg.argsJson || '[]'))
        : await py(msg.method, msg.argsJson, msg.payload, msg.id);
      // bytes (original's answer: a recording for the play button) move to the page, not copied
      var whole = value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength;
      self.postMessage({ type: 'result', id: msg.id, ok: true, value: value }, whole ? [value.buffer] : []);
    } catch (err) {
      post({ type: 'result', id: msg.id, ok: false, error: String(err && err.message || err), kind: err && err.kind,
        detail: err && err.detail });
    } finally {
      if (token) QuireQuiet.end(token);
    }
  }

  self.onmessage = function (event) {
    var msg = event.data;
    switch (msg.type) {
      case 'init':
        // A write failed on the disk in an earlier session and the log was not retired yet (store-seal.js).
        if (msg.config.logTears !== undefined) QuireStore.logTears(msg.config.logTears);
        if (msg.config.storageTorn) QuireStore.setTorn(true);
        // ...or the page has not yet judged whether the last session was cut short (store-tabs.js).
        if (msg.config.storagePending) QuireStore.hold();
        if (msg.config.testHooks) own.run = runPython;
        booted = boot(msg.config); booted.catch(function () {}); break;
      case 'storage-judged': QuireStore.verdict(msg.torn); break;
      case 'asset': QuireAssets.receive(msg.name, msg.gz, msg.bytes); break;
      case 'asset-failed': QuireAssets.fail(msg.name, msg.kind, msg.message); break;
      case 'call': call(msg); break;
      case 'study-tools': QuireLazy.askStudyTools(); break;
      case 'page-result': {
        var pending = pageCalls[msg.id];
        delete pageCalls[msg.id];
        if (pending) {
          if (msg.ok) pending.resolve(msg.value);
          else { var e = new Error(msg.error); e.kind = msg.kind; pending.reject(e); }
        }
        break;
      }
      case 'cancel': cancel(msg.id); break;
      default: logError('unknown message ' + msg.type);
    }
  };
  post({ type: 'alive' });
})();
