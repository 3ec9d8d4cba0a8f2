/* Boot, part 4 of 5: the call pipeline, the one way the page and the engine talk.
 *
 * A page call, end to end:
 *   quire.<name>(...)               api*.js: a public method, which calls quire._call
 *   call(method, args, opts)        this file: once ready, posts {type: 'call', id, method, argsJson, payload}
 *   engine/worker.js call(msg)      answers waitForLazy (and run, the test hook) itself; any other
 *                                   method under the writer lock if it writes
 *   quire.browser.dispatch(...)     py/quire/browser/__init__.py: METHODS[method](engine, ctx, *args),
 *                                   the services' METHODS tables (py/quire/services/*.py) merged
 * and back, as worker messages this file handles (receive):
 *   {type: 'result', id, ok, ...}   settles the call's promise; an engine error rejects it as an
 *                                   Error with its kind ("bug" or the Python class) and detail
 *   {type: 'event', id, event}      the call's own progress: opts.onEvent(event)
 *   {type: 'engine-event', event}   engine news not tied to a call (badges earned, a request the
 *                                   engine made): the document event 'quire:engine-<kind>'
 *                                   (kind's '_' as '-'), the event as its detail
 *   cancel(id)                      {type: 'cancel', id}: the engine method sees ctx.cancelled()
 * The engine calls the page too ({type: 'page-call'}: OCR draws on the page's canvas): a
 * function in pageMethods answers, as {type: 'page-result'}.
 *
 * Nothing wraps or replaces quire._call: a method that needs work before or after its engine
 * call does it in its own function, and a read that may share an answer says so (opts.share).
 *
 * The test hook: a page opened with ?test-hooks (over http or from file://) has quire.run(source),
 * which runs any Python in the engine (boot.js); a normal page has no such method, and its
 * engine does not know "run" either.
 */
(function () {
  'use strict';
  var Boot = self.QuireBoot;  // boot-stages.js: the ready promise
  var TEST_HOOKS = 'test-hooks';

  var worker = null;
  var nextId = 1;
  var calls = {};        // id -> {resolve, reject, onEvent}: calls on their way
  var pageMethods = {};  // what the engine may ask the page to do (api.js registers ocr)
  /* The technical detail (a traceback) of the last few engine errors, by their message: views
   * toast err.message, and the toast finds the detail here for its "Copy details" button. */
  var recentDetails = [];

  /* An engine error as a rejected Error: its kind ("bug", or the Python class of an expected
   * error) and detail travel with it; a bug is logged once, with its traceback. */
  function engineError(msg) {
    var err = new Error(msg.error);
    err.kind = msg.kind;
    if (msg.detail) {
      err.detail = msg.detail;
      recentDetails = recentDetails.filter(function (d) { return d.message !== msg.error; }).slice(-19);
      recentDetails.push({ message: msg.error, detail: msg.detail });
      if (msg.kind === 'bug') console.error('Quire engine bug: ' + msg.error + '\n' + msg.detail);
      else console.warn('Quire engine: ' + msg.error + '\n' + msg.detail);
    }
    return err;
  }

  function errorDetail(message) {
    for (var i = recentDetails.length - 1; i >= 0; i--) if (recentDetails[i].message === message) return recentDetails[i].detail;
    return null;
  }

  /* Reads that may share an answer (opts.share: the source list, the categories): the same
   * read asked again while one is on its way gets that one's answer.  Any other call, which
   * may change what they read, ends the sharing, and so does a change from another tab. */
  var shared = {};
  document.addEventListener('quire:library-changed', function () { shared = {}; });
  // Calls that read something else and change nothing the shared reads return: they keep the
  // sharing (a view asking for the model status or the embedding status at start-up would
  // otherwise make the next view read the source list again, at the same time).
  var READS = { embeddingStatus: 1, embedNext: 1, waitForLazy: 1, llmStatus: 1, llmSettings: 1, librarySettings: 1, studySets: 1,
    usage: 1, storageWatch: 1, search: 1, passage: 1, chunks: 1 };

  function post(id, method, args, opts) {
    return new Promise(function (resolve, reject) {
      calls[id] = { resolve: resolve, reject: reject, onEvent: opts.onEvent };
      worker.postMessage({ type: 'call', id: id, method: method, argsJson: JSON.stringify(args || []), payload: opts.payload },
        opts.payload ? [opts.payload.buffer] : []);
    });
  }

  /** call(method, args, {payload, onEvent, share, now}) -> a promise of the engine's answer, with
   * its call id as .id (for cancel).  payload: a Uint8Array moved to the engine (not copied);
   * now: sent at once rather than once the engine is ready (the worker holds it until it has
   * started), for what must reach the engine before any other call. */
  function call(method, args, opts) {
    opts = opts || {};
    var key = opts.share ? method + ' ' + JSON.stringify(args || []) : null;
    if (!key) { if (!READS[method]) shared = {}; }
    else if (shared[key]) return shared[key];
    var id = nextId++;
    var promise = opts.now ? post(id, method, args, opts)
      : Boot.ready.then(function () { return post(id, method, args, opts); });
    promise.id = id;
    if (key) {
      var mine = shared, done = function () { if (mine[key] === promise) delete mine[key]; };
      mine[key] = promise;
      promise.then(done, done);
    }
    return promise;
  }

  function cancel(id) {
    if (worker) worker.postMessage({ type: 'cancel', id: id });
  }

  /* A worker message about calls: true when it was one (boot.js handles the rest). */
  function receive(msg) {
    switch (msg.type) {
      case 'result': {
        var c = calls[msg.id];
        delete calls[msg.id];
        if (c) {
          if (msg.ok) c.resolve(msg.value);
          else c.reject(engineError(msg));
        }
        return true;
      }
      case 'event': {
        var target = calls[msg.id];
        if (target && target.onEvent) {
          try { target.onEvent(JSON.parse(msg.event)); } catch (err) { console.warn('Quire: progress handler failed', err); }
        }
        return true;
      }
      case 'engine-event': {
        var news = JSON.parse(msg.event);
        document.dispatchEvent(new CustomEvent('quire:engine-' + String(news.kind).replace(/_/g, '-'), { detail: news }));
        return true;
      }
      case 'page-call': {
        var fn = pageMethods[msg.method];
        Promise.resolve().then(function () {
          if (!fn) throw new Error('the page has no method ' + msg.method);
          return fn(msg.args);
        }).then(function (value) { worker.postMessage({ type: 'page-result', id: msg.id, ok: true, value: value }); },
          function (err) { worker.postMessage({ type: 'page-result', id: msg.id, ok: false, error: String(err && err.message || err), kind: err && err.kind }); });
        return true;
      }
      default:
        return false;
    }
  }

  Boot.calls = {
    /* boot.js: the engine worker has started; calls go to it. */
    attach: function (w) { worker = w; },
    receive: receive,
    call: call,
    cancel: cancel,
    errorDetail: errorDetail,
    pageMethods: pageMethods,
    /* Was this page opened with ?test-hooks?  Then boot.js adds quire.run. */
    testHooks: new URLSearchParams(location.search).has(TEST_HOOKS),
  };
})();
