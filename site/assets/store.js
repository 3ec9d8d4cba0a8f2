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

  return {
    PREFIX: PREFIX,
    open: open,
    request: request,
    main: main,
    get: function (key) { return tx('kv', 'readonly', function (s) { return request(s.get(key)); }); },
    set: function (key, value) { return tx('kv', 'readwrite', function (s) { s.put(value, key); }); },
    del: function (key) { return tx('kv', 'readwrite', function (s) { s.delete(key); }); },
  };
})();
