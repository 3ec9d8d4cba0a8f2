/* QuireStore, part 3: the engine's knowledge base, quire.library (store-db.js lists the parts).
 *
 * One object store per bucket (see quire/store.py; py/quire/browser/idb.py is the engine's
 * side), plus SIZES: count and bytes per bucket under TOTALS, and the stored size of every key,
 * kept by every commit in its own transaction, so usage() reads one value instead of all of
 * them.  The sizes are grouped, SHARDS maps per bucket (a key's group from a hash of it): a
 * Train of 5,000 notes writes 15,000 values, and one size record per key doubled what
 * IndexedDB did for them (15,000 puts: 1.3-2.4 s alone, 2.8-3.2 s with their sizes).
 */
(function (S) {
  'use strict';
  var request = S.request;
  var libraryConn = null;
  var SIZES = '_sizes';
  // ':2': sizes in groups.  A library whose counters are older ('\u0000totals', a record per key)
  // is counted again once, by usage(), as one from before the counters.
  var TOTALS = '\u0000totals:2';
  var SHARDS = 64;
  /* A view of part of a larger buffer is stored as its own bytes: IndexedDB would keep the whole
   * buffer (a 32 MB piece of a 300 MB recording as all 300 MB).  Copied at its put, so only one
   * piece at a time is copied. */
  function own(v) { return ArrayBuffer.isView(v) && v.byteLength !== v.buffer.byteLength ? v.slice() : v; }
  function sizeOf(v) { return typeof v === 'string' ? v.length : (v && v.byteLength) || 0; }

  /* The SIZES key of the group that holds this key's size. */
  function shardOf(bucket, key) {
    var s = String(key), h = 0;
    for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return bucket + '\u0000#' + ((h >>> 0) % SHARDS);
  }

  /* Update TOTALS and the sizes for these writes ([bucket, key, size or null for a delete];
   * the last write of a key wins): each group touched is read once and written once.  Without
   * TOTALS (a database from before them) nothing is counted until usage() counts everything. */
  function count(t, writes) {
    var sizes = t.objectStore(SIZES);
    return request(sizes.get(TOTALS)).then(function (totals) {
      if (!totals) return;
      var last = new Map();
      writes.forEach(function (w) { last.set(w[0] + '\u0000' + w[1], w); });
      var ids = new Set();
      last.forEach(function (w) { ids.add(shardOf(w[0], w[1])); });
      return Promise.all(Array.from(ids, function (id) {
        return request(sizes.get(id)).then(function (v) { return [id, v instanceof Map ? v : new Map()]; });
      })).then(function (read) {
        var groups = new Map(read);
        last.forEach(function (w) {
          var group = groups.get(shardOf(w[0], w[1])), key = String(w[1]);
          var was = group.has(key) ? group.get(key) : null;
          var b = totals[w[0]] || (totals[w[0]] = { count: 0, bytes: 0 });
          if (was != null) { b.count -= 1; b.bytes -= was; }
          if (w[2] != null) { b.count += 1; b.bytes += w[2]; group.set(key, w[2]); } else group.delete(key);
        });
        groups.forEach(function (group, id) { if (group.size) sizes.put(group, id); else sizes.delete(id); });
        sizes.put(totals, TOTALS);
      });
    });
  }

  /* Issue these deletes ([bucket, key]) in t.  A bucket with many of them is read for its keys
   * first, and each run of stored keys that are all deleted goes as one range delete: a Train
   * of 20,000 notes deletes their 20,000 staged originals, and one delete per key cost about as
   * much as a put (1.9 s in Chromium; the range, 24 ms).  null when every delete is issued at
   * once, else a promise that resolves once they are (a put issued after them lands after). */
  var RUN_FROM = 64;
  function deleteRuns(t, deletes) {
    var by = new Map();
    deletes.forEach(function (d) {
      if (!by.has(d[0])) by.set(d[0], []);
      by.get(d[0]).push(d[1]);
    });
    var reads = [];
    by.forEach(function (keys, bucket) {
      var store = t.objectStore(bucket);
      if (keys.length < RUN_FROM) {
        keys.forEach(function (k) { store.delete(k); });
        return;
      }
      var low = keys[0], high = keys[0];
      keys.forEach(function (k) {
        if (indexedDB.cmp(k, low) < 0) low = k;
        if (indexedDB.cmp(k, high) > 0) high = k;
      });
      var gone = new Set(keys);
      reads.push(request(store.getAllKeys(IDBKeyRange.bound(low, high))).then(function (stored) {
        var first = null, last = null;
        function flush() {
          if (first === null) return;
          store.delete(first === last ? first : IDBKeyRange.bound(first, last));
          first = null;
        }
        stored.forEach(function (k) {
          if (!gone.has(k)) { flush(); return; }
          if (first === null) first = k;
          last = k;
        });
        flush();
      }));
    });
    return reads.length ? Promise.all(reads) : null;
  }

  /* Count every stored value once (a database from before the counters). */
  function recount() {
    return storeNames().then(function (names) {
      var stores = names.filter(function (n) { return n !== SIZES; });
      return libTx(names, 'readwrite', function (t) {
        var sizes = t.objectStore(SIZES);
        sizes.clear();  // older counters too (a record per key)
        var totals = {}, groups = new Map();
        return Promise.all(stores.map(function (s) {
          var st = t.objectStore(s);
          return Promise.all([request(st.getAllKeys()), request(st.getAll())]).then(function (kv) {
            var b = totals[s] = { count: 0, bytes: 0 };
            kv[1].forEach(function (v, i) {
              var n = sizeOf(v), id = shardOf(s, kv[0][i]);
              b.count += 1; b.bytes += n;
              if (!groups.has(id)) groups.set(id, new Map());
              groups.get(id).set(String(kv[0][i]), n);
            });
          });
        })).then(function () {
          groups.forEach(function (group, id) { sizes.put(group, id); });
          sizes.put(totals, TOTALS);
          return totals;
        });
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
    /* The original of source `id` as py/quire/originals.py stores it (one value, or a JSON manifest
     * and pieces of 32 MB), read into one array a piece at a time, or null if it or a piece is
     * missing.  A recording goes from here to the page that decodes it (engine/worker.js
     * quirePageCall, the play button's own 'original' call) without entering the engine's heap. */
    original: function (id) {
      var lib = S.library;
      var bytes = function (v) { return v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : null; };
      return lib.get('originals', id).then(function (head) {
        if (head === undefined || head === null) return null;
        if (typeof head !== 'string') return bytes(head);
        var m = JSON.parse(head), out = new Uint8Array(m.size), at = 0, i = 0;
        function next() {
          if (i >= m.pieces) return at === m.size ? out : null;
          return lib.get('originals', id + '#' + i++).then(function (v) {
            v = v && bytes(v);
            if (!v || at + v.length > m.size) return null;
            out.set(v, at);
            at += v.length;
            return next();
          });
        }
        return next();
      });
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
        var putAll = function () { puts.forEach(function (p) { t.objectStore(p[0]).put(own(p[2]), p[1]); }); };
        var runs = deleteRuns(t, deletes), writes = runs ? runs.then(putAll) : putAll();
        return Promise.all([writes, count(t, deletes.map(function (d) { return [d[0], d[1], null]; })
          .concat(puts.map(function (p) { return [p[0], p[1], sizeOf(p[2])]; })))]);
      }, 'save');
    },
    /* commit() from one JSON text (a string or its UTF-8 bytes: {puts: [[bucket, key, text or
     * null or -n]], deletes, lengths}) and
     * one buffer holding the byte values (null in puts) one after another: what the engine
     * sends (py/quire/browser/idb.py), one conversion instead of one per value.  views: byte
     * values the engine never copied (a staged file, as views of the array the page sent), the
     * put -n takes views[n - 1]. */
    commitPacked: function (text, bytes, views) {
      if (typeof text !== 'string') text = new TextDecoder().decode(text);  // the engine sends UTF-8 bytes
      var spec = JSON.parse(text), at = 0, j = 0;
      var puts = spec.puts.map(function (p) {
        if (typeof p[2] === 'number') return [p[0], p[1], views[-p[2] - 1]];
        if (p[2] !== null) return p;
        var n = spec.lengths[j++], v = bytes.slice(at, at + n);
        at += n;
        return [p[0], p[1], v];
      });
      return S.library.commit(puts, spec.deletes);
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
