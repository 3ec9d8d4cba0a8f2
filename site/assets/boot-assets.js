/* Boot, part 2 of 5: assets as classic scripts, the one way every file reaches the page.
 *
 * A page opened from file:// may run classic scripts but may not fetch, so each asset is
 * a script (assets/pack/*.js) that hands its bytes to self.__quirePack.  The engine's boot
 * files (boot.js) and the lazy features (OCR, voice) all load through here.
 */
(function () {
  'use strict';
  var B = self.QUIRE_BUNDLE;

  /* Each pack script is UTF-16 and calls __quirePack(name, gz, size, units): every
   * character of `units` carries 15 bits of the payload, most significant first
   * (py/quire_build/pack.py's encode15).  Decoding here lets the bytes travel to the worker without a copy. */
  var arrivals = {};
  self.__quirePack = function (name, gz, size, units) {
    var waiter = arrivals[name];
    if (!waiter) return;
    delete arrivals[name];
    try {
      waiter.resolve({ gz: !!gz, bytes: decode15(units, size) });
    } catch (err) {
      waiter.reject({ kind: 'damaged', arg: B.assets[name].src });
    }
  };

  function decode15(units, size) {
    var out = new Uint8Array(size);  // the last unit's spare bits fall past the end: a typed array ignores them
    var acc = 0, bits = 0, j = 0;
    for (var i = 0; i < units.length && j < size; i++) {
      acc = ((acc << 15) | (units.charCodeAt(i) - 0x1000)) & 0x3fffff;  // at most 7 + 15 live bits
      bits += 15;
      while (bits >= 8) { bits -= 8; out[j++] = acc >>> bits; }
    }
    if (j < size) throw new Error('pack is shorter than its size');
    return out;
  }

  function loadAsset(name) {
    var info = B.assets[name];
    if (!info) return Promise.reject({ kind: 'missing', arg: name });
    return new Promise(function (resolve, reject) {
      arrivals[name] = { resolve: resolve, reject: reject };
      var s = document.createElement('script');
      s.src = info.src;
      s.async = true;
      s.onload = function () {
        s.remove();
        if (arrivals[name]) { delete arrivals[name]; reject({ kind: 'damaged', arg: info.src }); }
      };
      s.onerror = function () { s.remove(); delete arrivals[name]; reject({ kind: 'missing', arg: info.src }); };
      document.head.appendChild(s);
    });
  }

  /* The asset as a Blob, gunzipped: for the page's own uses (engine.js, OCR). */
  function decode(asset) {
    var blob = new Blob([asset.bytes]);
    if (!asset.gz) return Promise.resolve(blob);
    return new Response(blob.stream().pipeThrough(new DecompressionStream('gzip'))).blob();
  }

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }

  /* The asset's bytes (an ArrayBuffer), gunzipped and checked against the bundle's sha256:
   * what the lazy features (OCR, voice) load.  Rejects with {kind, arg}: kind 'missing' or
   * 'damaged', arg the file; `checksum` is true when only the sha256 disagreed. */
  function loadChecked(name) {
    var info = B && B.assets[name];
    if (!info) return Promise.reject({ kind: 'missing', arg: name });
    // Not gzipped (the voice models): the decoded bytes as they are, not copied twice more through
    // a Blob (110 MB of short-lived copies for the multilingual model).
    return loadAsset(name).then(function (asset) {
      return asset.gz ? decode(asset).then(function (blob) { return blob.arrayBuffer(); }) : asset.bytes.buffer;
    }).then(function (buffer) {
      return crypto.subtle.digest('SHA-256', buffer).then(function (digest) {
        if (hex(digest) !== info.sha256) throw { kind: 'damaged', arg: info.src, checksum: true };
        return buffer;
      });
    });
  }

  self.QuireBoot.loadAsset = loadAsset;
  self.QuireBoot.decode = decode;
  self.QuireBoot.loadChecked = loadChecked;
})();
