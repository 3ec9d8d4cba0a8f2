/* Boot, part 1 of 5: what the person sees while Quire starts, and the error that stops it.
 *
 * The stage list with its progress bar, the engine badge, the error box (a message a
 * person can act on), the Engine facts on About, and the ready promises every later
 * script waits on.  Shared with boot-assets.js, boot-storage.js, boot-calls.js and boot.js through
 * self.QuireBoot (classic scripts: file:// pages have no ES modules).
 */
(function () {
  'use strict';
  var T0 = performance.now();
  var tr = QuireI18n.t;  // assets/i18n.js loads first
  var B = self.QUIRE_BUNDLE;
  var $ = function (sel) { return document.querySelector(sel); };
  var mode = location.protocol === 'file:' ? 'file' : 'http';

  var state = {
    stage: 'shell', error: null, build: B && B.build, version: B && B.version, pyodide: B && B.pyodide,
    versions: null, sklearn: 'pending', sklearnVersion: null, mode: mode, serviceWorker: 'none',
    storage: { usage: null, quota: null, persisted: null }, timings: { shell: T0 }, marks: {},
  };

  var STAGES = {
    shell: { label: tr('Loading the page…'), at: 0 },
    download: { label: tr('Loading the engine files…'), at: 2 },
    pyodide: { label: tr('Starting Python (Pyodide)…'), at: 55 },
    numpy: { label: tr('Loading numpy…'), at: 75 },
    wheels: { label: tr('Installing Quire’s libraries…'), at: 86 },
    quire: { label: tr('Starting Quire…'), at: 94 },
    ready: { label: tr('Ready.'), at: 100 },
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
    'no-decompress': ['This browser is too old for Quire',
      'Quire’s files are compressed, and this browser cannot unpack them (it has no DecompressionStream: Chrome and Edge 80, Firefox 113 and Safari 16.4 were the first to have it). Update the browser, or use a current Chrome, Edge, Firefox or Safari.'],
    unpack: ['This browser could not unpack part of Quire',
      'The file %s is intact, but this browser failed to unpack it. Update the browser, or open Quire in a current Chrome, Edge, Firefox or Safari; the technical detail below says what the browser reported.'],
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
    state.error = { kind: kind, title: tr(m[0]), message: tr(m[1]).replace('%s', arg || ''), detail: detail || '' };
    state.stage = 'failed';
    var box = $('[data-testid="boot-error"]');
    box.querySelector('.boot-error-title').textContent = state.error.title;
    box.querySelector('.boot-error-text').textContent = state.error.message;
    box.querySelector('.boot-error-detail').textContent = state.error.detail || tr('(none)');
    box.hidden = false;
    $('[data-testid="boot-panel"]').hidden = false;  // a failure after ready must show too
    $('[data-testid="boot-stage"]').textContent = wasReady ? tr('Quire stopped working.') : tr('Quire could not start.');
    badge('failed', tr('Not running'));
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
      label += ' ' + tr('{done} of {total} MB', { done: (bytes.done / 1e6).toFixed(1), total: (bytes.total / 1e6).toFixed(1) });
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

  /* ---------------- facts panel ---------------- */

  function renderFacts() {
    var v = state.versions || {};
    var rows = [
      ['Quire', state.version + ' (' + tr('build {id}', { id: state.build }) + ')'],
      ['Python', tr('{python} in Pyodide {pyodide}', { python: v.python || '?', pyodide: v.pyodide || state.pyodide })],
      ['numpy', v.numpy || '?'],
      [tr('Dense search'), v.dense_kernel === 'wasm-simd' ? tr('WebAssembly SIMD kernel') : v.dense_kernel ? 'numpy' : '?'],
      ['scikit-learn', state.sklearnVersion || tr(state.sklearn === 'pending' ? 'loads when Study is opened' : state.sklearn)],
      [tr('Opened'), mode === 'file' ? tr('from disk (file://)') : tr('over http') + (navigator.serviceWorker && navigator.serviceWorker.controller ? ', ' + tr('offline-ready') : '')],
      [tr('Engine ready in'), state.timings.ready ? ((state.timings.ready - T0) / 1000).toFixed(2) + ' s' : '…'],
    ].concat(capabilities().map(function (c) { return [c[0], c[1]]; }));
    var dl = $('[data-testid="engine-facts"]');
    dl.textContent = '';
    rows.forEach(function (r) {
      var dt = document.createElement('dt'); dt.textContent = r[0];
      var dd = document.createElement('dd'); dd.textContent = r[1];
      dl.appendChild(dt); dl.appendChild(dd);
    });
  }

  /* What this browser offers Quire, found by trying each feature (never by its name), and
   * what follows where one is missing: [label, what it means here, present]. */
  function capabilities() {
    var st = navigator.storage || {};
    return [
      [tr('Offline copy'), mode === 'file' ? tr('not from disk: no browser gives a page opened from disk a service worker; serve it over http once for that')
        : state.serviceWorker === 'no-room' ? tr('not kept: this browser has less room for this site than the copy needs (free space on the disk and reload)')
        : 'serviceWorker' in navigator ? tr('available') : tr('unavailable: this browser has no service workers, so Quire needs its server each time'),
       mode !== 'file' && 'serviceWorker' in navigator && state.serviceWorker !== 'no-room'],
      [tr('Storage figure'), st.estimate ? tr('available') : tr('unavailable: this browser does not report how much storage Quire uses'), !!st.estimate],
      [tr('Persistent storage'), st.persist ? tr('can be asked for') : tr('cannot be asked for here: the browser decides when to clear it (export a vault to keep a copy)'), !!st.persist],
      [tr('One tab writes at a time'), navigator.locks ? tr('yes (Web Locks)')
        : self.indexedDB ? tr('yes (a lease in IndexedDB, as this browser has no Web Locks): a tab closed while it writes holds the others back for up to 30 s')
        : tr('within this tab only: this browser has no Web Locks, so keep Quire open in one tab'), !!(navigator.locks || self.indexedDB)],
      [tr('Full-disk check before large writes'), st.getDirectory ? tr('available') : tr('unavailable: no origin private file system here, so a full disk is noticed when a write fails'), !!st.getDirectory],
    ];
  }

  /* ---------------- the ready promises ---------------- */

  var readyResolve, readyReject, sklearnResolve, sklearnReject;
  var readyPromise = new Promise(function (res, rej) { readyResolve = res; readyReject = rej; });
  var sklearnPromise = new Promise(function (res, rej) { sklearnResolve = res; sklearnReject = rej; });
  readyPromise.catch(function () {});
  sklearnPromise.catch(function () {});

  function status() {
    return JSON.parse(JSON.stringify(state));
  }

  self.QuireBoot = {
    T0: T0, tr: tr, B: B, $: $, mode: mode, state: state, STAGES: STAGES, bytes: bytes,
    fail: fail, progress: progress, capabilities: capabilities, setStage: setStage, badge: badge, renderFacts: renderFacts, status: status,
    ready: readyPromise, readyResolve: readyResolve,
    sklearnReady: sklearnPromise, sklearnResolve: sklearnResolve, sklearnReject: sklearnReject,
  };
})();
