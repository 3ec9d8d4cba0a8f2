/* QuireStore, part 3: the engine's knowledge base, quire.library (store-db.js lists the parts).
 *
 * One object store per bucket (see quire/store.py; py/quire/browser/idb.py is the engine's
 * side), plus SIZES: the stored size of every key and, under TOTALS, count and bytes per
 * bucket, kept by every commit in its own transaction, so usage() reads one value instead of
 * all of them.
 */
(function (S) {
  'use strict';
  var request = S.request;
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
      return storedSizes(sizes, last).then(function (old) {
        last.forEach(function (w, id) {
          var was = old.get(id);
          var b = totals[w[0]] || (totals[w[0]] = { count: 0, bytes: 0 });
          if (was != null) { b.count -= 1; b.bytes -= was; }
          if (w[2] != null) { b.count += 1; b.bytes += w[2]; sizes.put(w[2], id); } else if (was != null) sizes.delete(id);
        });
        sizes.put(totals, TOTALS);
      });
    });
  }

  /* The stored sizes of the keys in `last` (a Map by SIZES key), as a Map.  A bucket with a
   * few writes asks for each key; one with many (a Train of 5,000 notes writes 5,000 sources,
   * 5,000 passage lists and deletes 5,000 originals) reads all its sizes in two requests: one
   * request per key made that Train's save 0.7 s longer in the tab (4.6 s against 3.9). */
  var ONE_BY_ONE = 64;
  function storedSizes(sizes, last) {
    var old = new Map(), byBucket = new Map();
    last.forEach(function (w, id) {
      if (!byBucket.has(w[0])) byBucket.set(w[0], []);
      byBucket.get(w[0]).push(id);
    });
    return Promise.all(Array.from(byBucket, function (entry) {
      var bucket = entry[0], ids = entry[1];
      if (ids.length <= ONE_BY_ONE) {
        return Promise.all(ids.map(function (id) {
          return request(sizes.get(id)).then(function (v) { if (v != null) old.set(id, v); });
        }));
      }
      var range = IDBKeyRange.bound(bucket + '\u0000', bucket + '\u0001', false, true);
      return Promise.all([request(sizes.getAllKeys(range)), request(sizes.getAll(range))]).then(function (kv) {
        kv[0].forEach(function (k, i) { if (last.has(k)) old.set(k, kv[1][i]); });
      });
    })).then(function () { return old; });
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
    return S.run(libraryConn, stores, mode, fn, what || (mode === 'readwrite' ? 'save' : 'read its library'));
  }

  S.library = {
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
    /* Forget the open connection, so the next call opens a new one: what Chromium's close after
     * an I/O error does (tests/test_full_disk_browser.py makes that moment with it). */
    drop: function () { if (libraryConn) libraryConn.reset(); },
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

  S.openLibrary = function (buckets, version) {
    libraryConn = S.connection({ name: 'library', version: version, stores: buckets.concat([SIZES]) });
    return libraryConn.get().then(function () { return true; });
  };
})(QuireStore);
