/* One writer across tabs where the browser has no Web Locks: a lease in IndexedDB.
 *
 * Web Locks (every current Chromium, Firefox and Safari) are the way; an older browser has
 * none, and without a cross-tab lock two tabs could train into one library at once.  The
 * lease is a record in a database of its own, taken and given back in readwrite
 * transactions, which IndexedDB runs one at a time across every tab of the origin.  A
 * holder renews it every BEAT ms; a holder not heard from for STALE ms (its tab was
 * killed) is skipped.  Waiters look again when a holder says it is done (BroadcastChannel)
 * and every POLL ms.  Shared holders may be many; an exclusive one is alone.
 *
 *   QuireLease.request(name, 'exclusive' | 'shared', onWait, body) -> body's promise; rejects
 *   with err.leaseFailed when no lease can be had (IndexedDB refused), before body runs.
 */
var QuireLease = (function () {
  'use strict';
  var DB = 'quire-writer-lease', STORE = 'lease';
  var BEAT = 2000, STALE = 30000, POLL = 250;
  var tab = Math.random().toString(36).slice(2) + Date.now().toString(36), next = 0;
  var channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(DB) : null;
  var wakers = [];
  var opened = null;

  if (channel) channel.onmessage = function () { wake(); };

  function wake() {
    var list = wakers;
    wakers = [];
    list.forEach(function (fn) { fn(); });
  }

  function open() {
    opened = opened || new Promise(function (resolve, reject) {
      var req = indexedDB.open(DB, 1);
      req.onupgradeneeded = function () { req.result.createObjectStore(STORE); };
      req.onsuccess = function () {
        var db = req.result;
        db.onversionchange = function () { db.close(); opened = null; };
        resolve(db);
      };
      req.onerror = function () { opened = null; reject(req.error); };
      req.onblocked = function () { opened = null; reject(new Error('the lease database is blocked')); };
    });
    return opened;
  }

  /* One readwrite transaction over the lease `name`: change(record, now) edits it and says
   * whether it did; the record is written back only then or when a stale holder was dropped.
   * Resolves with what change returned once the transaction has committed. */
  function update(name, change) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(STORE, 'readwrite'), store = tx.objectStore(STORE), result = false;
        var get = store.get(name);
        get.onsuccess = function () {
          var rec = get.result || { holders: {} }, now = Date.now(), dropped = false;
          Object.keys(rec.holders).forEach(function (id) {
            if (now - rec.holders[id].beat > STALE) { delete rec.holders[id]; dropped = true; }  // its tab is gone
          });
          result = change(rec, now);
          if (result || dropped) store.put(rec, name);
        };
        tx.oncomplete = function () { resolve(result); };
        tx.onabort = tx.onerror = function () { reject(tx.error || new Error('the lease transaction failed')); };
      });
    });
  }

  function tryTake(name, id, mode) {
    return update(name, function (rec, now) {
      var others = Object.keys(rec.holders).map(function (k) { return rec.holders[k]; });
      var free = mode === 'shared' ? !others.some(function (h) { return h.mode === 'exclusive'; }) : others.length === 0;
      if (free) rec.holders[id] = { mode: mode, beat: now };
      return free;
    });
  }

  function waitTurn() {
    return new Promise(function (resolve) {
      var timer = setTimeout(done, POLL);
      function done() { clearTimeout(timer); resolve(); }
      wakers.push(done);
    });
  }

  function request(name, mode, onWait, body) {
    var id = tab + ':' + (++next), waited = false, beat = null;
    function attempt() {
      return tryTake(name, id, mode).then(function (taken) {
        if (taken) return;
        if (!waited) { waited = true; onWait(); }
        return waitTurn().then(attempt);
      });
    }
    function release() {
      clearInterval(beat);
      return update(name, function (rec) { delete rec.holders[id]; return true; })
        .catch(function () {})
        .then(function () { if (channel) channel.postMessage('released'); wake(); });
    }
    return attempt().then(function () {
      return hold();
    }, function (err) {  // no lease to be had (IndexedDB refused): the caller falls back
      var failed = new Error('The writer lease is unavailable: ' + (err && err.message || err));
      failed.leaseFailed = true;
      throw failed;
    });
    function hold() {
      beat = setInterval(function () {
        update(name, function (rec, now) { if (rec.holders[id]) rec.holders[id].beat = now; return true; }).catch(function () {});
      }, BEAT);
      return Promise.resolve().then(body).then(function (value) {
        return release().then(function () { return value; });
      }, function (err) {
        return release().then(function () { throw err; });
      });
    }
  }

  return { request: request, STALE: STALE };
})();
