/* The engine's view of the bundle: a fetch shim for a virtual base URL.
 *
 * A page opened from file:// may not fetch, and a blob: worker may not load other
 * files, so the page loads each asset as a classic script and posts its bytes here.
 * Pyodide is told its files live at the virtual base; every fetch under that base is
 * answered from these posted bytes, each checked against the sha256 in bundle.js.
 */
var QuireAssets = (function () {
  'use strict';
  var base = null;
  var table = {};        // asset name -> {size, sha256, gz}
  var pending = {};      // asset name -> {promise, resolve, reject}
  var post = null;
  var realFetch = self.fetch.bind(self);

  var firstError = null;  // libraries wrap fetch errors; keep the original to report it

  function AssetError(kind, name, message) {
    var err = new Error(message);
    err.name = 'AssetError';
    err.kind = kind;
    err.asset = name;
    if (!firstError) firstError = err;
    return err;
  }

  /* A stream made from the bytes themselves, not Blob.stream(): in WebKit a blob: worker of a
   * page opened from file:// may not read Blobs (NotReadableError), so a Blob round trip made
   * a whole copy of Quire look damaged there. */
  function gunzip(bytes) {
    var source = new ReadableStream({ start: function (c) { c.enqueue(bytes); c.close(); } });
    return new Response(source.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer()
      .then(function (b) { return new Uint8Array(b); });
  }

  function hex(buffer) {
    var out = '';
    var view = new Uint8Array(buffer);
    for (var i = 0; i < view.length; i++) out += (view[i] < 16 ? '0' : '') + view[i].toString(16);
    return out;
  }

  function entry(name) {
    if (!pending[name]) {
      var e = {};
      e.promise = new Promise(function (resolve, reject) { e.resolve = resolve; e.reject = reject; });
      e.promise.catch(function () {});  // reported where it is awaited
      pending[name] = e;
    }
    return pending[name];
  }

  /** Decompress and verify one asset posted by the page. */
  function receive(name, gz, bytes) {
    var e = entry(name);
    var info = table[name];
    Promise.resolve(gz ? gunzip(bytes) : bytes)
      .then(function (bytes) {
        return crypto.subtle.digest('SHA-256', bytes).then(function (digest) {
          if (info && hex(digest) !== info.sha256) {
            throw AssetError('damaged', name, 'The file ' + name + ' is damaged: its checksum does not match the bundle.');
          }
          return bytes;
        });
      })
      .then(e.resolve, function (err) {
        // Corrupt gzip data is a damaged copy; a browser that cannot read the bytes at all
        // (NotReadableError, NotSupportedError) has an intact file it failed to unpack: say that.
        var unread = err && /^Not(Readable|Supported)Error$/.test(err.name);
        e.reject(err.name === 'AssetError' ? err : unread ? AssetError('unpack', name, err.name + ': ' + err.message)
          : AssetError('damaged', name, 'The file ' + name + ' could not be decoded: ' + err.message));
      });
  }

  function fail(name, kind, message) {
    entry(name).reject(AssetError(kind, name, message));
  }

  /** The bytes of an asset, asking the page to load it the first time. */
  function get(name) {
    if (!table[name]) return Promise.reject(AssetError('missing', name, 'The bundle has no file named ' + name + '.'));
    if (released[name]) return Promise.reject(new Error('internal: ' + name + ' was released after use'));
    var known = !!pending[name];
    var e = entry(name);
    if (!known) post({ type: 'need', name: name });
    return e.promise;
  }

  function integrityOk(bytes, integrity) {
    var m = /^sha256-(.+)$/.exec(integrity || '');
    if (!m) return Promise.resolve(true);
    return crypto.subtle.digest('SHA-256', bytes).then(function (d) {
      var bin = '';
      var v = new Uint8Array(d);
      for (var i = 0; i < v.length; i++) bin += String.fromCharCode(v[i]);
      return btoa(bin) === m[1];
    });
  }

  function shimmedFetch(input, init) {
    var url = typeof input === 'string' ? input : (input instanceof URL ? input.href : input.url);
    if (!base || url.indexOf(base) !== 0) return realFetch(input, init).catch(plainError);
    var name = decodeURIComponent(url.slice(base.length).split(/[?#]/)[0]);
    return get(name).then(function (bytes) {
      return integrityOk(bytes, init && init.integrity).then(function (ok) {
        if (!ok) throw new TypeError('Integrity check failed for ' + name);
        var type = /\.wasm$/.test(name) ? 'application/wasm' : /\.json$/.test(name) ? 'application/json' : 'application/octet-stream';
        return new Response(bytes, { status: 200, headers: { 'Content-Type': type, 'Content-Length': String(bytes.length) } });
      });
    });
  }

  /* A failed request's error as a plain TypeError made here.  WebKit rejects a refused request
   * with an error object that Pyodide's conversion cannot take: Python code awaiting the fetch
   * never resumed, so the model-status probe (and Ask behind it) hung in Safari's engine. */
  function plainError(err) {
    throw new TypeError(String(err && err.message || err || 'Load failed'));
  }

  function init(config, poster) {
    base = config.base;
    table = config.assets;
    post = poster;
    self.fetch = shimmedFetch;
  }

  /** Drop the worker's copy of assets used up (the snapshot, the images: ~45 MB). */
  var released = {};
  function release(names) {
    names.forEach(function (name) { delete pending[name]; released[name] = true; });
  }

  /** An asset whose failure was handled (the snapshot: Python starts without it) is no longer the likely cause of later errors. */
  function forget(name) {
    if (firstError && firstError.asset === name) firstError = null;
  }

  return { init: init, receive: receive, fail: fail, get: get, release: release, forget: forget, AssetError: AssetError,
           firstError: function () { return firstError; } };
})();
