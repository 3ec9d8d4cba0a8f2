/* IndexedDB for the page and the engine worker: connections that reopen, one transaction at a
 * time, errors a person can act on, and the page's small settings (quire.main / kv).
 *
 * QuireStore is four files, loaded in this order by the page (index.html) and the worker
 * (py/quire_build/assemble.py engine_source):
 *   store-db.js       IndexedDB access (this file): open, connection, run, translate, kv
 *   store-seal.js     a torn log: the torn flag, the room probe, seal()
 *   store-library.js  the engine's buckets, with the size counters usage() reads
 *   store-tabs.js     open-tab marks: was the last session cut short? (holds writes until judged)
 * They share one object, QuireStore; each calls the others' functions through it when it
 * runs, never while it loads (store-tabs.js, last, starts the page's session watch).
 *
 * Every database name starts with "quire." because all file:// pages share one
 * IndexedDB namespace in Chromium: an unprefixed "library" could belong to anything.
 *
 * Connections reopen by themselves: Chromium closes one after an I/O error (a full disk
 * gives "Connection is closing because of: IO error: ... FILE_ERROR_NO_SPACE"), and
 * every later transaction on it throws InvalidStateError.  Errors leave here translated
 * (see translate): name "QuireStoreFull" or "QuireStoreError", a message for a person.
 */
