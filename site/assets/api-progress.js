/* Progress, privacy and the vault on window.quire, plus the page's live network log.
 *
 *   quire.progress()                 -> dashboard + badges (days in this browser's time zone)
 *   quire.recordProgress(event)      -> {recorded, awarded}; never rejects for a bad event
 *   quire.privacy()                  -> inventory rows (IndexedDB and localStorage) with sizes
 *   quire.networkLog()               -> every request this page made since it opened
 *   quire.exportVault()              -> File (a zip: versioned, checksummed)
 *   quire.importVault(blob, {mode})  -> summary; mode 'merge' (default) or 'replace'
 *
 * Newly earned badges are announced as a 'quire:badges' document event, each once: the engine
 * says when it stores one (its event 'badges_earned', boot-calls.js), whatever call earned it. */
(function () {
  'use strict';
  var q = self.quire;
  var T0 = Date.now() - performance.now();

  function tz() { return -new Date().getTimezoneOffset(); }
  function fire(name, detail) { document.dispatchEvent(new CustomEvent(name, { detail: detail })); }

  /* ---------------- the network log ---------------- */

  var net = [];
  var seen = {};

  function llmOrigins() {  // the chat server and the embedding server
    return ['quire.llm.url', 'quire.llm.embed_url'].map(function (k) {
      try { return new URL(localStorage.getItem(k) || localStorage.getItem('quire.llm.url') || 'http://127.0.0.1:11434').origin; } catch (e) { return null; }
    });
  }

  /* bundle: this page's own files; llm: the configured model servers; loopback: another local port; other: anything else */
  function classify(url) {
    if (/^(blob|data):/.test(url)) return 'in-page';
    var u;
    try { u = new URL(url, location.href); } catch (e) { return 'other'; }
    if (u.protocol === 'file:' || (location.protocol !== 'file:' && u.origin === location.origin)) return 'bundle';
    if (llmOrigins().indexOf(u.origin) >= 0) return 'llm';
    if (/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(u.hostname)) return 'loopback';
    return 'other';
  }

  function add(entry) {
    var key = entry.from + ' ' + entry.method + ' ' + entry.url + ' ' + Math.round(entry.time);
    if (seen[key]) return;
    seen[key] = true;
    entry.kind = classify(entry.url);
    entry.at = new Date(T0 + entry.time).toISOString();
    net.push(entry);
    fire('quire:network', entry);
  }

  function fromTiming(e) {
    add({ from: 'page', method: 'GET', url: e.name, type: e.initiatorType || e.entryType, time: e.startTime,
      bytes: e.transferSize || e.encodedBodySize || 0, ms: Math.round(e.duration) });
  }

  try { performance.setResourceTimingBufferSize(10000); } catch (e) { /* old browsers: the observer still sees new ones */ }
  performance.getEntriesByType('navigation').forEach(fromTiming);
  performance.getEntriesByType('resource').forEach(fromTiming);
  if (self.PerformanceObserver) {
    try {
      new PerformanceObserver(function (list) { list.getEntries().forEach(fromTiming); })
        .observe({ type: 'resource', buffered: true });
    } catch (e) { console.warn('Quire: no live resource timing in this browser', e); }
  }
  // The engine worker's own requests (the model server): quire/browser/fetch.py reports each one
  // as engine news (boot-calls.js), because the page cannot see a worker's resource timings itself.
  document.addEventListener('quire:engine-request', function (e) {
    var d = e.detail || {};
    if (d.url) add({ from: 'engine', method: d.method || 'GET', url: String(d.url), type: 'fetch', time: performance.now(), bytes: 0, ms: null });
  });
  // Anything the privacy lock (CSP) stopped is listed too: it proves the lock works.
  document.addEventListener('securitypolicyviolation', function (e) {
    if (/connect|img|script|frame|font|media/.test(e.effectiveDirective || '')) {
      add({ from: 'page', method: 'blocked', url: e.blockedURI || '(inline)', type: 'blocked by ' + e.effectiveDirective, time: performance.now(), bytes: 0, ms: null });
    }
  });

  q.networkLog = function () {
    return net.slice().sort(function (a, b) { return a.time - b.time; }).map(function (e) { return Object.assign({}, e); });
  };

  /* ---------------- progress ---------------- */

  // Badges the engine stored (after an action, a Train, an import...), as it stores them.
  var announced = {};
  document.addEventListener('quire:engine-badges-earned', function (e) {
    var fresh = (e.detail.badges || []).filter(function (b) { var seenBefore = announced[b.code]; announced[b.code] = true; return !seenBefore; });
    if (fresh.length) fire('quire:badges', fresh);
  });

  q.progress = function () { return q._call('progress', [tz()]); };

  /** recordProgress({kind, scoped, sources, correct?, rating?, t?}) -> {recorded, awarded, error?} */
  q.recordProgress = function (event) {
    return q._call('recordProgress', [event, tz()]).then(null,
      function (err) { console.warn('Quire: progress not recorded', err); return { recorded: false, awarded: [], error: err.message }; });
  };

  /* ---------------- privacy ---------------- */

  function localRows() {
    var keys = Object.keys(localStorage).filter(function (k) { return k.indexOf('quire.') === 0; }).sort();
    return keys.map(function (k) {
      var v = localStorage.getItem(k) || '';
      return { key: k, bytes: (k.length + v.length) * 2, value: k === 'quire.llm.url' ? v : (v.length > 40 ? v.slice(0, 40) + '…' : v) };
    });
  }

  /** privacy() -> {rows, total, local: [{key, bytes}], estimate: {usage, quota}, network: [...]} */
  /* What Quire keeps in the origin private file system: the room probe's file (store-seal.js), empty
   * but for the moment of a check.  [{name, bytes}], [] where there is no such file system. */
  function fileSystemRows() {
    var s = navigator.storage;
    if (!s || !s.getDirectory) return Promise.resolve([]);
    return s.getDirectory().then(function (dir) {
      var out = [];
      var it = dir.entries();
      function next() {
        return it.next().then(function (step) {
          if (step.done) return out;
          if (step.value[1].kind !== 'file') return next();
          return step.value[1].getFile().then(function (f) { out.push({ name: step.value[0], bytes: f.size }); return next(); });
        });
      }
      return next();
    }).catch(function () { return []; });
  }

  q.privacy = function () {
    var estimate = navigator.storage && navigator.storage.estimate ? navigator.storage.estimate() : Promise.resolve({});
    return Promise.all([q._call('privacy'), estimate.catch(function () { return {}; }), fileSystemRows(),
      QuireStore.marks().catch(function () { return []; })]).then(function (r) {
      var p = r[0];
      if (r[3].length) {
        var markBytes = r[3].reduce(function (n, m) { return n + m.bytes; }, 0);
        p.rows.push({ bucket: 'open_tabs', what: 'Open-tab marks', holds: 'one small key per open Quire tab, so that a browser that was killed is noticed at the next start and the storage is made safe before anything is written',
          count: r[3].length, bytes: markBytes, size: QuireUI.bytes(markBytes), where: 'quire.main / kv / ' + r[3].map(function (m) { return m.key; }).join(', ') });
        p.total.count += r[3].length;
        p.total.bytes += markBytes;
      }
      if (r[2].length) {
        var fsBytes = r[2].reduce(function (n, f) { return n + f.bytes; }, 0);
        p.rows.push({ bucket: 'room_probe', what: 'Free-space check', holds: 'an empty file that Quire writes into for a moment, to see whether a large write will fit',
          count: r[2].length, bytes: fsBytes, size: QuireUI.bytes(fsBytes),
          where: 'origin file system / ' + r[2].map(function (f) { return f.name; }).join(', ') });
        p.total.count += r[2].length;
        p.total.bytes += fsBytes;
      }
      var local = localRows();
      var localBytes = local.reduce(function (s, x) { return s + x.bytes; }, 0);
      p.rows.push({ bucket: 'page_settings', what: 'Page settings', holds: 'the model server address and a few switches, read before the engine starts',
        count: local.length, bytes: localBytes, size: QuireUI.bytes(localBytes), where: 'localStorage / ' + (local.map(function (x) { return x.key; }).join(', ') || 'no keys') });
      p.total.count += local.length;
      p.total.bytes += localBytes;
      p.local = local;
      p.estimate = { usage: r[1].usage == null ? null : r[1].usage, quota: r[1].quota == null ? null : r[1].quota };
      p.network = q.networkLog();
      return p;
    });
  };

  /* ---------------- the vault ---------------- */

  /* The page's settings for a vault: its quire.* keys, but not the ones that only record this
   * browser's state (open tabs, a torn storage log, the last library change). */
  var STATE_KEY = /^quire\.(session\.|storageTorn$|libraryChanged$)/;
  function pageSettings() {
    var out = {};
    Object.keys(localStorage).forEach(function (k) {
      if (k.indexOf('quire.') === 0 && !STATE_KEY.test(k)) out[k] = localStorage.getItem(k);
    });
    return out;
  }

  /** exportVault() -> File: sources and originals, index and vectors, chats, study items with FSRS state, progress, settings */
  q.exportVault = function () {
    return q._call('exportVault', [pageSettings()]).then(function (r) {
      var file = new File([q._fromBase64(r.base64)], r.name, { type: 'application/zip' });
      fire('quire:vault-exported', { name: r.name, bytes: r.bytes, counts: r.counts });
      return file;
    });
  };

  /** vaultOfFiles([{name, text} | {name, data}], {category}) -> File: a vault holding only these
   * documents, trained by the engine in a library of its own in memory (the library here is not
   * touched); its `ids` are the sources' ids.  A kiosk's sample library is made this way. */
  q.vaultOfFiles = function (items, opts) {
    var files = items.map(function (f) {
      return { name: f.name, bytes: typeof f.text === 'string' ? new TextEncoder().encode(f.text) : new Uint8Array(f.data) };
    });
    var payload = new Uint8Array(files.reduce(function (n, f) { return n + f.bytes.length; }, 0)), at = 0;
    files.forEach(function (f) { payload.set(f.bytes, at); at += f.bytes.length; });
    var sizes = files.map(function (f) { return [f.name, f.bytes.length]; });
    return q._call('vaultOfFiles', [sizes, (opts && opts.category) || null], { payload: payload }).then(function (r) {
      var file = new File([q._fromBase64(r.base64)], 'quire-vault.quire', { type: 'application/zip' });
      file.ids = r.ids;
      return file;
    });
  };

  /* Page settings a vault may set.  A vault is data, never configuration: the model server
   * (quire.llm.url, which csp.js opens connect-src to) and the web-address switch
   * (quire.allowUrlFetch, which opens it to every host) are never taken from one, whatever
   * the engine answers; anything not listed here is ignored too. */
  var VAULT_PAGE_KEYS = {
    'quire.maxFileMB': function (v) { return /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 2000; }
  };

  /** importVault(blob, {mode: 'merge'|'replace', course: 'offer'|'kiosk', title, onProgress}) -> {mode, summary, counts,
   * sources, read_version, ignored, course}.
   * The whole file is checked first; a damaged, incomplete, crafted or newer file is refused and nothing
   * changes.  `ignored` lists settings the vault named but that were not applied (model server, web
   * addresses), each as a sentence naming the host.  With `course` the vault is a teacher's course
   * (py/quire/vault_course.py): only its library and study sets come in, the sets marked as from the
   * teacher; 'offer' keeps the student's chats, progress, settings and own sets (a replace replaces the
   * library only), 'kiosk' restores the course exactly.  Afterwards the tab embeds what came in.
   * onProgress({stage: 'checking'|'index'|'saving'|'opening', fraction}) hears each step begin. */
  q.importVault = function (blob, opts) {
    var mode = (opts && opts.mode) || 'merge';
    var course = opts && opts.course ? { mode: opts.course, title: opts.title || null } : null;
    if (!blob || typeof blob.arrayBuffer !== 'function') return Promise.reject(new Error('importVault() takes a File or Blob'));
    return blob.arrayBuffer().then(function (buf) {
      return q._call('importVault', [mode, null, pageSettings(), course],
                     { payload: new Uint8Array(buf), onEvent: opts && opts.onProgress });
    }).then(function (r) {
      if (q.embedInBackground) q.embedInBackground();  // an imported library gets its vectors in this tab
      var page = r.page_settings || {};
      Object.keys(page).forEach(function (k) {
        var ok = Object.prototype.hasOwnProperty.call(VAULT_PAGE_KEYS, k) && VAULT_PAGE_KEYS[k](String(page[k]));
        if (ok && (mode === 'replace' || localStorage.getItem(k) == null)) localStorage.setItem(k, String(page[k]));
      });
      delete r.page_settings;
      r.ignored = r.ignored || [];
      if (mode === 'replace') fire('quire:erased');  // what the views show may no longer exist
      fire('quire:library-changed');
      fire('quire:vault-imported', r);
      if (q.refreshStorage) q.refreshStorage();
      return r;
    });
  };
})();
