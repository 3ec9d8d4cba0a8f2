/* Boot, part 3 of 5: what the browser keeps for Quire: storage and the offline copy.
 *
 * Asks for persistent storage and shows how much is used; over http registers the
 * service worker that keeps Quire working offline and offers a newer version.
 */
(function () {
  'use strict';
  var Boot = self.QuireBoot;
  var tr = Boot.tr, $ = Boot.$, state = Boot.state, fail = Boot.fail, mode = Boot.mode;

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
      $('[data-testid="storage-status"]').textContent = tr('Storage: size unknown in this browser');
      return Promise.resolve();
    }
    return navigator.storage.estimate().then(function (e) {
      state.storage.usage = e.usage;
      state.storage.quota = e.quota;
      var free = e.quota - e.usage;
      $('[data-testid="storage-status"]').textContent = tr('Storage: {used} used, {free} available', { used: human(e.usage), free: human(free) }) +
        (state.storage.persisted ? ' · ' + tr('kept persistently') : state.storage.persisted === false ? ' · ' + tr('may be cleared by the browser when space is short') : '');
    });
  }

  function human(n) {
    if (n == null) return '?';
    var units = ['B', 'KB', 'MB', 'GB', 'TB'];
    var i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    var digits = i ? 1 : 0;
    return n.toLocaleString(QuireI18n.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }) + ' ' + units[i];
  }

  /* ---------------- service worker: offline and updates ---------------- */

  /* About what the offline copy holds: the bundle's packs (the small files besides them are a
   * few MB).  null when the page has no bundle list. */
  function bundleBytes() {
    var assets = self.QUIRE_BUNDLE && self.QUIRE_BUNDLE.assets;
    if (!assets) return null;
    return Object.keys(assets).reduce(function (n, name) { return n + (assets[name].size || 0); }, 0);
  }

  function registerServiceWorker() {
    if (mode !== 'http' || !('serviceWorker' in navigator)) return;
    var sw = navigator.serviceWorker;
    var reloading = false;
    sw.addEventListener('controllerchange', function () {
      if (reloading) location.reload();
    });
    // An update is a worker waiting behind the one that controlled this page when it opened.
    // The first install is none: WebKit, on a busy machine, reported its 'installed' state after
    // it had already claimed the page, and the page offered "a newer version" on a first visit.
    var controlledAtLoad = !!sw.controller;
    // The offline copy did not fit (sw.js install): say so, with the size it needs, once.
    sw.addEventListener('message', function (e) {
      if (!e.data || e.data.type !== 'offline-copy-failed' || state.serviceWorker === 'no-room') return;
      var full = e.data.name === 'QuotaExceededError';
      state.serviceWorker = full ? 'no-room' : 'failed';
      state.offlineCopyError = e.data.name + ': ' + e.data.message;
      var size = bundleBytes();
      var text = full
        ? tr('Quire could not keep its offline copy: this browser has less room for this site than the copy needs ({size}). Quire works while this server is reachable; free space on the disk and reload to try again.', { size: human(size) })
        : tr('Quire could not keep its offline copy ({reason}). Quire works while this server is reachable; reload to try again.', { reason: state.offlineCopyError });
      $('[data-testid="offline-banner-text"]').textContent = text;
      var banner = $('[data-testid="offline-banner"]');
      banner.hidden = false;
      $('[data-testid="offline-banner-close"]').onclick = function () { banner.hidden = true; };
      console.warn('Quire: offline copy not kept:', state.offlineCopyError);
    });
    sw.register('sw.js').then(function (reg) {
      if (!reg) { state.serviceWorker = 'blocked'; return; }  // blocked by the browser (policy, automation)
      state.serviceWorker = sw.controller ? 'controlling' : 'installing';
      var offer = function (waiting) {
        if (!waiting || !controlledAtLoad || !sw.controller || reg.waiting !== waiting) return;
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

  Boot.checkStorage = checkStorage;
  Boot.refreshStorage = refreshStorage;
  Boot.registerServiceWorker = registerServiceWorker;
})();
