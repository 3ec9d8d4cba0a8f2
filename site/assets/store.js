/* A small IndexedDB helper shared by the page and the engine worker.
 *
 * Every database name starts with "quire." because all file:// pages share one
 * IndexedDB namespace in Chromium: an unprefixed "library" could belong to anything.
 *
 * Connections reopen by themselves: Chromium closes one after an I/O error (a full disk
 * gives "Connection is closing because of: IO error: ... FILE_ERROR_NO_SPACE"), and
 * every later transaction on it throws InvalidStateError.  Errors leave here translated
 * (see translate): name "QuireStoreFull" or "QuireStoreError", a message for a person.
 *
 * A write that failed for lack of space leaves a torn record at the end of Chromium's
 * IndexedDB log (one LevelDB log per origin, shared by every database of it).  Chromium
 * reopens that log and appends after the torn record; at the next browser start LevelDB
 * then finds a checksum mismatch and Chromium deletes every database of the origin
 * ("IndexedDB recovering from a corrupted (and deleted) database"), 3 times out of 3 on a
 * real full disk.  So after such a failure no write goes out until the log has been
 * retired: see seal().
 */
var QuireStore = (function () {
  'use strict';
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
  function translate(err, what, full) {
    if (!err) err = new Error('storage transaction aborted');
    if (err.name === 'QuireStoreFull' || err.name === 'QuireStoreError') return err;
    var raw = (err.name ? err.name + ': ' : '') + (err.message || String(err));
    var out;
    // After a write failed on a full disk (torn), an open's "Internal error" is that disk too.
    if (full || FULL.test(raw) || NO_OPEN.test(raw) || (torn && /^UnknownError: Internal error/.test(raw))) {
      out = new Error('The disk is full: the browser could not ' + what + ' (' + raw + ')');
      out.name = 'QuireStoreFull';
    } else {
      out = new Error('The browser’s storage failed to ' + what + ' (' + raw + ')');
      out.name = 'QuireStoreError';
    }
    return out;
  }

  /* ---------------- a torn log (see the header) ---------------- */

  // More than LevelDB's write buffer (Chromium: at most 4 MiB): one batch this big fills the
  // memory table, so the next write starts a new log file and the torn one is deleted once
  // the table is on disk.  Zeros: the log holds them as they are, the table compresses them
  // (measured: 5 MiB through the log, 0.2 MB left in a table until LevelDB compacts it).
  var SEAL_BYTES = 5 << 20;
  var SEAL_PIECE = 40000;  // under Chromium's 64 KiB threshold, so the values stay in the log
  var TORN_KEY = 'quire.storageTorn';  // localStorage: the flag outlives the tab (page only)
  var SEAL = { name: 'seal', version: 1, stores: ['kv'] };
  var torn = false, sealing = null, sealed = 0;
  /* Only Chromium keeps IndexedDB in a LevelDB log that a cut-short write tears; Firefox and
   * WebKit keep it in SQLite, whose journal rolls a cut write back, so they need no seal.  No
   * web feature reveals how a browser stores IndexedDB: the page asks for what only Chromium
   * has (window.chrome, navigator.userAgentData) and tells the engine's worker (logTears). */
  var logTears = typeof window === 'undefined' || !!(window.chrome || navigator.userAgentData);
  var storageChannel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('quire.storage') : null;

  function remember(flag) {
    try {
      if (typeof localStorage === 'undefined') return;
      if (flag) localStorage.setItem(TORN_KEY, '1'); else localStorage.removeItem(TORN_KEY);
    } catch (e) { /* no localStorage (worker) or refused: the page's copy of the flag still holds */ }
  }
  var tears = 0;  // failures in this context that may have torn the log
  function tore() { tears += 1; setTorn(true); }
  function setTorn(flag, quiet) {
    torn = !!flag;
    remember(torn);
    if (!quiet && storageChannel) storageChannel.postMessage({ torn: torn });
  }
  try { if (typeof localStorage !== 'undefined' && localStorage.getItem(TORN_KEY)) torn = true; } catch (e) { /* refused */ }

  /* A browser killed or crashed in the middle of a write tears the log the same way: the
   * next session appends after the torn record, and the start after that finds the checksum
   * mismatch and deletes everything (seen after SIGKILL during a Train's commit, then one
   * more session: tests/test_kill_browser.py).  So each tab leaves a mark that it is open,
   * holds a Web Lock of the same name while it is, and says "closed" when it goes
   * (pagehide).  At the next start, a mark whose lock nobody holds and that never said
   * "closed" is a session that ended without closing: the log is then treated as torn
   * (one seal, 5 MiB, before the first write).
   *
   * The mark is written twice.  localStorage alone is not enough: Chromium saves it a few
   * seconds after a change, so a browser killed within those seconds of opening left no
   * mark (a clean-clone CI run lost its library that way).  A key in quire.main's IndexedDB
   * is on disk as soon as its transaction completes (a kill cannot undo a write the process
   * has made), so it is written first thing, once this start has been judged: until then
   * no write goes out, from the page or the engine (see checked()).  "closed" stays in
   * localStorage: a mark from IndexedDB with no "closed" beside it was cut short. */
  var SESSION_PREFIX = 'quire.session.';  // localStorage: '1' while the tab is open, 'closed' after
  var MARK_PREFIX = 'session:';           // quire.main / kv: {started}, one per open tab
  var JUDGE_WAIT = 10000;  // ms: marks that cannot be read by then are judged from localStorage alone
  var judging = null, judged = null;
  var started = null;  // the page: resolves with torn once this start is judged and its mark written

  /* Hold writes until judge(torn) (the engine's worker is told by the page). */
  function hold() {
    if (!judging) judging = new Promise(function (resolve) { judged = resolve; });
    return judging;
  }
  var cutShort = false;  // did this start find a session that ended without closing?
  function judge(cut) {
    cutShort = cutShort || !!cut;
    if (cut) setTorn(true, typeof localStorage === 'undefined');
    var done = judged;
    judging = judged = null;
    if (done) done(torn);
  }

  function marks() {
    return run(mainConn, ['kv'], 'readonly', function (t) {
      return request(t.objectStore('kv').getAllKeys(IDBKeyRange.bound(MARK_PREFIX, MARK_PREFIX + '\uffff')));
    }, 'read its open-tab marks').then(function (keys) { return keys.map(function (k) { return k.slice(MARK_PREFIX.length); }); });
  }
  function mark(put, deletes) {
    return run(mainConn, ['kv'], 'readwrite', function (t) {
      var kv = t.objectStore('kv');
      (deletes || []).forEach(function (id) { kv.delete(MARK_PREFIX + id); });
      if (put) kv.put({ started: Date.now() }, MARK_PREFIX + put);
    }, 'save its open-tab mark');
  }

  function watchSessions() {
    if (typeof localStorage === 'undefined' || typeof addEventListener !== 'function') return;  // the page only
    var id = Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
    var said = {};  // id -> what localStorage says of that session
    try {
      Object.keys(localStorage).forEach(function (k) {
        if (k.indexOf(SESSION_PREFIX) === 0) said[k.slice(SESSION_PREFIX.length)] = localStorage.getItem(k);
      });
      localStorage.setItem(SESSION_PREFIX + id, '1');
    } catch (e) { return; /* refused: the flag from TORN_KEY still holds */ }
    hold();
    var locks = typeof navigator !== 'undefined' && navigator.locks;
    if (locks) locks.request(SESSION_PREFIX + id, function () { return new Promise(function () {}); }).catch(function () {});
    addEventListener('pagehide', function (e) {
      try { localStorage.setItem(SESSION_PREFIX + id, 'closed'); } catch (err) { /* refused */ }
      // May not finish as the tab goes: "closed" says it.  Not into the back-forward cache:
      // WebKit freezes the page with the write's transaction open, and every later write of
      // every Quire page waited for it (the next page in that tab never started).
      if (!judging && !e.persisted) mark(null, [id]).catch(function () {});
    });
    addEventListener('pageshow', function (e) {  // back from the back-forward cache
      if (!e.persisted) return;
      try { localStorage.setItem(SESSION_PREFIX + id, '1'); } catch (err) { /* refused */ }
      mark(id).catch(function () {});
    });
    var stored = marks().then(null, function () { return null; });
    var held = locks ? locks.query().then(function (state) {
      var out = {};
      (state.held || []).forEach(function (l) { out[l.name] = true; });
      return out;
    }, function () { return null; }) : Promise.resolve(null);
    var timer;
    var late = new Promise(function (resolve) { timer = setTimeout(resolve, JUDGE_WAIT, [null, null]); });
    started = Promise.race([Promise.all([stored, held]), late]).then(function (r) {
      clearTimeout(timer);
      var ids = {};
      (r[0] || []).forEach(function (x) { ids[x] = true; });
      Object.keys(said).forEach(function (x) { ids[x] = true; });
      // Without locks no open tab can be told from a cut one: every mark that did not say "closed" counts.
      var gone = Object.keys(ids).filter(function (x) { return x !== id && !(r[1] && r[1][SESSION_PREFIX + x]); });
      var cut = gone.filter(function (x) { return said[x] !== 'closed'; });
      judge(cut.length > 0);
      gone.forEach(function (x) { try { localStorage.removeItem(SESSION_PREFIX + x); } catch (e) { /* refused */ } });
      // This start's first write: after a cut-short session it retires the log first (seal).
      return mark(id, gone.filter(function (x) { return r[0] && r[0].indexOf(x) >= 0; }));
    }).catch(function () { if (judging) judge(true); }).then(function () { return torn; });
  }

  if (storageChannel) storageChannel.onmessage = function (e) { if (e.data && 'torn' in e.data) { torn = !!e.data.torn; remember(torn); } };

  /* Did this failed write (or open) touch the disk?  Then the log may be torn. */
  function tearing(err) {
    var raw = String(err && err.name) + ': ' + String(err && err.message);
    return FULL.test(raw) || NO_OPEN.test(raw) || /IO ?error|UnknownError/i.test(raw);
  }

  /* A failed write, translated.  Chromium does not always say a full disk is full (a write
   * can fail with just "UnknownError: Unknown error"): an I/O-ish failure is then asked
   * about of room(), and called full when there is no room for 1 MB. */
  function writeFailed(err, what) {
    var out = translate(err, what);
    if (out.name === 'QuireStoreFull' || !tearing(err)) return Promise.resolve(out);
    return room(1 << 20).then(function (ok) { return ok === false ? translate(err, what, true) : out; },
      function () { return out; });
  }

  /* Is there room for n bytes?  Asked of the origin private file system, which keeps its
   * files apart from IndexedDB's log, so a "no" tears nothing and it answers again once
   * room is made (Cache Storage stays broken after one failed write; estimate() cannot
   * tell: Chromium reports a fixed quota, 1 GiB on a full 200 MB disk).  null: cannot tell
   * (no such file system, as on file://). */
  var ROOM_FILE = '.quire-room';
  var ROOM_WAIT = 15000;  // ms: a probe that has not answered by then cannot tell
  function room(n) {
    var s = typeof navigator !== 'undefined' && navigator.storage;
    if (!s || !s.getDirectory) return Promise.resolve(null);
    var probe = probeFile().then(function (file) {
      // In a worker: written in place (no swap file, so nothing new to create on the disk).
      if (file.createSyncAccessHandle) {
        return file.createSyncAccessHandle().then(function (h) {
          try {
            var wrote = h.write(new Uint8Array(n), { at: 0 });
            h.flush();
            return wrote === n;
          } finally {
            try { h.truncate(0); h.close(); } catch (e) { /* closed with the worker */ }
          }
        });
      }
      // In the page: into the writable's swap file, emptied again before it replaces the file.
      return file.createWritable().then(function (w) {
        return w.write(new Uint8Array(n)).then(function () { return w.truncate(0); }, function (err) {
          return w.abort().then(function () { throw err; }, function () { throw err; });
        }).then(function () { return w.close(); }).then(function () { return true; });
      });
    }).then(null, function (err) {
      return err && err.name === 'QuotaExceededError' ? false : null;
    });
    return Promise.race([probe, new Promise(function (resolve) { setTimeout(resolve, ROOM_WAIT, null); })]);
  }
  // The probe's file is made once, while there is room, and kept empty: making a file is a
  // write of its own (the file system's directory), and on a full disk that fails with an
  // InvalidStateError that cannot tell a full disk from anything else.
  var roomFile = null;
  function probeFile() {
    var s = typeof navigator !== 'undefined' && navigator.storage;
    if (!s || !s.getDirectory) return Promise.reject(new Error('no origin file system'));
    if (!roomFile) {
      roomFile = s.getDirectory().then(function (dir) { return dir.getFileHandle(ROOM_FILE, { create: true }); });
      roomFile.catch(function () { roomFile = null; });
    }
    return roomFile;
  }
  probeFile().catch(function () { /* file://, or no room now: room() asks again */ });
  function stillFull(what) {
    var err = new Error('The disk is full: the browser could not ' + what + ' (there is still no room on the disk)');
    err.name = 'QuireStoreFull';
    return err;
  }
  /* Room for the seal, or a disk-full error before IndexedDB is touched. */
  function roomToSeal(what) {
    return room(SEAL_BYTES + (1 << 20)).then(function (ok) { if (ok === false) throw stillFull(what); });
  }

  /* Retire a torn log before the next write: one batch larger than the write buffer into a
   * scratch database, then its deletion (the write that moves LevelDB to a new log file).
   * Costs 5 MiB once after a failure, and only once room() says they fit: a seal cut short
   * by the disk would write behind the torn record itself. */
  function seal() {
    if (!torn) return Promise.resolve();
    if (!logTears) { setTorn(false); return Promise.resolve(); }  // SQLite: nothing to retire
    if (sealing) return sealing;
    sealing = roomToSeal('save').then(function () { return open(SEAL); }).then(function (db) {
      var fill = function () {
        return new Promise(function (resolve, reject) {
          var t = db.transaction(['kv'], 'readwrite', { durability: 'strict' });
          var st = t.objectStore('kv');
          for (var i = 0; i * SEAL_PIECE < SEAL_BYTES; i++) st.put(new Uint8Array(SEAL_PIECE), i);
          t.oncomplete = resolve;
          t.onerror = t.onabort = function () { reject(t.error || new Error('storage transaction aborted')); };
        });
      };
      var empty = function () {
        return new Promise(function (resolve, reject) {
          var t = db.transaction(['kv'], 'readwrite', { durability: 'strict' });
          t.objectStore('kv').clear();
          t.oncomplete = resolve;
          t.onerror = t.onabort = function () { reject(t.error || new Error('storage transaction aborted')); };
        });
      };
      return fill().then(empty).then(function () { db.close(); }, function (err) { try { db.close(); } catch (e) {} throw err; });
    }).then(function () {
      sealing = null;
      sealed += 1;
      setTorn(false);
    }, function (err) {
      sealing = null;
      throw translate(err, 'save (the disk is still full)');
    });
    return sealing;
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
        if (event.oldVersion === 0 && spec.stores.indexOf('_sizes') >= 0) req.transaction.objectStore('_sizes').put({}, '\u0000totals');
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
        if (tearing(req.error)) tore();  // an open on a full disk may leave a torn log too
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
          current = torn ? roomToSeal('open its database').then(function () { return open(spec); }) : open(spec);
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

  /* One transaction; resolves with fn's result once it has committed.  A transaction
   * that cannot start because the connection closed is retried once on a new one:
   * nothing of it ran, so the retry cannot apply anything twice. */
  function run(conn, stores, mode, fn, what, retried) {
    if (mode === 'readwrite' && judging) return judging.then(function () { return run(conn, stores, mode, fn, what, retried); });
    if (mode === 'readwrite' && torn) return seal().then(function () { return run(conn, stores, mode, fn, what, retried); });
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
        var result;
        // The first real failure seen.  A request's error event reaches t.onerror while
        // t.error is still null (the abort, with that error, follows), and a transaction this
        // code aborts itself has no t.error at all: the abort reports this cause instead.
        var cause = null, failed = false, body;
        // A request refused at once (a value that cannot be stored) throws here: the
        // transaction is aborted then too, so the writes before it do not land either.
        try { body = Promise.resolve(fn(t)); } catch (err) { body = Promise.reject(err); }
        body.then(function (r) { result = r; }, function (err) {
          failed = true;
          if (err && err.name !== 'AbortError') cause = cause || err;
          else if (!cause) cause = err;
          try { t.abort(); } catch (e) { /* finished already: oncomplete or onabort answers */ }
        });
        t.oncomplete = function () { if (failed) reject(translate(cause, what)); else resolve(result); };
        t.onerror = function (e) {
          var err = e && e.target && e.target.error;
          if (err && (!cause || cause.name === 'AbortError')) cause = err;
        };
        t.onabort = function () {
          // A read cut short because another write's I/O error closed the connection: read again.
          if (mode === 'readonly' && !retried) {
            conn.reset();
            resolve(run(conn, stores, mode, fn, what, true));
            return;
          }
          // An abort's own error says little ("AbortError"); a request's, or the code's, says why.
          var err = t.error && t.error.name !== 'AbortError' ? t.error : cause && cause.name !== 'AbortError' ? cause
            : t.error || cause || new Error('storage transaction aborted');
          if (mode !== 'readwrite') { reject(translate(err, what)); return; }
          // Firefox, after a write failed on a full disk, refuses the next write on that connection
          // ("InvalidStateError: A mutation operation was attempted on a database that did not
          // allow mutations") while a new connection writes: nothing of this one landed, so once more.
          if (isClosed(err) && !tearing(err) && !retried) {  // (a closing after an I/O error tore the log: below)
            conn.reset();
            resolve(run(conn, stores, mode, fn, what, true));
            return;
          }
          if (tearing(err)) tore();
          writeFailed(err, what).then(reject);
        };
      });
    });
  }

  var mainConn = connection(MAIN);
  function main() { return mainConn.get(); }
  watchSessions();

  function tx(storeName, mode, fn, what) {
    return run(mainConn, [storeName], mode, function (t) { return fn(t.objectStore(storeName)); }, what);
  }

  /* The engine's knowledge base: one object store per bucket (see quire/store.py), plus
   * SIZES: the stored size of every key and, under TOTALS, count and bytes per bucket, kept
   * by every commit in its own transaction, so usage() reads one value instead of all of them. */
  var libraryConn = null;
  var SIZES = '_sizes';
  var TOTALS = '\u0000totals';
  function sizeOf(v) { return typeof v === 'string' ? v.length : (v && v.byteLength) || 0; }

  /* Update TOTALS for these writes ([bucket, key, size or null for a delete]; the last
   * write of a key wins).  Without TOTALS (a database from before them) nothing is counted
   * until usage() counts everything once. */
  function count(t, writes) {
    var sizes = t.objectStore(SIZES);
    return request(sizes.get(TOTALS)).then(function (totals) {
      if (!totals) return;
      var last = new Map();
      writes.forEach(function (w) { last.set(w[0] + '\u0000' + w[1], w); });
      return Promise.all(Array.from(last.keys(), function (id) {
        var w = last.get(id);
        return request(sizes.get(id)).then(function (old) {
          var b = totals[w[0]] || (totals[w[0]] = { count: 0, bytes: 0 });
          if (old != null) { b.count -= 1; b.bytes -= old; }
          if (w[2] != null) { b.count += 1; b.bytes += w[2]; sizes.put(w[2], id); } else if (old != null) sizes.delete(id);
        });
      })).then(function () { sizes.put(totals, TOTALS); });
    });
  }

  /* Count every stored value once (a database from before the counters). */
  function recount() {
    return storeNames().then(function (names) {
      var stores = names.filter(function (n) { return n !== SIZES; });
      return libTx(names, 'readwrite', function (t) {
        var sizes = t.objectStore(SIZES);
        var totals = {};
        return Promise.all(stores.map(function (s) {
          var st = t.objectStore(s);
          return Promise.all([request(st.getAllKeys()), request(st.getAll())]).then(function (kv) {
            var b = totals[s] = { count: 0, bytes: 0 };
            kv[1].forEach(function (v, i) {
              var n = sizeOf(v);
              b.count += 1; b.bytes += n;
              sizes.put(n, s + '\u0000' + kv[0][i]);
            });
          });
        })).then(function () { sizes.put(totals, TOTALS); return totals; });
      }, 'count its storage');
    });
  }
  function storeNames() {
    return libraryConn.get().then(function (db) { return Array.prototype.slice.call(db.objectStoreNames); });
  }
  function libTx(stores, mode, fn, what) {
    return run(libraryConn, stores, mode, fn, what || (mode === 'readwrite' ? 'save' : 'read its library'));
  }

  var library = {
    get: function (bucket, key) {
      return libTx([bucket], 'readonly', function (t) { return request(t.objectStore(bucket).get(key)); });
    },
    getMany: function (bucket, keys) {  // one transaction for many small values (a Train of 5,000 notes)
      return libTx([bucket], 'readonly', function (t) {
        var s = t.objectStore(bucket);
        return Promise.all(keys.map(function (k) { return request(s.get(k)); }));
      });
    },
    all: function (bucket) {
      return libTx([bucket], 'readonly', function (t) {
        var s = t.objectStore(bucket);
        return Promise.all([request(s.getAllKeys()), request(s.getAll())]).then(function (kv) {
          return kv[0].map(function (k, i) { return [k, kv[1][i]]; });
        });
      });
    },
    keys: function (bucket) {
      return libTx([bucket], 'readonly', function (t) { return request(t.objectStore(bucket).getAllKeys()); });
    },
    /* [keys, lengths, bytes, last key]: the byte values whose keys start with prefix (after
     * the key `after`, at most `limit` of them when given), packed into one buffer so the
     * engine converts one value, not one per key. */
    prefixed: function (bucket, prefix, after, limit) {
      return libTx([bucket], 'readonly', function (t) {
        var s = t.objectStore(bucket);
        var range = after ? IDBKeyRange.bound(after, prefix + '\uffff', true, false)
          : IDBKeyRange.bound(prefix, prefix + '\uffff');
        var count = limit || undefined;
        return Promise.all([request(s.getAllKeys(range, count)), request(s.getAll(range, count))]).then(function (kv) {
          var keys = [], lengths = [], parts = [], total = 0;
          kv[1].forEach(function (v, i) {
            if (!v || v.byteLength == null) return;
            var b = v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
            keys.push(kv[0][i]); lengths.push(b.byteLength); parts.push(b); total += b.byteLength;
          });
          var out = new Uint8Array(total), at = 0;
          parts.forEach(function (p) { out.set(p, at); at += p.byteLength; });
          return [keys, Int32Array.from(lengths), out, kv[0].length ? kv[0][kv[0].length - 1] : null];
        });
      });
    },
    /* All puts and deletes in one transaction: all of them land, or none. */
    commit: function (puts, deletes) {
      var names = {};
      puts.forEach(function (p) { names[p[0]] = 1; });
      deletes.forEach(function (d) { names[d[0]] = 1; });
      var stores = Object.keys(names);
      if (!stores.length) return Promise.resolve();
      return libTx(stores.concat([SIZES]), 'readwrite', function (t) {
        deletes.forEach(function (d) { t.objectStore(d[0]).delete(d[1]); });
        puts.forEach(function (p) { t.objectStore(p[0]).put(p[2], p[1]); });
        return count(t, deletes.map(function (d) { return [d[0], d[1], null]; })
          .concat(puts.map(function (p) { return [p[0], p[1], sizeOf(p[2])]; })));
      }, 'save');
    },
    clear: function () {
      return storeNames().then(function (stores) {
        return libTx(stores, 'readwrite', function (t) {
          stores.forEach(function (s) { t.objectStore(s).clear(); });
          t.objectStore(SIZES).put({}, TOTALS);  // counted from zero again
        }, 'erase');
      });
    },
    /* Was the database recreated empty behind this page's back?  (reset: forget it) */
    recreated: function (reset) {
      var was = !!(libraryConn && libraryConn.spec.recreated);
      if (reset && libraryConn) libraryConn.spec.recreated = false;
      return was;
    },
    /* {bucket: {count, bytes}} from the counters commits keep (counted once if missing). */
    usage: function () {
      return libTx([SIZES], 'readonly', function (t) { return request(t.objectStore(SIZES).get(TOTALS)); })
        .then(function (totals) { return totals || recount(); });
    },
  };

  function openLibrary(buckets, version) {
    libraryConn = connection({ name: 'library', version: version, stores: buckets.concat([SIZES]) });
    return libraryConn.get().then(function () { return true; });
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

  return {
    PREFIX: PREFIX,
    /* true after a write failed on the disk, until seal() has retired the torn log. */
    torn: function () { return torn; },
    setTorn: function (flag) { setTorn(flag, true); },
    /* Does this browser's IndexedDB log tear (Chromium)?  The page knows; the worker is told. */
    logTears: function (flag) { if (flag !== undefined) logTears = !!flag; return logTears; },
    seal: seal,
    room: room,
    library: library,
    openLibrary: openLibrary,
    open: open,
    request: request,
    translate: translate,
    estimate: estimate,
    main: main,
    get: function (key) { return tx('kv', 'readonly', function (s) { return request(s.get(key)); }, 'read a setting'); },
    set: function (key, value) { return tx('kv', 'readwrite', function (s) { s.put(value, key); }, 'save a setting'); },
    del: function (key) { return tx('kv', 'readwrite', function (s) { s.delete(key); }, 'save a setting'); },
    // Erase all: every setting, but not the open-tab marks (this tab's and others' are still open).
    clearMain: function () {
      return tx('kv', 'readwrite', function (s) {
        return request(s.getAllKeys()).then(function (keys) {
          keys.forEach(function (k) { if (String(k).indexOf(MARK_PREFIX) !== 0) s.delete(k); });
        });
      }, 'erase settings');
    },
    /* The engine's worker: hold its writes until the page has judged this start and made its
     * first write; verdict(torn) then says how the log is (the page may have sealed it already:
     * a torn flag from the init message is then cleared, whether or not the page's broadcast
     * reached this worker). */
    hold: hold,
    verdict: function (flag) {
      torn = !!flag || tears > 0;  // (a failed open here meanwhile still counts)
      var done = judged;
      judging = judged = null;
      if (done) done(torn);
    },
    /* The page: resolves with torn once this start is judged and its first write (the mark,
     * and a seal before it if needed) is done, so the engine does not seal a second time. */
    checked: function () { return started || Promise.resolve(torn); },
    pending: function () { return !!started; },
    cutShort: function () { return cutShort; },
    sealed: function () { return sealed; },  // torn logs this page (or worker) has retired
    /* The open-tab marks in IndexedDB (for the Privacy panel): [{key, bytes}]. */
    marks: function () {
      return marks().then(function (ids) { return ids.map(function (x) { return { key: MARK_PREFIX + x, bytes: MARK_PREFIX.length + x.length + 16 }; }); });
    },
    SESSION_PREFIX: SESSION_PREFIX,
  };
})();
