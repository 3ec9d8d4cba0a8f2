/* Boot: paint at once, start the engine worker, feed it the bundle, report every stage.
 *
 * One path for every way Quire is opened (http, file://, offline through the service
 * worker): assets arrive as classic scripts (assets/pack/*.js) that hand their base64 to
 * self.__quirePack, and the engine is a blob: worker built from engine.js.
 */
(function () {
  'use strict';
  var T0 = performance.now();
  var B = self.QUIRE_BUNDLE;
  var $ = function (sel) { return document.querySelector(sel); };
  var mode = location.protocol === 'file:' ? 'file' : 'http';

  var state = {
    stage: 'shell', error: null, build: B && B.build, version: B && B.version, pyodide: B && B.pyodide,
    versions: null, sklearn: 'pending', sklearnVersion: null, mode: mode, serviceWorker: 'none',
    storage: { usage: null, quota: null, persisted: null }, timings: { shell: T0 }, marks: {},
  };

  var STAGES = {
    shell: { label: 'Loading the page…', at: 0 },
    download: { label: 'Loading the engine files…', at: 2 },
    pyodide: { label: 'Starting Python (Pyodide)…', at: 55 },
    numpy: { label: 'Loading numpy…', at: 75 },
    wheels: { label: "Installing Quire's libraries…", at: 86 },
    quire: { label: 'Starting Quire…', at: 94 },
    ready: { label: 'Ready.', at: 100 },
  };

  /* ---------------- errors a person can act on ---------------- */

  var MESSAGES = {
    'no-wasm': ['This browser cannot run Quire’s engine',
      'Quire runs Python compiled to WebAssembly, and WebAssembly is not available here. Use a current Chrome, Edge, Firefox or Safari, and check that WebAssembly is not switched off by a policy or a hardened mode (such as Edge’s enhanced security or Safari’s Lockdown Mode).'],
    'no-bundle': ['Part of Quire is missing',
      'assets/bundle.js did not load, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'],
    missing: ['Part of Quire is missing',
      'The file %s could not be loaded, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'],
    damaged: ['Part of Quire is damaged',
      '%s does not match its checksum. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'],
    storage: ['This browser refused local storage',
      'Quire keeps your library in this browser’s storage (IndexedDB), and the browser refused it (%s). Leave private or incognito mode, or allow site data for this page, then reload.'],
    worker: ['The browser would not start Quire’s engine',
      'Starting the engine worker failed (%s). Quire needs Web Workers; check that no extension or policy blocks them, then reload.'],
    engine: ['Quire’s engine stopped while starting',
      'It failed at the stage “%s”. Reload the page; if it happens again, rebuild with “python3 build.py” and copy dist/ again.'],
  };

  function fail(kind, arg, detail) {
    if (state.error) return;
    var wasReady = state.stage === 'ready';
    var m = MESSAGES[kind] || MESSAGES.engine;
    state.error = { kind: kind, title: m[0], message: m[1].replace('%s', arg || ''), detail: detail || '' };
    state.stage = 'failed';
    var box = $('[data-testid="boot-error"]');
    box.querySelector('.boot-error-title').textContent = state.error.title;
    box.querySelector('.boot-error-text').textContent = state.error.message;
    box.querySelector('.boot-error-detail').textContent = state.error.detail || '(none)';
    box.hidden = false;
    $('[data-testid="boot-panel"]').hidden = false;  // a failure after ready must show too
    $('[data-testid="boot-stage"]').textContent = wasReady ? 'Quire stopped working.' : 'Quire could not start.';
    badge('failed', 'Not running');
    document.documentElement.dataset.quireStage = 'failed';
    readyReject(new Error(state.error.title + ': ' + state.error.message));
  }

  /* ---------------- progress ---------------- */

  var bytes = { total: 0, done: 0 };
  function progress() {
    var s = STAGES[state.stage] || STAGES.shell;
    var dl = bytes.total ? bytes.done / bytes.total : 0;
    var pct = Math.max(s.at, Math.round(dl * STAGES.pyodide.at));
    var bar = $('[data-testid="boot-progress"]');
    bar.setAttribute('aria-valuenow', String(pct));
    bar.querySelector('.progress-fill').style.width = pct + '%';
    var label = s.label;
    if (state.stage === 'download' || (dl < 1 && state.stage === 'pyodide')) {
      label += ' ' + (bytes.done / 1e6).toFixed(1) + ' of ' + (bytes.total / 1e6).toFixed(1) + ' MB';
    }
    $('[data-testid="boot-stage"]').textContent = label;
  }

  function setStage(name, t) {
    if (state.error) return;
    state.stage = name;
    state.timings[name] = t == null ? performance.now() : t;
    document.documentElement.dataset.quireStage = name;
    progress();
  }

  function badge(kind, text) {
    var el = $('[data-testid="engine-badge"]');
    el.dataset.state = kind;
    el.textContent = text;
  }

  /* ---------------- assets as classic scripts ---------------- */

  /* Each pack script is UTF-16 and calls __quirePack(name, gz, size, units): every
   * character of `units` carries 15 bits of the payload, most significant first
   * (build.py's encode15).  Decoding here lets the bytes travel to the worker without a copy. */
  var arrivals = {};
  self.__quirePack = function (name, gz, size, units) {
    var waiter = arrivals[name];
    if (!waiter) return;
    delete arrivals[name];
    try {
      waiter.resolve({ gz: !!gz, bytes: decode15(units, size) });
    } catch (err) {
      waiter.reject({ kind: 'damaged', arg: B.assets[name].src });
    }
  };

  function decode15(units, size) {
    var out = new Uint8Array(size + 2);
    var acc = 0, bits = 0, j = 0;
    for (var i = 0; i < units.length && j < size; i++) {
      acc = ((acc << 15) | (units.charCodeAt(i) - 0x1000)) & 0x3fffff;  // at most 7 + 15 live bits
      bits += 15;
      while (bits >= 8) { bits -= 8; out[j++] = acc >>> bits; }
    }
    if (j < size) throw new Error('pack is shorter than its size');
    return out.subarray(0, size);
  }

  function loadAsset(name) {
    var info = B.assets[name];
    if (!info) return Promise.reject({ kind: 'missing', arg: name });
    return new Promise(function (resolve, reject) {
      arrivals[name] = { resolve: resolve, reject: reject };
      var s = document.createElement('script');
      s.src = info.src;
      s.async = true;
      s.onload = function () {
        s.remove();
        if (arrivals[name]) { delete arrivals[name]; reject({ kind: 'damaged', arg: info.src }); }
      };
      s.onerror = function () { s.remove(); delete arrivals[name]; reject({ kind: 'missing', arg: info.src }); };
      document.head.appendChild(s);
    });
  }

  /* The asset as a Blob, gunzipped: for the page's own uses (engine.js, OCR). */
  function decode(asset) {
    var blob = new Blob([asset.bytes]);
    if (!asset.gz) return Promise.resolve(blob);
    return new Response(blob.stream().pipeThrough(new DecompressionStream('gzip'))).blob();
  }

  /* ---------------- the engine worker ---------------- */

  var worker = null;
  var calls = {};
  var pageMethods = {};  // what the engine may ask the page to do: see quire._pageMethods
  var nextId = 1;
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
    switch (msg.type) {
      case 'need': send(msg.name); break;
      case 'stage':
        if (msg.stage === 'sklearn-loading') { state.sklearn = 'loading'; break; }
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
          badge('ready', 'Engine ready');
          renderFacts();
          state.library = msg.library;
          readyResolve(status());
        }
        break;
      case 'fatal':
        if (msg.kind) fail(msg.kind, msg.asset, msg.detail);
        else fail('engine', (STAGES[msg.stage] || { label: msg.stage }).label.replace('…', ''), msg.message + '\n' + (msg.detail || ''));
        break;
      case 'background-failed':
        state.sklearn = 'failed';
        console.warn('Quire: scikit-learn did not load:', msg.message);
        sklearnReject(new Error(msg.message));
        break;
      case 'result': {
        var c = calls[msg.id];
        delete calls[msg.id];
        if (c) {
          if (msg.ok) c.resolve(msg.value);
          else { var err = new Error(msg.error); err.kind = msg.kind; c.reject(err); }
        }
        break;
      }
      case 'event': {
        var target = calls[msg.id];
        if (target && target.onEvent) {
          try { target.onEvent(JSON.parse(msg.event)); } catch (err) { console.warn('Quire: progress handler failed', err); }
        }
        break;
      }
      case 'log':
        if (msg.level === 'error') console.warn('Quire engine:', msg.text); else console.debug('Quire engine:', msg.text);
        break;
      case 'mark': state.marks[msg.name] = workerTime(msg); break;
      case 'net': document.dispatchEvent(new CustomEvent('quire:engine-request', { detail: { method: msg.method, url: msg.url } })); break;
      case 'page-call': {
        var fn = pageMethods[msg.method];
        Promise.resolve().then(function () {
          if (!fn) throw new Error('the page has no method ' + msg.method);
          return fn(msg.args);
        }).then(function (value) { worker.postMessage({ type: 'page-result', id: msg.id, ok: true, value: value }); },
          function (err) { worker.postMessage({ type: 'page-result', id: msg.id, ok: false, error: String(err && err.message || err), kind: err && err.kind }); });
        break;
      }
      case 'alive': state.marks['worker-alive'] = performance.now(); break;
      case 'library-changed': announceChange(); break;
      default: console.warn('Quire: unknown message from the engine', msg);
    }
  }

  /* The engine refuses a model server on another computer until told the person confirmed it
   * in this tab (csp.js read that from this tab's history entry).  Sent before any other call
   * can be, so no request races ahead of it. */
  function confirmServer() {
    var origin = self.QuirePrivacy && QuirePrivacy.confirmed;
    if (!origin) return;
    worker.postMessage({ type: 'call', id: nextId++, method: 'py', name: 'llmConfirm', argsJson: JSON.stringify([[origin]]) });
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
      worker.onerror = function (e) { fail('worker', e.message || 'the worker script failed to run'); };
      worker.postMessage({ type: 'init', config: {
        base: B.base, assets: B.assets, bootImages: B.bootImages, installerPackages: B.installerPackages,
        lazyPackages: B.lazyPackages, wheelImages: B.wheelImages, lazyWheels: B.lazyWheels,
        snapshot: B.snapshot } });
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

  /* Call the engine.  "run" evaluates Python source; anything else is a quire.browser method
   * whose progress events reach opts.onEvent.  The returned promise carries its call id. */
  function call(method, args, opts) {
    opts = opts || {};
    var id = nextId++;
    var promise = readyPromise.then(function () {
      return new Promise(function (resolve, reject) {
        calls[id] = { resolve: resolve, reject: reject, onEvent: opts.onEvent };
        var msg = method === 'run'
          ? { type: 'call', id: id, method: 'run', args: args || [] }
          : { type: 'call', id: id, method: 'py', name: method, argsJson: JSON.stringify(args || []), payload: opts.payload };
        worker.postMessage(msg, opts.payload ? [opts.payload.buffer] : []);
      });
    });
    promise.id = id;
    return promise;
  }

  function cancel(id) {
    if (worker) worker.postMessage({ type: 'cancel', id: id });
  }

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

  var reloading = null, again = false;
  function catchUp() {
    if (state.stage !== 'ready') return Promise.resolve();
    if (reloading) { again = true; return reloading; }  // a change that landed during this reload
    reloading = call('reloadLibrary').then(function (r) {
      reloading = null;
      if (again) { again = false; catchUp(); }
      if (r && r.reloaded) document.dispatchEvent(new CustomEvent('quire:library-changed', { detail: { from: 'another tab' } }));
      return r;
    }, function (err) {
      reloading = null;
      console.warn('Quire: could not load the changes of another tab:', err.message);
    });
    return reloading;
  }

  if (channel) channel.onmessage = function (e) { if (e.data && e.data.from !== tabId) catchUp(); };
  self.addEventListener('storage', function (e) { if (e.key === CHANGED_KEY) catchUp(); });
  document.addEventListener('visibilitychange', function () { if (!document.hidden) catchUp(); });

  /* ---------------- storage ---------------- */

  function withTimeout(promise, ms, fallback) {
    return Promise.race([promise, new Promise(function (resolve) { setTimeout(function () { resolve(fallback); }, ms); })]);
  }

  function checkStorage() {
    return QuireStore.main().then(function () {
      var s = navigator.storage;
      if (!s) return;
      // persist() never settles in some Firefox versions: do not wait for it forever.
      var persisted = s.persisted ? withTimeout(s.persisted(), 2000, null) : Promise.resolve(null);
      return persisted.then(function (already) {
        return already || !s.persist ? already : withTimeout(s.persist(), 3000, null);
      }).then(function (p) { state.storage.persisted = p; return refreshStorage(); });
    }, function (err) { fail('storage', (err && (err.name + ': ' + err.message)) || 'unknown error'); });
  }

  function refreshStorage() {
    if (!navigator.storage || !navigator.storage.estimate) {
      $('[data-testid="storage-status"]').textContent = 'Storage: size unknown in this browser';
      return Promise.resolve();
    }
    return navigator.storage.estimate().then(function (e) {
      state.storage.usage = e.usage;
      state.storage.quota = e.quota;
      var free = e.quota - e.usage;
      $('[data-testid="storage-status"]').textContent = 'Storage: ' + human(e.usage) + ' used, ' + human(free) + ' available' +
        (state.storage.persisted ? ' · kept persistently' : state.storage.persisted === false ? ' · may be cleared by the browser when space is short' : '');
    });
  }

  function human(n) {
    if (n == null) return '?';
    var units = ['B', 'KB', 'MB', 'GB', 'TB'];
    var i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    return (i ? n.toFixed(1) : String(n)) + ' ' + units[i];
  }

  /* ---------------- service worker: offline and updates ---------------- */

  function registerServiceWorker() {
    if (mode !== 'http' || !('serviceWorker' in navigator)) return;
    var sw = navigator.serviceWorker;
    var reloading = false;
    sw.addEventListener('controllerchange', function () {
      if (reloading) location.reload();
    });
    sw.register('sw.js').then(function (reg) {
      state.serviceWorker = sw.controller ? 'controlling' : 'installing';
      var offer = function (waiting) {
        if (!waiting || !sw.controller) return;
        var banner = $('[data-testid="update-banner"]');
        banner.hidden = false;
        $('[data-testid="update-reload"]').onclick = function () {
          reloading = true;
          waiting.postMessage({ type: 'skip-waiting' });
        };
        state.serviceWorker = 'update-ready';
      };
      offer(reg.waiting);
      reg.addEventListener('updatefound', function () {
        var next = reg.installing;
        next.addEventListener('statechange', function () { if (next.state === 'installed') offer(next); });
      });
      sw.ready.then(function () { if (state.serviceWorker === 'installing') state.serviceWorker = 'ready'; });
    }, function (err) {
      state.serviceWorker = 'failed';
      console.warn('Quire: offline support unavailable:', err.message);
    });
  }

  /* ---------------- facts panel ---------------- */

  function renderFacts() {
    var v = state.versions || {};
    var rows = [
      ['Quire', state.version + ' (build ' + state.build + ')'],
      ['Python', (v.python || '?') + ' in Pyodide ' + (v.pyodide || state.pyodide)],
      ['numpy', v.numpy || '?'],
      ['Dense search', v.dense_kernel === 'wasm-simd' ? 'WebAssembly SIMD kernel' : v.dense_kernel ? 'numpy' : '?'],
      ['scikit-learn', state.sklearnVersion || state.sklearn],
      ['Opened', mode === 'file' ? 'from disk (file://)' : 'over http' + (navigator.serviceWorker && navigator.serviceWorker.controller ? ', offline-ready' : '')],
      ['Engine ready in', state.timings.ready ? ((state.timings.ready - T0) / 1000).toFixed(2) + ' s' : '…'],
    ];
    var dl = $('[data-testid="engine-facts"]');
    dl.textContent = '';
    rows.forEach(function (r) {
      var dt = document.createElement('dt'); dt.textContent = r[0];
      var dd = document.createElement('dd'); dd.textContent = r[1];
      dl.appendChild(dt); dl.appendChild(dd);
    });
  }

  /* ---------------- the automation surface ---------------- */

  var readyResolve, readyReject, sklearnResolve, sklearnReject;
  var readyPromise = new Promise(function (res, rej) { readyResolve = res; readyReject = rej; });
  var sklearnPromise = new Promise(function (res, rej) { sklearnResolve = res; sklearnReject = rej; });
  readyPromise.catch(function () {});
  sklearnPromise.catch(function () {});

  function status() {
    return JSON.parse(JSON.stringify(state));
  }

  self.quire = {
    ready: readyPromise,
    sklearnReady: sklearnPromise,
    status: status,
    run: function (source) { return call('run', [source]); },
    _call: call,
    _cancel: cancel,
    _catchUp: catchUp,
    _pageMethods: pageMethods,
    kv: { get: QuireStore.get, set: QuireStore.set },
    refreshStorage: refreshStorage,
    // Lazy features (OCR, assets/ocr.js) load their files the same way; resolves a Blob.
    loadAsset: function (name) { return loadAsset(name).then(decode); },
  };

  /* ---------------- go ---------------- */

  $('[data-testid="mode-status"]').textContent = mode === 'file' ? 'Opened from disk' : 'Served over http';
  if (!B) { fail('no-bundle'); return; }
  // Without csp.js the page would only have the broad first policy: refuse to run like that.
  if (!self.QUIRE_LLM_ORIGINS || !self.QuirePrivacy) { fail('missing', 'assets/csp.js'); return; }
  $('[data-testid="build-status"]').textContent = 'Build ' + B.build;
  progress();
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') { fail('no-wasm'); return; }
  if (typeof Worker !== 'function') { fail('worker', 'Web Workers are unavailable'); return; }
  checkStorage();
  startEngine();
  // Precaching 40 MB would compete with the first boot: register once the engine is up.
  readyPromise.then(registerServiceWorker, function () {});
})();
