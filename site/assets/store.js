/* A small IndexedDB helper shared by the page and the engine worker.
 *
 * Every database name starts with "quire." because all file:// pages share one
 * IndexedDB namespace in Chromium: an unprefixed "library" could belong to anything.
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

  function open(spec) {
    return new Promise(function (resolve, reject) {
      var req;
      try {
        req = indexedDB.open(PREFIX + spec.name, spec.version);
      } catch (err) {
        reject(err);
        return;
      }
      req.onupgradeneeded = function () {
        var db = req.result;
        spec.stores.forEach(function (name) {
          if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
        });
      };
      req.onsuccess = function () { resolve(req.result); };
      req.onerror = function () { reject(req.error || new Error('IndexedDB refused to open')); };
      req.onblocked = function () { reject(new Error('another Quire tab holds an older version of the database open; close it and reload')); };
    });
  }

  var mainDb = null;
  function main() {
    if (!mainDb) mainDb = open(MAIN);
    return mainDb;
  }

  function tx(storeName, mode, fn) {
    return main().then(function (db) {
      return new Promise(function (resolve, reject) {
        var t = db.transaction(storeName, mode);
        var result;
        Promise.resolve(fn(t.objectStore(storeName))).then(function (r) { result = r; });
        t.oncomplete = function () { resolve(result); };
        t.onerror = function () { reject(t.error); };
        t.onabort = function () { reject(t.error || new Error('storage transaction aborted')); };
      });
    });
  }

  /* The engine's knowledge base: one object store per bucket (see quire/store.py). */
  var libraryDb = null;
  var library = {
    get: function (bucket, key) {
      return libTx([bucket], 'readonly', function (t) { return request(t.objectStore(bucket).get(key)); });
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
    /* All puts and deletes in one transaction: all of them land, or none. */
    commit: function (puts, deletes) {
      var names = {};
      puts.forEach(function (p) { names[p[0]] = 1; });
      deletes.forEach(function (d) { names[d[0]] = 1; });
      var stores = Object.keys(names);
      if (!stores.length) return Promise.resolve();
      return libTx(stores, 'readwrite', function (t) {
        deletes.forEach(function (d) { t.objectStore(d[0]).delete(d[1]); });
        puts.forEach(function (p) { t.objectStore(p[0]).put(p[2], p[1]); });
      });
    },
    clear: function () {
      return libraryDb.then(function (db) {
        var stores = Array.prototype.slice.call(db.objectStoreNames);
        return libTx(stores, 'readwrite', function (t) { stores.forEach(function (s) { t.objectStore(s).clear(); }); });
      });
    },
    usage: function () {
      return libraryDb.then(function (db) {
        var stores = Array.prototype.slice.call(db.objectStoreNames);
        return libTx(stores, 'readonly', function (t) {
          return Promise.all(stores.map(function (s) {
            return request(t.objectStore(s).getAll()).then(function (values) {
              var bytes = 0;
              values.forEach(function (v) { bytes += typeof v === 'string' ? v.length : (v && v.byteLength) || 0; });
              return [s, { count: values.length, bytes: bytes }];
            });
          })).then(function (rows) { return Object.fromEntries(rows); });
        });
      });
    },
  };

  function libTx(stores, mode, fn) {
    return libraryDb.then(function (db) {
      return new Promise(function (resolve, reject) {
        var t = db.transaction(stores, mode, { durability: 'strict' });
        var result;
        Promise.resolve(fn(t)).then(function (r) { result = r; }, function (err) { try { t.abort(); } catch (e) {} reject(err); });
        t.oncomplete = function () { resolve(result); };
        t.onerror = function () { reject(t.error); };
        t.onabort = function () { reject(t.error || new Error('storage transaction aborted')); };
      });
    });
  }

  function openLibrary(buckets, version) {
    libraryDb = open({ name: 'library', version: version, stores: buckets });
    return libraryDb.then(function () { return true; });
  }

  return {
    PREFIX: PREFIX,
    library: library,
    openLibrary: openLibrary,
    open: open,
    request: request,
    main: main,
    get: function (key) { return tx('kv', 'readonly', function (s) { return request(s.get(key)); }); },
    set: function (key, value) { return tx('kv', 'readwrite', function (s) { s.put(value, key); }); },
    del: function (key) { return tx('kv', 'readwrite', function (s) { s.delete(key); }); },
    clearMain: function () { return tx('kv', 'readwrite', function (s) { s.clear(); }); },
  };
})();