var QuireStore = (function () {
  'use strict';
  var S = {};
  var PREFIX = 'quire.';
  var MAIN = { name: 'main', version: 1, stores: ['kv'] };

  function request(req) {
    return new Promise(function (resolve, reject) {
      req.onsuccess = function () { resolve(req.result); };
      req.onerror = function () { reject(req.error); };
    });
  }

  /* What the browser said, as an error a person can act on.  The original text stays
   * in the message (after the explanation) for bug reports. */
  var FULL = /QuotaExceeded|NO_SPACE|No space left|ENOSPC|disk is full|Failed to write blobs/i;
  // What reopening says while the disk is full (it can also mean a damaged profile).
  var NO_OPEN = /Internal error opening backing store/i;
  /* Does this browser error text say the disk is full (or an open failed the way it does then)? */
  function saysFull(raw) { return FULL.test(raw) || NO_OPEN.test(raw); }
  function translate(err, what, full) {
    if (!err) err = new Error('storage transaction aborted');
    if (err.name === 'QuireStoreFull' || err.name === 'QuireStoreError') return err;
    var raw = (err.name ? err.name + ': ' : '') + (err.message || String(err));
    var out;
    // After a write failed on a full disk (torn), an open's "Internal error" is that disk too.
    if (full || saysFull(raw) || (S.torn() && /^UnknownError: Internal error/.test(raw))) {
      out = new Error('The disk is full: the browser could not ' + what + ' (' + raw + ')');
      out.name = 'QuireStoreFull';
    } else {
      out = new Error('The browser’s storage failed to ' + what + ' (' + raw + ')');
      out.name = 'QuireStoreError';
    }
    return out;
  }

  /* The connection is gone (closed after an error, or by another tab's upgrade). */
  function isClosed(err) {
    return err && (err.name === 'InvalidStateError' || /connection is clos/i.test(String(err.message)));
  }

  function open(spec) {
    return new Promise(function (resolve, reject) {
      var req;
      try {
        req = indexedDB.open(PREFIX + spec.name, spec.version);
      } catch (err) {
        reject(translate(err, 'open its database'));
        return;
      }
      req.onupgradeneeded = function (event) {
        var db = req.result;
        // A brand-new database where this page had one open before: the browser deleted it
        // (seen after a write failed on a full disk).  The engine saves what it still holds.
        if (event.oldVersion === 0 && spec.seen) spec.recreated = true;
        spec.stores.forEach(function (name) {
          if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
        });
        // A new library starts its storage counters at zero (an older one is counted once, by usage()).
        // The key is store-library.js's TOTALS.
        if (event.oldVersion === 0 && spec.stores.indexOf('_sizes') >= 0) req.transaction.objectStore('_sizes').put({}, '\u0000totals:2');
      };
      req.onsuccess = function () {
        var db = req.result;
        spec.seen = true;
        // Another tab upgrading the schema: step aside (this tab reopens on its next call).
        db.onversionchange = function () { db.close(); if (spec.onclose) spec.onclose(db); };
        // Chromium closes a connection after an I/O error (a full disk): forget it so the
        // next call opens a fresh one instead of failing with "the connection is closing".
        db.onclose = function () { if (spec.onclose) spec.onclose(db); };
        resolve(db);
      };
      req.onerror = function () {
        if (S.tearing(req.error)) S.tore();  // an open on a full disk may leave a torn log too
        reject(translate(req.error || new Error('IndexedDB refused to open'), 'open its database'));
      };
      req.onblocked = function () { reject(new Error('another Quire tab holds an older version of the database open; close it and reload')); };
    });
  }

  /* A database handle that reopens after its connection closed. */
  function connection(spec) {
    var current = null;
    var handle = {
      spec: spec,
      get: function () {
        if (!current) {
          // Opening writes too (Chromium sets up metadata): after a torn write, only with room.
          current = S.torn() ? S.roomToSeal('open its database').then(function () { return open(spec); }) : open(spec);
          current.catch(function () { current = null; });
        }
        return current;
      },
      reset: function () { current = null; },
    };
    spec.onclose = function (db) {
      if (current) current.then(function (d) { if (d === db) current = null; }, function () {});
    };
    return handle;
  }

  /* What a write waits for first: this start being judged (store-tabs.js), then a torn log
   * being sealed (store-seal.js).  null: nothing, it goes at once. */
  function beforeWrite() {
    return S.judging() || (S.torn() ? S.seal() : null);
  }

  /* One transaction; resolves with fn's result once it has committed.  A transaction
   * that cannot start because the connection closed is retried once on a new one:
   * nothing of it ran, so the retry cannot apply anything twice. */
  function run(conn, stores, mode, fn, what, retried) {
    var wait = mode === 'readwrite' && beforeWrite();
    if (wait) return wait.then(function () { return run(conn, stores, mode, fn, what, retried); });
    return conn.get().then(function (db) {
      var t;
      try {
        t = db.transaction(stores, mode, mode === 'readwrite' ? { durability: 'strict' } : undefined);
      } catch (err) {
        if (isClosed(err) && !retried) {
          conn.reset();
          return run(conn, stores, mode, fn, what, true);
        }
        throw translate(err, what);
      }
      return new Promise(function (resolve, reject) {
        var result, over = false;
        // The first real failure seen.  A request's error event reaches t.onerror while
        // t.error is still null (the abort, with that error, follows), and a transaction this
        // code aborts itself has no t.error at all: the abort reports this cause instead.
        var cause = null, failed = false, body;
        // Chromium closes a connection after another transaction's I/O error (a full disk); a
        // transaction made on it just before the close event then neither completes nor aborts
        // (measured: its write waited for ever, and so did the question that made it).  The
        // close ends it here as an abort: the closed connection applied none of it.
        var closed = function () {
          aborted(new DOMException('the browser closed the database connection before this '
            + (mode === 'readwrite' ? 'write' : 'read') + ' finished', 'UnknownError'));
        };
        db.addEventListener('close', closed);
        var finish = function () {
          if (over) return false;
          over = true;
          db.removeEventListener('close', closed);
          return true;
        };
        // A request refused at once (a value that cannot be stored) throws here: the
        // transaction is aborted then too, so the writes before it do not land either.
        try { body = Promise.resolve(fn(t)); } catch (err) { body = Promise.reject(err); }
        body.then(function (r) { result = r; }, function (err) {
          failed = true;
          if (err && err.name !== 'AbortError') cause = cause || err;
          else if (!cause) cause = err;
          try { t.abort(); } catch (e) { /* finished already: oncomplete or onabort answers */ }
        });
        t.oncomplete = function () {
          if (!finish()) return;
          if (failed) reject(translate(cause, what)); else resolve(result);
        };
        t.onerror = function (e) {
          var err = e && e.target && e.target.error;
          if (err && (!cause || cause.name === 'AbortError')) cause = err;
        };
        t.onabort = function () {
          // An abort's own error says little ("AbortError"); a request's, or the code's, says why.
          aborted(t.error && t.error.name !== 'AbortError' ? t.error : cause && cause.name !== 'AbortError' ? cause
            : t.error || cause || new Error('storage transaction aborted'));
        };
        function aborted(err) {
          if (!finish()) return;
          // A read cut short because another write's I/O error closed the connection: read again.
          if (mode === 'readonly' && !retried) {
            conn.reset();
            resolve(run(conn, stores, mode, fn, what, true));
            return;
          }
          if (mode !== 'readwrite') { reject(translate(err, what)); return; }
          // Firefox, after a write failed on a full disk, refuses the next write on that connection
          // ("InvalidStateError: A mutation operation was attempted on a database that did not
          // allow mutations") while a new connection writes: nothing of this one landed, so once more.
          if (isClosed(err) && !S.tearing(err) && !retried) {  // (a closing after an I/O error tore the log: below)
            conn.reset();
            resolve(run(conn, stores, mode, fn, what, true));
            return;
          }
          if (S.tearing(err)) S.tore();
          S.writeFailed(err, what).then(reject);
        }
      });
    });
  }

  /* quire.main / kv: the page's small settings (and the open-tab marks, store-tabs.js). */
  var mainConn = connection(MAIN);
  function tx(storeName, mode, fn, what) {
    return run(mainConn, [storeName], mode, function (t) { return fn(t.objectStore(storeName)); }, what);
  }

  /* {usage, quota} in bytes from the browser (null where it cannot say).  Chromium
   * derives the quota from the disk's free space, so quota - usage shrinks as the disk fills. */
  function estimate() {
    var s = typeof navigator !== 'undefined' && navigator.storage;
    if (!s || !s.estimate) return Promise.resolve({ usage: null, quota: null, indexedDB: null });
    return s.estimate().then(function (e) {
      var d = e.usageDetails;  // Chromium: per client (an eviction empties indexedDB)
      return { usage: e.usage, quota: e.quota, indexedDB: d ? d.indexedDB || 0 : null };
    }, function () { return { usage: null, quota: null, indexedDB: null }; });
  }

  S.PREFIX = PREFIX;
  S.request = request;
  S.translate = translate;
  S.saysFull = saysFull;
  S.open = open;
  S.connection = connection;
  S.run = run;
  S.estimate = estimate;
  S.mainConnection = mainConn;
  S.main = function () { return mainConn.get(); };
  S.get = function (key) { return tx('kv', 'readonly', function (s) { return request(s.get(key)); }, 'read a setting'); };
  S.set = function (key, value) { return tx('kv', 'readwrite', function (s) { s.put(value, key); }, 'save a setting'); };
  S.del = function (key) { return tx('kv', 'readwrite', function (s) { s.delete(key); }, 'save a setting'); };
  // Erase all: every setting, but not the open-tab marks (this tab's and others' are still open),
  // nor the entries named in keep (the API keys, when the person chose to keep them).
  S.clearMain = function (keep) {
    return tx('kv', 'readwrite', function (s) {
      return request(s.getAllKeys()).then(function (keys) {
        keys.forEach(function (k) { if (String(k).indexOf(S.MARK_PREFIX) !== 0 && (keep || []).indexOf(k) < 0) s.delete(k); });
      });
    }, 'erase settings');
  };
  return S;
})();
