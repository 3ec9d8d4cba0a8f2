/* Recorded lectures, decoded a few minutes at a time (issue 28).  A browser's decodeAudioData takes
 * a whole file and returns all of it as floats: a 90-minute lecture became 1.4 GB of samples at once
 * and Chromium's processes peaked at 3.2 GB.  This file cuts a recording, without decoding it, into
 * short files of the same format that each decode on their own, so the page decodes one at a time.
 *
 *   QuireAudioSplit.plan(bytes) -> null (a format or a file this cannot cut: decode it whole)
 *                                  or {format, duration (s), units: Float64Array of their start times (s),
 *                                      build(from, to) -> ArrayBuffer: units [from, to) as a file,
 *                                      preroll: units to decode before a cut and drop (the decoder
 *                                        settles on them), skip: seconds the decoder drops at the
 *                                        start of a file built from a unit after the first}
 *
 * What it cuts, each the way its decoders expect a stream to start:
 *   MP3      MPEG audio frames (after any ID3v2 tag), as they are: a frame is its own header
 *   M4A/MP4  the first sound track's AAC frames, each given an ADTS header (a raw .aac stream);
 *            video tracks are never read
 *   Ogg      Opus: the header pages, then a run of audio pages with their granule positions and
 *            sequence numbers made to start again, checksums recomputed
 *   WAV      integer or float PCM: a header and a run of whole sample frames
 * Everything else (WebM, FLAC, Ogg Vorbis, ALAC, MP3 inside MP4, a file this does not recognise,
 * one that breaks off) returns null, and the caller decodes it whole as before.  Times come from the
 * container; a cut lands within a frame (about 20-60 ms) of where the whole-file decode puts it.
 */
