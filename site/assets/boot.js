/* Boot, part 5 of 5: start the engine worker, feed it the bundle, make window.quire.
 *
 * One path for every way Quire is opened (http, file://, offline through the service
 * worker): assets arrive as classic scripts (boot-assets.js), and the engine is a blob:
 * worker built from engine.js.  The stages it reports are shown by boot-stages.js; calls
 * and their answers go through boot-calls.js, the one call pipeline.
 */
(function () {
  'use strict';
  var Boot = self.QuireBoot;  // boot-stages.js, boot-assets.js and boot-storage.js load first
  var tr = Boot.tr, B = Boot.B, $ = Boot.$, mode = Boot.mode, state = Boot.state, STAGES = Boot.STAGES, bytes = Boot.bytes;
  var fail = Boot.fail, progress = Boot.progress, setStage = Boot.setStage, badge = Boot.badge, renderFacts = Boot.renderFacts;
  var status = Boot.status, readyPromise = Boot.ready, loadAsset = Boot.loadAsset, decode = Boot.decode;
  var readyResolve = Boot.readyResolve, sklearnResolve = Boot.sklearnResolve, sklearnReject = Boot.sklearnReject;
  var Calls = Boot.calls, call = Calls.call;  // boot-calls.js

  /* ---------------- the engine worker ---------------- */

  var worker = null;
  var sent = {};

  var loading = {};
  function fetchAsset(name) {
    if (!loading[name]) loading[name] = loadAsset(name);
    return loading[name];
  }

  function send(name) {
    if (sent[name]) return;
    sent[name] = true;
    fetchAsset(name).then(function (asset) {
      if (B.assets[name].group !== 'lazy') bytes.done += B.assets[name].size;
      // Moved, not copied: each asset goes to the worker once (sent[name]) and the page keeps no copy.
      worker.postMessage({ type: 'asset', name: name, gz: asset.gz, bytes: asset.bytes }, [asset.bytes.buffer]);
      delete loading[name];
      progress();
    }, function (err) {
      worker.postMessage({ type: 'asset-failed', name: name, kind: err.kind, message: err.arg });
      if (B.assets[name].group !== 'lazy' || state.stage !== 'ready') fail(err.kind, err.arg);
    });
  }

  /* When something happened in the worker, on the page's clock (performance.now()). */
  function workerTime(msg) {
    return msg.at == null ? performance.now() : msg.at - performance.timeOrigin;
  }

  function onWorkerMessage(event) {
    var msg = event.data;
    if (Calls.receive(msg)) return;  // a call's answer or progress, engine news, the engine calling the page
    switch (msg.type) {
      case 'need': send(msg.name); break;
      case 'stage':
        if (msg.stage === 'sklearn-loading') { state.sklearn = 'loading'; renderFacts(); break; }
        if (msg.stage === 'sklearn') {
          state.sklearn = 'ready';
          state.sklearnVersion = msg.version;
          state.timings.sklearn = workerTime(msg);
          renderFacts();
          sklearnResolve(msg.version);
          break;
        }
        if (msg.stage === 'libraries') { state.timings.libraries = workerTime(msg); break; }
        setStage(msg.stage, workerTime(msg));
        if (msg.stage === 'ready') {
          confirmServer();
          state.versions = Object.assign({ pyodide: msg.pyodide }, msg.versions);
          badge('ready', tr('Engine ready'));
          renderFacts();
          state.library = msg.library;
          readyResolve(status());
        }
        break;
      case 'fatal':
        if (msg.kind) fail(msg.kind, msg.asset, msg.kind === 'unpack' ? msg.message + '\n' + (msg.detail || '') : msg.detail);
        else fail('engine', (STAGES[msg.stage] || { label: msg.stage }).label.replace('…', ''), msg.message + '\n' + (msg.detail || ''));
        break;
      case 'background-failed':
        state.sklearn = 'failed';
        console.warn('Quire: scikit-learn did not load:', msg.message);
        sklearnReject(new Error(msg.message));
        break;
      case 'log':
        if (msg.level === 'error') console.warn('Quire engine:', msg.text); else console.debug('Quire engine:', msg.text);
        break;
      case 'mark': state.marks[msg.name] = workerTime(msg); break;
      case 'alive': state.marks['worker-alive'] = performance.now(); break;
      case 'library-changed': announceChange(); break;
      default: console.warn('Quire: unknown message from the engine', msg);
    }
  }

  /* The engine refuses a model server on another computer until told the person confirmed it
   * in this tab (csp.js read that from this tab's history entry), and learns which servers the
   * page's CSP admits (another one needs a reload, which its status says).  Sent before any
   * other call can be, so no request races ahead of it. */
  function confirmServer() {
    var P = self.QuirePrivacy;
    if (!P) return;
    var failed = function (err) { console.warn('Quire: the engine was not told which model servers to use:', err.message); };
    if (P.confirmed.length) call('llmConfirm', [P.confirmed], { now: true }).catch(failed);
    call('llmAdmit', [P.origins], { now: true }).catch(failed);
    // Whether this bundle can make embeddings in the tab (embedder.js; not with --no-embedder).
    // Settings' "None (keywords only)" turns it off for this browser (localStorage quire.embed.tab).
    var chosen = true;
    try { chosen = localStorage.getItem('quire.embed.tab') !== 'off'; } catch (e) { /* no storage: the default */ }
    if (self.QuireEmbedder) call('tabEmbedder', [QuireEmbedder.available(), chosen], { now: true }).catch(failed);
  }

  function startEngine() {
    setStage('download');
    Object.keys(B.assets).forEach(function (n) { if (B.assets[n].group === 'boot') bytes.total += B.assets[n].size; });
    // The engine script first: the worker parses it while the page reads the boot assets.
    fetchAsset('engine.js').then(decode).then(function (blob) {
      state.marks['engine-script'] = performance.now();
      var url = URL.createObjectURL(blob);
      try {
        worker = new Worker(url, { name: 'quire-engine' });
      } catch (err) {
        fail('worker', err.message);
        return;
      }
      worker.onmessage = onWorkerMessage;
      Calls.attach(worker);
      worker.onerror = function (e) { fail('worker', e.message || 'the worker script failed to run'); };
      worker.postMessage({ type: 'init', config: {
        base: B.base, assets: B.assets, bootImages: B.bootImages, installerPackages: B.installerPackages,
        lazyPackages: B.lazyPackages, wheelImages: B.wheelImages, lazyWheels: B.lazyWheels,
        snapshot: B.snapshot, storageTorn: QuireStore.torn(), storagePending: QuireStore.pending(), logTears: QuireStore.logTears(),
        testHooks: Calls.testHooks } });
      // Until the page has judged whether the last session was cut short, the engine writes nothing.
      if (QuireStore.pending()) QuireStore.checked().then(function (torn) { worker.postMessage({ type: 'storage-judged', torn: torn }); });
      // Hand over every boot asset as it arrives rather than when Pyodide first asks for it:
      // first what Pyodide needs to start (the page decodes one script at a time), then the rest.
      var boot = Object.keys(B.assets).filter(function (n) { return B.assets[n].group === 'boot'; });
      var first = boot.filter(function (n) { return B.assets[n].first; });
      first.forEach(send);
      Promise.all(first.map(fetchAsset)).catch(function () {}).then(function () {
        boot.forEach(send);
      });
    }, function (err) { fail(err.kind || 'missing', err.arg || 'engine.js'); });
  }

  /* Leaving the page ends the engine, which frees the Web Locks its worker holds.  WebKit kept
   * a page it left (its back-forward cache) with the worker suspended in the middle of a write:
   * the library lock stayed held, and the next Quire page in that tab waited for it forever.
   * A write cut off this way is one aborted transaction, as when a tab is closed; a page brought
   * back from that cache has no engine, so it starts again. */
  addEventListener('pagehide', function () { if (worker) worker.terminate(); });
  addEventListener('pageshow', function (e) { if (e.persisted) location.reload(); });

  /* ---------------- other tabs ---------------- */

  /* This tab's engine saved a library change: tell the other Quire tabs, which reload.
   * Both a BroadcastChannel and a localStorage "storage" event carry it (either alone
   * may be missing: no BroadcastChannel in old Safari; the storage event needs
   * localStorage), and a tab coming back into view checks as well. */
  var CHANGED_KEY = 'quire.libraryChanged';
  var channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('quire.library') : null;
  var tabId = Math.random().toString(36).slice(2);

  function announceChange() {
    var note = { from: tabId, at: Date.now() };
    if (channel) channel.postMessage(note);
    try { localStorage.setItem(CHANGED_KEY, JSON.stringify(note)); } catch (e) { /* storage refused: the channel still works */ }
  }

  var reloading = null, again = false, failures = 0;
  function catchUp() {
    if (state.stage !== 'ready') return Promise.resolve();
    if (reloading) { again = true; return reloading; }  // a change that landed during this reload
    reloading = call('reloadLibrary').then(function (r) {
      reloading = null;
      failures = 0;
      if (again) { again = false; catchUp(); }
      if (r && r.reloaded) document.dispatchEvent(new CustomEvent('quire:library-changed', { detail: { from: 'another tab' } }));
      return r;
    }, function (err) {
      reloading = null;
      self.quire.lastCatchUpError = err.message;
      console.warn('Quire: could not load the changes of another tab:', err.message);
      // Nothing else would ask again until the next change: try again, a little later each time.
      if (++failures <= 5) setTimeout(catchUp, 1000 * failures);
    });
    return reloading;
  }

  if (channel) channel.onmessage = function (e) { if (e.data && e.data.from !== tabId) catchUp(); };
  self.addEventListener('storage', function (e) { if (e.key === CHANGED_KEY) catchUp(); });
  document.addEventListener('visibilitychange', function () { if (!document.hidden) catchUp(); });

  /* ---------------- the automation surface ---------------- */

  /* scipy and scikit-learn load only once asked (engine/worker-lazy.js, importStudyTools): reading
   * quire.sklearnReady asks, so a script that awaits it, as before, still gets them. */
  var studyToolsAsked = false;
  function askStudyTools() {
    if (!studyToolsAsked) {
      studyToolsAsked = true;
      readyPromise.then(function () { worker.postMessage({ type: 'study-tools' }); }, function () {});
    }
    return Boot.sklearnReady;
  }

  self.quire = {
    ready: readyPromise,
    status: status,
    // Resolves once the work a tab does by itself after ready is done: the services loaded and
    // every passage read into memory (not the study tools: they wait for quire.studyToolsReady()).
    backgroundDone: function () { return call('waitForLazy'); },
    // The call pipeline (boot-calls.js): what api*.js and the views call the engine through.
    _call: call,
    _cancel: Calls.cancel,
    _catchUp: catchUp,
    _errorDetail: Calls.errorDetail,
    _pageMethods: Calls.pageMethods,
    kv: { get: QuireStore.get, set: QuireStore.set },
    refreshStorage: Boot.refreshStorage,
    // Lazy features load their files the same way; resolves a Blob.
    loadAsset: function (name) { return loadAsset(name).then(decode); },
    // The same, as an ArrayBuffer checked against its sha256 (OCR, voice): boot-assets.js.
    loadChecked: Boot.loadChecked,
  };
  Object.defineProperty(self.quire, 'sklearnReady', { get: askStudyTools, enumerable: false });
  // A hook for tests only: any Python, in a page opened with ?test-hooks (boot-calls.js).
  if (Calls.testHooks) self.quire.run = function (source) { return call('run', [source]); };

  /* ---------------- go ---------------- */

  $('[data-testid="mode-status"]').textContent = mode === 'file' ? tr('Opened from disk') : tr('Served over http');
  if (!B) { fail('no-bundle'); return; }
  // Without csp.js the page would only have the broad first policy: refuse to run like that.
  if (!self.QUIRE_LLM_ORIGINS || !self.QuirePrivacy) { fail('missing', 'assets/csp.js'); return; }
  $('[data-testid="build-status"]').textContent = tr('Build {id}', { id: B.build });
  progress();
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') { fail('no-wasm'); return; }
  if (typeof Worker !== 'function') { fail('worker', 'Web Workers are unavailable'); return; }
  if (typeof DecompressionStream !== 'function') { fail('no-decompress'); return; }
  Boot.checkStorage();
  startEngine();
  // Precaching 40 MB would compete with the first boot: register once the engine is up.
  readyPromise.then(Boot.registerServiceWorker, function () {});
})();
