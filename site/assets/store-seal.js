/* QuireStore, part 2: a torn log, the room probe, and seal() (store-db.js lists the parts).
 *
 * A write that failed for lack of space leaves a torn record at the end of Chromium's
 * IndexedDB log (one LevelDB log per origin, shared by every database of it).  Chromium
 * reopens that log and appends after the torn record; at the next browser start LevelDB
 * then finds a checksum mismatch and Chromium deletes every database of the origin
 * ("IndexedDB recovering from a corrupted (and deleted) database"), 3 times out of 3 on a
 * real full disk.  So after such a failure no write goes out until the log has been
 * retired: see seal().  A session cut short tears the log the same way (store-tabs.js).
 */
(function (S) {
  'use strict';

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
  function tore() { tears += 1; setTorn(true, true); }
  /* tell: let the other tabs of this origin know (their next write seals first, or not). */
  function setTorn(flag, tell) {
    torn = !!flag;
    remember(torn);
    if (tell && storageChannel) storageChannel.postMessage({ torn: torn });
  }
  try { if (typeof localStorage !== 'undefined' && localStorage.getItem(TORN_KEY)) torn = true; } catch (e) { /* refused */ }
  if (storageChannel) storageChannel.onmessage = function (e) { if (e.data && 'torn' in e.data) { torn = !!e.data.torn; remember(torn); } };

  /* Did this failed write (or open) touch the disk?  Then the log may be torn. */
  function tearing(err) {
    var raw = String(err && err.name) + ': ' + String(err && err.message);
    return S.saysFull(raw) || /IO ?error|UnknownError/i.test(raw);
  }

  /* A failed write, translated.  Chromium does not always say a full disk is full (a write
   * can fail with just "UnknownError: Unknown error"): an I/O-ish failure is then asked
   * about of room(), and called full when there is no room for 1 MB. */
  function writeFailed(err, what) {
    var out = S.translate(err, what);
    if (out.name === 'QuireStoreFull' || !(tearing(err) || silent(err))) return Promise.resolve(out);
    return room(1 << 20).then(function (ok) { return ok === null ? roomInDB(1 << 20) : ok; })
      .then(function (ok) { return ok === false ? S.translate(err, what, true) : out; }, function () { return out; });
  }
  /* A write aborted with no reason at all: WebKit's answer when the disk refused the commit
   * (measured: a write of up to 1 MB on a full disk, t.error null; a larger one says
   * "UnknownError: Unable to store record in object store"). */
  function silent(err) {
    return !err || err.name === 'AbortError' || (err.name === 'Error' && err.message === 'storage transaction aborted');
  }

  /* Is there room for n bytes, asked of IndexedDB itself?  For browsers whose IndexedDB is
   * SQLite (Firefox, WebKit: a failed write tears nothing) and that have no origin private
   * file system (WebKitGTK, and every page from file://): n bytes committed to a scratch
   * database, then removed.  Its database is opened once, while there is room (on a full disk
   * making its file would fail for that reason alone).  null: cannot tell (Chromium, or no
   * scratch database). */
  var ROOM_DB = { name: 'room', version: 1, stores: ['kv'] };
  var roomDB = null;
  function openRoomDB() {
    if (logTears || typeof indexedDB === 'undefined') return null;
    if (!roomDB) {
      roomDB = S.open(ROOM_DB);
      roomDB.catch(function () { roomDB = null; });
    }
    return roomDB;
  }
  function roomInDB(n) {
    var db = openRoomDB();
    if (!db) return Promise.resolve(null);
    var write = function (db, fn) {
      return new Promise(function (resolve) {
        var t;
        try { t = db.transaction(['kv'], 'readwrite', { durability: 'strict' }); } catch (e) { resolve(null); return; }
        fn(t.objectStore('kv'));
        t.oncomplete = function () { resolve(true); };
        t.onabort = function () { resolve(false); };
      });
    };
    var probe = db.then(function (db) {
      return write(db, function (st) { st.put(new Uint8Array(n), 'probe'); }).then(function (ok) {
        if (ok === true) write(db, function (st) { st.clear(); });  // best effort: an empty store again
        return ok;
      });
    }, function () { return null; });
    return Promise.race([probe, new Promise(function (resolve) { setTimeout(resolve, ROOM_WAIT, null); })]);
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
  // The page knows logTears now (the worker is told, S.logTears); opened once the other parts are in.
  if (typeof window !== 'undefined') setTimeout(openRoomDB, 0);
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
    if (!logTears) { setTorn(false, true); return Promise.resolve(); }  // SQLite: nothing to retire
    if (sealing) return sealing;
    sealing = roomToSeal('save').then(function () { return S.open(SEAL); }).then(function (db) {
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
      setTorn(false, true);
    }, function (err) {
      sealing = null;
      throw S.translate(err, 'save (the disk is still full)');
    });
    return sealing;
  }

  /* true after a write failed on the disk, until seal() has retired the torn log. */
  S.torn = function () { return torn; };
  /* Set the flag; `tell` also tells the other tabs (the worker, told by its page, does not). */
  S.setTorn = setTorn;
  S.tore = tore;
  S.tears = function () { return tears; };
  S.tearing = tearing;
  S.writeFailed = writeFailed;
  /* Does this browser's IndexedDB log tear (Chromium)?  The page knows; the worker is told. */
  S.logTears = function (flag) {
    if (flag !== undefined) { logTears = !!flag; openRoomDB(); }
    return logTears;
  };
  S.room = room;
  S.roomToSeal = roomToSeal;
  S.seal = seal;
  S.sealed = function () { return sealed; };  // torn logs this page (or worker) has retired
})(QuireStore);
