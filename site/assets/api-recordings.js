/* Recorded lectures: the engine asks the page for one piece of a recording's transcript at a time
 * (py/quire/transcripts.py, through quire._pageMethods.transcribe).  WebAudio decodes the file here,
 * a few minutes at a time (audio-split.js), and Whisper (QuireVoice's worker: tiny.en for English,
 * multilingual base for German and for the language check) transcribes each piece off the main thread.
 *
 *   quire._pageMethods.transcribe({key, data, piece, pieceSeconds, language})
 *     -> {text, start, end, pieces, silent, voiced, language, probability}  or  {needData: true} when the
 *        page lacks this file.  data: the recording, read from the store by the engine's worker
 *        in JavaScript (QuireStore.library.original): its bytes never enter the engine's heap.
 *        language: the recording's, once known ('en', 'de'); without it the
 *        page guesses from this piece (multilingual Whisper base) and says what it heard.
 *   quire.recording(sourceId) -> File or null: the recording as added, for playing a cited moment
 *
 * Pieces end in the longest pause of the QUIET_S before each multiple of pieceSeconds, so a word is rarely cut in two; the same file always gives the same pieces,
 * which is what lets a cancelled Train resume from the engine's cache.  Only the file being
 * transcribed is held, with at most two decoded stretches of it, and it is let go after its last piece.
 */