(function () {
  'use strict';

  function u32(b, i) { return ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0; }
  function le32(b, i) { return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0; }
  function le16(b, i) { return b[i] | (b[i + 1] << 8); }
  function tag(b, i) { return String.fromCharCode(b[i], b[i + 1], b[i + 2], b[i + 3]); }

  function concat(parts) {
    var n = 0, i;
    for (i = 0; i < parts.length; i++) n += parts[i].length;
    var out = new Uint8Array(n), at = 0;
    for (i = 0; i < parts.length; i++) { out.set(parts[i], at); at += parts[i].length; }
    return out.buffer;
  }

  /* ---- MP3 ---- */
  var MP3_RATES = [[11025, 12000, 8000], null, [22050, 24000, 16000], [44100, 48000, 32000]];  // by version bits
  var MP3_KBPS = {  // [version 1][layer], [version 2/2.5][layer]; layer index 1 = III, 2 = II, 3 = I
    v1: [null, [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
      [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
      [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]],
    v2: [null, [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
      [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
      [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]],
  };

  /** {length, samples, rate} of the MPEG audio frame header at i, or null. */
  function mp3Frame(b, i) {
    if (i + 4 > b.length || b[i] !== 0xFF || (b[i + 1] & 0xE0) !== 0xE0) return null;
    var version = (b[i + 1] >> 3) & 3, layer = (b[i + 1] >> 1) & 3;
    var bitrate = b[i + 2] >> 4, rateIndex = (b[i + 2] >> 2) & 3, pad = (b[i + 2] >> 1) & 1;
    if (version === 1 || layer === 0 || bitrate === 0 || bitrate === 15 || rateIndex === 3) return null;
    var rate = MP3_RATES[version][rateIndex];
    var kbps = (version === 3 ? MP3_KBPS.v1 : MP3_KBPS.v2)[layer][bitrate] * 1000;
    var samples = layer === 3 ? 384 : (layer === 1 && version !== 3) ? 576 : 1152;
    var length = layer === 3 ? (Math.floor(12 * kbps / rate) + pad) * 4 : Math.floor(samples / 8 * kbps / rate) + pad;
    return { length: length, samples: samples, rate: rate };
  }

  function planMp3(b) {
    var start = 0;
    if (b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33) {  // "ID3": skip the tag
      start = 10 + ((b[6] & 0x7F) << 21 | (b[7] & 0x7F) << 14 | (b[8] & 0x7F) << 7 | (b[9] & 0x7F)) + ((b[5] & 0x10) ? 10 : 0);
    }
    var first = mp3Frame(b, start);
    if (!first || !mp3Frame(b, start + first.length)) return null;
    // A Xing/Info frame first (LAME's gapless header) is silent: a whole-file decoder drops it and
    // then the encoder's delay and its own 529 samples.  Cuts start after it, timed the same way.
    var i = start, t = 0, head = b.subarray(start, start + first.length), lead = 0, padding = 0;
    var info = -1;
    for (var x = 4; x + 8 <= head.length && info < 0; x++) if (tag(head, x) === 'Xing' || tag(head, x) === 'Info') info = x;
    if (info >= 0) {
      // after the Xing fields the flags announce (frames, bytes, table of contents, quality), the
      // encoder's tag: nine characters ("LAME3.100", ffmpeg's "Lavc60.31"), then at 21 the delay
      var flags = head[info + 7], lame = info + 8 + (flags & 1 ? 4 : 0) + (flags & 2 ? 4 : 0) + (flags & 4 ? 100 : 0) + (flags & 8 ? 4 : 0);
      if (lame + 24 <= head.length && /^[A-Za-z]{4}/.test(String.fromCharCode(head[lame], head[lame + 1], head[lame + 2], head[lame + 3]))) {
        lead = ((head[lame + 21] << 4) | (head[lame + 22] >> 4)) + 529;
        padding = ((head[lame + 22] & 15) << 8) | head[lame + 23];
      }
      i = start + first.length;
    }
    var offsets = [], times = [];
    while (i < b.length) {
      var f = mp3Frame(b, i);
      if (!f || f.rate !== first.rate) break;  // the end, a trailing tag, or damage: stop at the last whole frame
      if (i + f.length > b.length) break;
      offsets.push(i);
      times.push(t - lead / f.rate);
      t += f.samples / f.rate;
      i += f.length;
    }
    if (!offsets.length || i < b.length - 4096) return null;  // more than a trailing tag left unread: decode it whole
    offsets.push(i);
    return {
      format: 'mp3', duration: t - (lead + padding) / first.rate, units: Float64Array.from(times), preroll: 10,
      build: function (from, to) { return b.slice(offsets[from], offsets[to]).buffer; },
    };
  }

  function gcd(a, b) { while (b) { var r = a % b; a = b; b = r; } return a; }

  /* ---- WAV ---- */
  function planWav(b) {
    if (tag(b, 0) !== 'RIFF' || tag(b, 8) !== 'WAVE') return null;
    var i = 12, fmt = null, data = null;
    while (i + 8 <= b.length && !data) {
      var id = tag(b, i), size = le32(b, i + 4);
      if (id === 'fmt ') fmt = { at: i + 8, size: size };
      else if (id === 'data') data = { at: i + 8, size: Math.min(size, b.length - i - 8) };
      i += 8 + size + (size & 1);
    }
    if (!fmt || !data || fmt.size < 16) return null;
    var format = le16(b, fmt.at), channels = le16(b, fmt.at + 2), rate = le32(b, fmt.at + 4);
    var align = le16(b, fmt.at + 12);
    if ((format !== 1 && format !== 3 && format !== 0xFFFE) || !channels || !rate || !align) return null;
    var header = b.slice(12 - 12, fmt.at + fmt.size);  // RIFF, WAVE and the fmt chunk as they are
    // a unit of whole frames that is also a whole number of 32 kHz samples, about 2,048 frames
    var grid = rate / gcd(rate, 32000), UNIT = grid * Math.max(1, Math.round(2048 / grid));
    var frames = Math.floor(data.size / align);
    var count = Math.ceil(frames / UNIT), times = new Float64Array(count);
    for (var u = 0; u < count; u++) times[u] = u * UNIT / rate;
    return {
      format: 'wav', duration: frames / rate, units: times, preroll: 0,
      build: function (from, to) {
        var a = data.at + from * UNIT * align, z = data.at + Math.min(frames, to * UNIT) * align;
        var head = new Uint8Array(header.length + 8);
        head.set(header);
        var view = new DataView(head.buffer);
        view.setUint32(4, head.length - 8 + (z - a), true);
        head.set([0x64, 0x61, 0x74, 0x61], header.length);  // "data"
        view.setUint32(header.length + 4, z - a, true);
        return concat([head, b.subarray(a, z)]);
      },
    };
  }

  /* ---- Ogg Opus ---- */
  var CRC = (function () {
    var table = new Uint32Array(256);
    for (var i = 0; i < 256; i++) {
      var r = i << 24;
      for (var k = 0; k < 8; k++) r = (r & 0x80000000) ? ((r << 1) ^ 0x04C11DB7) : (r << 1);
      table[i] = r >>> 0;
    }
    return table;
  })();

  function oggCrc(page) {
    var crc = 0;
    for (var i = 0; i < page.length; i++) crc = ((crc << 8) ^ CRC[((crc >>> 24) ^ page[i]) & 0xFF]) >>> 0;
    return crc;
  }

  function planOgg(b) {
    var pages = [], i = 0, serial = null;
    while (i + 27 <= b.length) {
      if (tag(b, i) !== 'OggS' || b[i + 4] !== 0) return null;
      var segments = b[i + 26], body = 0;
      if (i + 27 + segments > b.length) break;
      for (var s = 0; s < segments; s++) body += b[i + 27 + s];
      var length = 27 + segments + body;
      if (i + length > b.length) break;  // a file cut short: keep the whole pages
      var lo = le32(b, i + 6), hi = le32(b, i + 10);
      var pageSerial = le32(b, i + 14);
      if (serial === null) serial = pageSerial;
      else if (pageSerial !== serial) return null;  // several streams (a video, chained files): decode whole
      pages.push({ at: i, length: length, flags: b[i + 5], granule: hi === 0xFFFFFFFF && lo === 0xFFFFFFFF ? -1 : hi * 4294967296 + lo,
        segmentsEnd: i + 27 + segments });
      i += length;
    }
    if (pages.length < 3) return null;
    var head = b.subarray(pages[0].segmentsEnd, pages[0].segmentsEnd + 19), rate, preskip = 0, codec;
    // Opus only: a Vorbis decoder drops the first packet's samples, which depends on its block size
    if (tag(head, 0) === 'Opus' && tag(head, 4) === 'Head') { codec = 'opus'; rate = 48000; preskip = le16(head, 10); }
    else return null;
    var h = 0;  // header pages: their granule positions are 0 (or -1 where no packet ends)
    while (h < pages.length && pages[h].granule <= 0) h++;
    if (h === pages.length || !rate) return null;
    // a unit is a run of pages from one that starts a packet to the next that does
    var starts = [], times = [];
    for (var p = h; p < pages.length; p++) {
      if (pages[p].flags & 1) continue;
      var before = p === h ? 0 : pages[p - 1].granule;
      if (before < 0) continue;
      starts.push(p);
      times.push(p === h ? 0 : Math.max(0, before - preskip) / rate);
    }
    var last = pages[pages.length - 1].granule;
    if (!starts.length || last <= 0) return null;
    starts.push(pages.length);
    var duration = Math.max(0, last - preskip) / rate;
    var headers = b.subarray(0, pages[h].at);
    return {
      // a cut's decoder drops the stream's pre-skip again: its first sample is that much later
      format: codec, duration: duration, units: Float64Array.from(times), preroll: 1, skip: preskip / rate, native: true,
      build: function (from, to) {
        var first = starts[from], end = starts[to];
        if (first === h) return b.slice(0, pages[end - 1].at + pages[end - 1].length).buffer;  // the file's own start
        var base = pages[first - 1].granule, parts = [headers];
        for (var p = first; p < end; p++) {
          var page = b.slice(pages[p].at, pages[p].at + pages[p].length);
          var view = new DataView(page.buffer);
          if (pages[p].granule >= 0) {
            var g = pages[p].granule - base;
            view.setUint32(6, g % 4294967296, true);
            view.setUint32(10, Math.floor(g / 4294967296), true);
          }
          view.setUint32(18, h + p - first, true);  // sequence numbers run on from the header pages
          view.setUint32(22, 0, true);
          view.setUint32(22, oggCrc(page), true);
          parts.push(page);
        }
        return concat(parts);
      },
    };
  }

  /* ---- MP4 / M4A / MOV with AAC ---- */
  var AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

  /** Child boxes of [from, to): {type: [{at, body, end}]}. */
  function boxes(b, from, to) {
    var out = {}, i = from;
    while (i + 8 <= to) {
      var size = u32(b, i), type = tag(b, i + 4), body = i + 8;
      if (size === 1) { size = u32(b, i + 8) * 4294967296 + u32(b, i + 12); body = i + 16; }
      else if (size === 0) size = to - i;
      if (size < 8 || i + size > to) break;
      (out[type] = out[type] || []).push({ at: i, body: body, end: i + size });
      i += size;
    }
    return out;
  }

  function child(b, box, path) {
    for (var k = 0; k < path.length && box; k++) {
      var found = boxes(b, box.body, box.end)[path[k]];
      box = found && found[0];
    }
    return box || null;
  }

  /** The AudioSpecificConfig inside an esds box, or null. */
  function esdsConfig(b, esds) {
    var i = esds.body + 4, end = esds.end;  // after version and flags
    function descriptor() {
      if (i >= end) return null;
      var t = b[i++], n = 0, k = 0;
      do { n = (n << 7) | (b[i] & 0x7F); } while ((b[i++] & 0x80) && ++k < 4);
      return { tag: t, at: i, end: Math.min(end, i + n) };
    }
    var es = descriptor();
    if (!es || es.tag !== 3) return null;
    i = es.at + 2;
    var flags = b[i++];
    if (flags & 0x80) i += 2;
    if (flags & 0x40) i += 1 + b[i];
    if (flags & 0x20) i += 2;
    var dc = descriptor();
    if (!dc || dc.tag !== 4) return null;
    var objectType = b[dc.at];
    if (objectType !== 0x40 && objectType !== 0x66 && objectType !== 0x67 && objectType !== 0x68) return null;  // AAC only
    i = dc.at + 13;
    var ds = descriptor();
    if (!ds || ds.tag !== 5 || ds.end - ds.at < 2) return null;
    return b.subarray(ds.at, ds.end);
  }

  /** {profile, rateIndex, channels} for ADTS headers, from an AudioSpecificConfig; null where ADTS cannot say it. */
  function adtsParams(asc) {
    var bit = 0;
    function read(n) {
      var v = 0;
      for (var k = 0; k < n; k++, bit++) v = (v << 1) | ((asc[bit >> 3] >> (7 - (bit & 7))) & 1);
      return v;
    }
    var aot = read(5);
    if (aot === 31) aot = 32 + read(6);
    var rateIndex = read(4);
    if (rateIndex === 15) { var hz = read(24); rateIndex = AAC_RATES.indexOf(hz); }
    var channels = read(4);
    if (aot === 5 || aot === 29) {  // HE-AAC: ADTS carries the core AAC; the decoder finds the SBR itself
      var ext = read(4);
      if (ext === 15) read(24);
      aot = read(5);
    }
    if (aot < 1 || aot > 4 || rateIndex < 0 || rateIndex > 12 || channels < 1 || channels > 7) return null;
    return { profile: aot - 1, rateIndex: rateIndex, channels: channels };
  }

  function planMp4(b) {
    var top = boxes(b, 0, b.length);
    if (!top.ftyp && !top.moov) return null;
    var moov = top.moov && top.moov[0];
    if (!moov) return null;
    var traks = boxes(b, moov.body, moov.end).trak || [];
    for (var t = 0; t < traks.length; t++) {
      var hdlr = child(b, traks[t], ['mdia', 'hdlr']);
      if (!hdlr || tag(b, hdlr.body + 8) !== 'soun') continue;
      return planTrack(b, traks[t]);  // the first sound track, as players choose
    }
    return null;
  }

  function planTrack(b, trak) {
    var mdhd = child(b, trak, ['mdia', 'mdhd']), stbl = child(b, trak, ['mdia', 'minf', 'stbl']);
    if (!mdhd || !stbl) return null;
    var v1 = b[mdhd.body] === 1, scale = u32(b, mdhd.body + (v1 ? 20 : 12));
    var tables = boxes(b, stbl.body, stbl.end);
    var stsd = tables.stsd && tables.stsd[0];
    if (!stsd || !scale) return null;
    var entry = boxes(b, stsd.body + 8, stsd.end).mp4a;
    if (!entry) return null;
    entry = entry[0];
    var version = (b[entry.body + 8] << 8) | b[entry.body + 9];  // QuickTime sound description version
    var extra = version === 1 ? 16 : version === 2 ? 36 : 0;
    var inner = boxes(b, entry.body + 28 + extra, entry.end);
    var esds = inner.esds ? inner.esds[0] : inner.wave ? child(b, inner.wave[0], ['esds']) : null;
    var asc = esds && esdsConfig(b, esds), params = asc && adtsParams(asc);
    if (!params) return null;
    var stsz = tables.stsz && tables.stsz[0], stsc = tables.stsc && tables.stsc[0];
    var stco = tables.stco ? tables.stco[0] : null, co64 = tables.co64 ? tables.co64[0] : null;
    var stts = tables.stts && tables.stts[0];
    if (!stsz || !stsc || !(stco || co64) || !stts) return null;
    var uniform = u32(b, stsz.body + 4), count = u32(b, stsz.body + 8);
    // a table that claims more frames than the file has bytes is damaged: decode the file whole
    if (!count || count > b.length || (!uniform && stsz.body + 12 + 4 * count > stsz.end)) return null;
    var sizes = new Uint32Array(count), k;
    for (k = 0; k < count; k++) sizes[k] = uniform || u32(b, stsz.body + 12 + 4 * k);
    var chunks = u32(b, (stco || co64).body + 4);
    if (chunks > count || (stco || co64).body + 8 + (stco ? 4 : 8) * chunks > (stco || co64).end) return null;
    var chunkAt = new Float64Array(chunks);
    for (k = 0; k < chunks; k++) {
      chunkAt[k] = stco ? u32(b, stco.body + 8 + 4 * k) : u32(b, co64.body + 8 + 8 * k) * 4294967296 + u32(b, co64.body + 12 + 8 * k);
    }
    var offsets = new Float64Array(count), runs = Math.min(u32(b, stsc.body + 4), Math.floor((stsc.end - stsc.body - 8) / 12)), sample = 0;
    for (var r = 0; r < runs && sample < count; r++) {
      var firstChunk = u32(b, stsc.body + 8 + 12 * r) - 1, perChunk = u32(b, stsc.body + 12 + 12 * r);
      var next = r + 1 < runs ? u32(b, stsc.body + 8 + 12 * (r + 1)) - 1 : chunks;
      for (var c = firstChunk; c < next && c < chunks && sample < count; c++) {
        var at = chunkAt[c];
        for (k = 0; k < perChunk && sample < count; k++) { offsets[sample] = at; at += sizes[sample]; sample++; }
      }
    }
    if (sample < count) return null;
    // the edit list's start (the encoder's priming samples) is where a player's time 0 is
    var elst = child(b, trak, ['edts', 'elst']), lead = 0;
    if (elst) {
      var wide = b[elst.body] === 1, edits = u32(b, elst.body + 4);
      for (var m = 0, at2 = elst.body + 8; m < edits; m++, at2 += wide ? 20 : 12) {
        var mediaTime = wide ? u32(b, at2 + 8) * 4294967296 + u32(b, at2 + 12) : u32(b, at2 + 4);
        if (mediaTime === 0xFFFFFFFF || (wide && u32(b, at2 + 8) === 0xFFFFFFFF)) continue;  // an empty edit
        lead = mediaTime;
        break;
      }
    }
    var times = new Float64Array(count), entries = Math.min(u32(b, stts.body + 4), Math.floor((stts.end - stts.body - 8) / 8)), dts = 0;
    sample = 0;
    for (var e = 0; e < entries && sample < count; e++) {
      var n = u32(b, stts.body + 8 + 8 * e), delta = u32(b, stts.body + 12 + 8 * e);
      for (k = 0; k < n && sample < count; k++) { times[sample++] = (dts - lead) / scale; dts += delta; }
    }
    for (; sample < count; sample++) times[sample] = (dts - lead) / scale;
    for (k = 0; k < count; k++) if (offsets[k] + sizes[k] > b.length || sizes[k] + 7 > 8191) return null;
    return {
      format: 'aac', duration: (dts - lead) / scale, units: times, preroll: 2,
      build: function (from, to) {
        var n = 0, i;
        for (i = from; i < to; i++) n += sizes[i] + 7;
        var out = new Uint8Array(n), at = 0;
        for (i = from; i < to; i++) {
          var length = sizes[i] + 7;
          out[at] = 0xFF;
          out[at + 1] = 0xF1;  // MPEG-4, layer 0, no CRC
          out[at + 2] = (params.profile << 6) | (params.rateIndex << 2) | (params.channels >> 2);
          out[at + 3] = ((params.channels & 3) << 6) | (length >> 11);
          out[at + 4] = (length >> 3) & 0xFF;
          out[at + 5] = ((length & 7) << 5) | 0x1F;
          out[at + 6] = 0xFC;
          out.set(b.subarray(offsets[i], offsets[i] + sizes[i]), at + 7);
          at += length;
        }
        return out.buffer;
      },
    };
  }

  function plan(bytes) {
    var b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    if (b.length < 64) return null;
    var found = null;
    try {
      if (tag(b, 0) === 'OggS') found = planOgg(b);
      else if (tag(b, 0) === 'RIFF') found = planWav(b);
      else if (tag(b, 4) === 'ftyp' || tag(b, 4) === 'moov' || tag(b, 4) === 'wide' || tag(b, 4) === 'free' || tag(b, 4) === 'mdat') found = planMp4(b);
      else found = planMp3(b);
    } catch (err) {
      found = null;  // a file this reads wrongly is decoded whole, as before
    }
    if (!found || !(found.duration > 0) || found.units.length < 2) return null;
    return found;
  }

  self.QuireAudioSplit = { plan: plan, _adtsParams: adtsParams, _oggCrc: oggCrc };
})();
