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