(function () {
  'use strict';
  var q = self.quire;
  var t = QuireI18n.t;
  var RATE = 16000;    // Whisper's input rate
  var QUIET_S = 6;     // how far before a piece's nominal end its cut may move to find a pause (pieceSeconds + QUIET_S <= 28)
  var FRAME = RATE / 10;
  var WINDOW_S = 30;   // Whisper's window: every piece is padded to it

  var TEXT = {
    notIncluded: t('Speech transcription is not included in this copy of Quire (it was built with --no-voice).'),
    undecodable: t('this browser cannot decode it: it has no audio track, or its codec is not one this browser plays. Chromium, Firefox and Safari all decode MP3, M4A (AAC), Ogg or WebM (Opus), WAV and FLAC: convert the recording to one of them'),
  };

  var current = { key: null, rec: null };  // the recording being transcribed

  function fail(message, kind) {
    var err = new Error(message);
    err.kind = kind;
    return err;
  }

  /* The browser decodes at twice Whisper's rate and the page halves it through this low-pass
   * filter (63 taps, Blackman window, cut at 7.6 kHz).  Chromium's own resampling straight to 16 kHz
   * dulled 5-8 kHz (the hiss of s, f, th): tiny.en heard a 3-minute lecture with 0.265 of its words
   * wrong against 0.254 from ffmpeg's decoding, and with this 0.248 (tests/bench/lecture_pieces.py). */
  var DECODE_RATE = 2 * RATE;
  var HALF = 31;  // the filter's reach on either side, in DECODE_RATE samples
  /** The filter's 64 taps for output samples that fall `frac` (0 <= frac < 1) of a sample past a
   * decoded one: a windowed sinc at the shifted points, so a chunk whose first sample does not fall
   * on the 32 kHz grid of the whole recording is still read at the right instants.  frac 0 gives
   * the 63-tap filter (and a zero). */
  function taps(frac) {
    var h = new Float64Array(2 * HALF + 2), sum = 0, cut = 7600 / DECODE_RATE;
    for (var i = 0; i < h.length; i++) {
      var k = i - HALF - frac;
      if (Math.abs(k) >= HALF) continue;
      var sinc = k === 0 ? 2 * cut : Math.sin(2 * Math.PI * cut * k) / (Math.PI * k);
      h[i] = sinc * (0.42 + 0.5 * Math.cos(Math.PI * k / HALF) + 0.08 * Math.cos(2 * Math.PI * k / HALF));
      sum += h[i];
    }
    for (i = 0; i < h.length; i++) h[i] /= sum;
    return h;
  }

  /** Mixes a decoded AudioBuffer (at DECODE_RATE) down to mono, halves it through the filter and writes
   * 16-bit samples [from, to) of `out` (16 kHz), where out[j] is the buffer's sample 2 * j - origin
   * (origin: the buffer's first sample, in DECODE_RATE samples from the recording's start).  Works a
   * minute at a time between turns of the event loop. */
  function halve(audio, out, outStart, from, to, origin) {
    var n = audio.length, base = Math.floor(origin), h = taps(Math.ceil(origin) - origin);
    var shift = base === origin ? 0 : 1;  // sample 2j - origin lies `frac` past 2j - ceil(origin)
    var channels = [];
    for (var c = 0; c < audio.numberOfChannels; c++) channels.push(audio.getChannelData(c));
    var scale = 1 / channels.length, step = 60 * RATE;
    function mix(a) {
      var z = Math.min(to, a + step);
      // this minute and the filter's reach on either side, mixed down once
      var lo = Math.max(0, 2 * a - base - shift - HALF), hi = Math.min(n, 2 * (z - 1) - base - shift + HALF + 2);
      var mono = new Float32Array(Math.max(0, hi - lo));
      for (var c = 0; c < channels.length; c++) {
        var ch = channels[c];
        for (var i = lo; i < hi; i++) mono[i - lo] += ch[i];
      }
      for (var j = a; j < z; j++) {
        var centre = 2 * j - base - shift, sum = 0;
        var x0 = Math.max(lo, centre - HALF), x1 = Math.min(hi - 1, centre + HALF + 1);
        for (var x = x0; x <= x1; x++) sum += h[x - centre + HALF] * mono[x - lo];
        var v = sum * scale;
        out[j - outStart] = v >= 1 ? 32767 : v <= -1 ? -32768 : Math.round(v * 32767);
      }
      if (z >= to) return out;
      return new Promise(function (resolve) { setTimeout(resolve, 0); }).then(function () { return mix(z); });
    }
    return from < to ? mix(from) : Promise.resolve(out);
  }

  function decodeAudio(buffer) {
    var ctx = new OfflineAudioContext(1, 1, DECODE_RATE);
    return new Promise(function (resolve, reject) {
      ctx.decodeAudioData(buffer, resolve, reject);
    }).then(function (audio) {
      if (!audio || !audio.length) throw fail(TEXT.undecodable, 'undecodable');
      return audio;
    }, function () { throw fail(TEXT.undecodable, 'undecodable'); });
  }

  /* A recording is decoded CHUNK_S at a time where audio-split.js can cut its file (MP3, M4A/MP4
   * with AAC, Ogg Opus, WAV), so a 90-minute lecture never lies in memory as floats:
   * at most two chunks are kept, as 16-bit mono at 16 kHz.  Other files are decoded whole. */
  var CHUNK_S = 120;

  /** open(bytes) -> {length (16 kHz samples), region(from, to) -> {offset, data: Int16Array}} */
  function open(bytes) {
    var plan = self.QuireAudioSplit && QuireAudioSplit.plan(bytes);
    var chunkS = q._recordingChunkSeconds || CHUNK_S;
    if (!plan || plan.duration <= chunkS) return whole(bytes);
    var units = plan.units, starts = [0];  // the unit each chunk keeps from
    for (var u = 1; u < units.length; u++) if (units[u] >= starts.length * chunkS) starts.push(u);
    var length = Math.round(plan.duration * RATE);
    var at = function (k) { return k === 0 ? 0 : k >= starts.length ? length : Math.round(units[starts[k]] * RATE); };
    var kept = {}, fallback = null;

    function chunk(k) {
      if (kept[k]) return kept[k];
      var first = Math.max(0, starts[k] - plan.preroll);
      var last = k + 1 < starts.length ? Math.min(units.length, starts[k + 1] + 1) : units.length;
      var origin = (units[first] + (first === 0 && plan.native ? 0 : plan.skip || 0)) * DECODE_RATE;
      var from = at(k), to = at(k + 1);
      kept[k] = decodeAudio(plan.build(first, last)).then(function (audio) {
        return halve(audio, new Int16Array(to - from), from, from, to, origin);
      }).then(function (data) { return { from: from, data: data }; });
      kept[k].catch(function () { delete kept[k]; });
      return kept[k];
    }

    function region(from, to) {
      if (fallback) return fallback.then(function (rec) { return rec.region(from, to); });
      var wanted = [];
      for (var k = 0; k < starts.length; k++) if (at(k) < to && at(k + 1) > from) wanted.push(k);
      Object.keys(kept).forEach(function (k) { if (wanted.indexOf(+k) < 0 && +k < wanted[0]) delete kept[k]; });
      return Promise.all(wanted.map(chunk)).then(function (parts) {
        var out = new Int16Array(to - from);
        parts.forEach(function (p) {
          var a = Math.max(from, p.from), z = Math.min(to, p.from + p.data.length);
          if (z > a) out.set(p.data.subarray(a - p.from, z - p.from), a - from);
        });
        return { offset: from, data: out };
      }, function () {
        // a cut this browser would not decode: the whole file, as before (the same length, so the pieces stay)
        kept = {};
        fallback = fallback || whole(bytes);
        return fallback.then(function (rec) { return rec.region(from, to); });
      });
    }
    return Promise.resolve({ length: length, region: region, chunks: starts.length, format: plan.format });
  }

  /** The whole file decoded at once, as the browser does it: for what audio-split.js cannot cut. */
  function whole(bytes) {
    return decodeAudio(bytes.slice().buffer).then(function (audio) {  // decodeAudioData takes the buffer away
      var out = new Int16Array(Math.ceil(audio.length / 2));
      return halve(audio, out, 0, 0, out.length, 0);
    }).then(function (data) {
      return {
        length: data.length, chunks: 1, format: null,
        region: function (from, to) {
          var out = new Int16Array(to - from);
          out.set(data.subarray(Math.min(from, data.length), Math.min(to, data.length)));
          return Promise.resolve({ offset: from, data: out });
        },
      };
    });
  }

  /** Samples [from, to) of a region as floats. */
  function mono(region, from, to) {
    var out = new Float32Array(Math.max(0, to - from)), d = region.data, o = region.offset;
    for (var i = from; i < to; i++) out[i - from] = d[i - o] / 32768;
    return out;
  }

  /** Where piece k starts, in samples: 0 for the first, then the middle of the longest quiet
   * stretch in the QUIET_S before k * pieceSeconds (a pause between sentences rather than one
   * between words; frames within 4x the quietest, or digital silence, count as quiet). */
  function boundary(region, length, k, pieceSeconds) {
    if (k === 0) return 0;
    var end = Math.min(length, Math.round(k * pieceSeconds * RATE));
    var start = Math.max(0, end - QUIET_S * RATE);
    var pcm = mono(region, start, end);
    var energy = [];
    for (var f = 0; f + FRAME <= pcm.length; f += FRAME) {
      var sum = 0;
      for (var i = f; i < f + FRAME; i++) sum += pcm[i] * pcm[i];
      energy.push(sum);
    }
    if (!energy.length) return end;
    var quiet = Math.max(4 * Math.min.apply(null, energy), FRAME * 1e-8);
    var best = { from: 0, length: 0 }, run = 0;
    for (var j = 0; j <= energy.length; j++) {
      if (j < energy.length && energy[j] <= quiet) { run++; continue; }
      if (run > best.length) best = { from: j - run, length: run };
      run = 0;
    }
    return start + Math.round((best.from + best.length / 2) * FRAME);
  }

  /** Seconds of a piece that carry sound: tenths of a second louder than -36 dBFS and than a
   * seventh of the piece's loud end (its 95th percentile).  The engine sets the words Whisper gave
   * against them: English speech gives two or three a second, tiny.en hearing German far fewer. */
  function voiced(pcm) {
    var rms = [];
    for (var f = 0; f + FRAME <= pcm.length; f += FRAME) {
      var sum = 0;
      for (var i = f; i < f + FRAME; i++) sum += pcm[i] * pcm[i];
      rms.push(Math.sqrt(sum / FRAME));
    }
    if (!rms.length) return 0;
    var loud = rms.slice().sort(function (a, b) { return a - b; })[Math.floor(0.95 * (rms.length - 1))];
    var floor = Math.max(0.016, loud / 7);
    return rms.filter(function (x) { return x > floor; }).length * FRAME / RATE;
  }

  /** A piece with silence after it up to Whisper's whole 30 s window.  A shorter clip makes the
   * voice worker shorten the window too (right for a question), and then Whisper's timestamps run
   * ahead of the sound, so whisper.cpp took a piece's last sentence for the end of the audio and
   * dropped it (seen on every piece of a 68 s lecture). */
  function padded(pcm) {
    if (pcm.length >= WINDOW_S * RATE) return pcm;
    var out = new Float32Array(WINDOW_S * RATE);
    out.set(pcm);
    return out;
  }

  /* The languages recordings are transcribed in: English by tiny.en, German by multilingual base.
   * A recording's language is the multilingual model's guess at the 30 s from its first piece with
   * DETECT_S of sound on; unless that is sure of English or German, averaged over up to three such
   * windows (one window's guess moves a lot on hard speech: the
   * same espeak-ng German read as German at 0.77 or Latin at 0.29 as its window moved by a few
   * seconds); the engine passes it back with every later piece and keeps it with the cached ones. */
  var LANGUAGES = ['en', 'de'];
  // Whisper's other languages a person may record in, named in the engine's refusal (the German
  // catalog translates the names)
  var NAMES = { fr: 'French', es: 'Spanish', it: 'Italian', pt: 'Portuguese', nl: 'Dutch', pl: 'Polish', ru: 'Russian',
    uk: 'Ukrainian', cs: 'Czech', sv: 'Swedish', da: 'Danish', no: 'Norwegian', fi: 'Finnish', tr: 'Turkish', el: 'Greek',
    hu: 'Hungarian', ro: 'Romanian', ar: 'Arabic', he: 'Hebrew', fa: 'Persian', hi: 'Hindi', zh: 'Chinese', ja: 'Japanese',
    ko: 'Korean', vi: 'Vietnamese', th: 'Thai', id: 'Indonesian', ca: 'Catalan', hr: 'Croatian', sk: 'Slovak' };
  var DETECT_S = 4;
  var SHORT_S = 1;  // a stretch with 1-4 s of sound is guessed too, and its guess kept only when sure (SURE):
                    // real German speech of 1.4-2.6 s was heard as German at 0.92-0.99 (Thorsten-Voice clips)
  var WINDOWS = 3;
  var SURE = 0.6;  // a first window this sure of English or German decides alone
  var CLOSE = 0.5;  // English or German at half the likeliest third language's share is taken (espeak-ng's
                    // German was once guessed Latin first); less, and the recording is refused as that language

  /** {language, probability[, other]} for the recording from sample `from` on, or null when this
   * build or this stretch cannot say. */
  function guessLanguage(rec, from) {
    if (!QuireVoice.multilingual || !QuireVoice.multilingual()) return Promise.resolve(null);
    var sums = {}, heard = 0, k = 0;
    function next() {
      var a = from + k * WINDOW_S * RATE;
      if (k >= WINDOWS || a >= rec.length) return Promise.resolve();
      k++;
      return rec.region(a, Math.min(rec.length, a + WINDOW_S * RATE)).then(function (region) {
        var pcm = mono(region, region.offset, region.offset + region.data.length);
        if (QuireVoice.silent(pcm) || voiced(pcm) < DETECT_S) return next();
        return QuireVoice.detect(padded(pcm)).then(function (g) {
          if (!g) return next();
          heard++;
          g.guesses.forEach(function (x) { sums[x[0]] = (sums[x[0]] || 0) + x[1]; });
          // one sure window is enough (a window takes the multilingual model several seconds)
          if (heard === 1 && LANGUAGES.indexOf(g.language) >= 0 && g.probability >= SURE) return null;
          return next();
        });
      });
    }
    return next().then(function () {
      if (!heard) return null;
      var ranked = Object.keys(sums).sort(function (x, y) { return sums[y] - sums[x]; });
      var top = ranked[0], ours = ranked.filter(function (x) { return LANGUAGES.indexOf(x) >= 0; })[0];
      var share = function (x) { return Math.round(1000 * sums[x] / heard) / 1000; };
      if (LANGUAGES.indexOf(top) >= 0) return { language: top, probability: share(top) };
      if (ours && sums[ours] >= CLOSE * sums[top]) return { language: ours, probability: share(ours) };
      return { language: top, probability: share(top), other: true };
    });
  }

  /** The guess at a stretch with little sound (a short clip): kept only when sure of English or
   * German, else null (heard as English, with the checks on what Whisper writes). */
  function guessShort(pcm) {
    if (!QuireVoice.multilingual || !QuireVoice.multilingual()) return Promise.resolve(null);
    return QuireVoice.detect(padded(pcm)).then(function (g) {
      return g && LANGUAGES.indexOf(g.language) >= 0 && g.probability >= SURE ? { language: g.language, probability: g.probability } : null;
    });
  }

  q._pageMethods.transcribe = function (a) {
    if (!self.QuireVoice || !QuireVoice.available()) throw fail(TEXT.notIncluded, 'not-included');
    if (a.data) current = { key: a.key, rec: null, bytes: a.data };
    if (current.key !== a.key) return { needData: true };
    var mine = current;
    var ready = mine.rec || (mine.rec = open(mine.bytes));
    mine.bytes = null;  // the plan holds them now
    return ready.then(function (rec) {
      var ps = a.pieceSeconds, pieces = Math.max(1, Math.ceil(rec.length / (ps * RATE)));
      if (a.piece >= pieces) throw new Error('piece ' + a.piece + ' of a recording with ' + pieces);
      var lo = Math.max(0, Math.round(a.piece * ps * RATE) - QUIET_S * RATE);
      var hi = Math.min(rec.length, Math.round((a.piece + 1) * ps * RATE));
      return rec.region(lo, hi).then(function (region) {
        var from = boundary(region, rec.length, a.piece, ps);
        var to = a.piece + 1 < pieces ? boundary(region, rec.length, a.piece + 1, ps) : rec.length;
        var pcm = mono(region, from, Math.min(to, hi));
        if (a.piece + 1 === pieces && current === mine) current = { key: null, rec: null };  // done: let it go
        var done = { text: '', start: from / RATE, end: to / RATE, pieces: pieces, silent: true, voiced: 0, language: a.language || null };
        if (QuireVoice.silent(pcm)) return done;
        var speech = voiced(pcm);
        var decided = a.language || speech < SHORT_S ? Promise.resolve(null)
          : speech < DETECT_S ? guessShort(pcm) : guessLanguage(rec, from);
        return decided.then(function (guess) {
          var language = a.language || (guess && guess.language) || null;
          var reply = { text: '', start: from / RATE, end: to / RATE, pieces: pieces, silent: false, voiced: speech, language: language };
          if (guess) reply.probability = Math.round(guess.probability * 1000) / 1000;
          if (guess && guess.other) {  // neither English nor German: the engine refuses the file
            if (NAMES[language]) reply.languageName = NAMES[language];
            return reply;
          }
          return QuireVoice.transcribe(padded(pcm), { language: language || 'en' }).then(function (r) {
            reply.text = r.text || '';
            reply.silent = !!r.silent;
            return reply;
          });
        });
      });
    }).catch(function (err) {
      if (current === mine) current = { key: null, rec: null };
      throw err;
    });
  };
  /** The recording's 16 kHz samples [from, to) as the pieces see them (tests compare cut and whole decodes). */
  q._recordingSamples = function (bytes, from, to, whole_) {
    return (whole_ ? whole(bytes) : open(bytes)).then(function (rec) {
      to = Math.min(to, rec.length);
      return rec.region(from, to).then(function (r) {
        return { length: rec.length, chunks: rec.chunks, format: rec.format, data: r.data };
      });
    });
  };
  /* Media types by extension, so the browser knows what it plays (video files play in <video>). */
  var TYPES = { mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/ogg',
    wav: 'audio/wav', flac: 'audio/flac', webm: 'video/webm', mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime' };

  /** recording(sourceId) -> a File of the recording as it was added (to play a cited moment), or
   * null when this browser does not keep originals (Settings: Keep original files). */
  q.recording = function (sourceId) {
    return q._call('recording', [sourceId]).then(function (r) {
      return r && q._call('original', [r.id]).then(function (bytes) {
        if (!bytes) return null;
        var ext = ((/\.([a-z0-9]+)$/i.exec(r.name) || [])[1] || '').toLowerCase();
        return new File([bytes], r.name, { type: TYPES[ext] || 'application/octet-stream' });
      });
    });
  };
})();
