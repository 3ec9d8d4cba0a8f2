/* Recorded lectures: the engine asks the page for one piece of a recording's transcript at a time
 * (py/quire/transcripts.py, through quire._pageMethods.transcribe).  WebAudio decodes the file here,
 * at 16 kHz (decodeAudioData resamples to its context's rate), and Whisper tiny.en (QuireVoice's
 * worker) transcribes each piece off the main thread.
 *
 *   quire._pageMethods.transcribe({key, data, piece, pieceSeconds})
 *     -> {text, start, end, pieces, silent, voiced}  or  {needData: true} when the page lacks this file
 *   quire.recording(sourceId) -> File or null: the recording as added, for playing a cited moment
 *
 * Pieces end in the longest pause of the QUIET_S before each multiple of pieceSeconds, so a word is rarely cut in two; the same file always gives the same pieces,
 * which is what lets a cancelled Train resume from the engine's cache.  Only the file being
 * transcribed is held decoded (16 kHz mono, 16-bit), and it is let go after its last piece.
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

  var current = { key: null, bytes: null, audio: null };  // the recording being transcribed

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
  var TAPS = (function (n, cut) {
    var h = new Float64Array(n), sum = 0, i;
    for (i = 0; i < n; i++) {
      var k = i - (n - 1) / 2;
      var sinc = k === 0 ? 2 * cut : Math.sin(2 * Math.PI * cut * k) / (Math.PI * k);
      h[i] = sinc * (0.42 - 0.5 * Math.cos(2 * Math.PI * i / (n - 1)) + 0.08 * Math.cos(4 * Math.PI * i / (n - 1)));
      sum += h[i];
    }
    for (i = 0; i < n; i++) h[i] /= sum;
    return h;
  })(63, 7600 / DECODE_RATE);

  /** The recording as 16-bit mono at 16 kHz: the browser decodes it at 32 kHz, then it is mixed
   * down and halved here a minute at a time between turns of the event loop, and the browser's
   * float copy is let go (a 90-minute lecture: 173 MB held instead of 1.4 GB for stereo floats). */
  function decode(bytes) {
    var ctx = new OfflineAudioContext(1, 1, DECODE_RATE);
    var copy = bytes.slice().buffer;  // decodeAudioData takes the buffer away
    return new Promise(function (resolve, reject) {
      ctx.decodeAudioData(copy, resolve, reject);
    }).then(function (audio) {
      if (!audio || !audio.length) throw fail(TEXT.undecodable, 'undecodable');
      var n = audio.length, half = (TAPS.length - 1) / 2;
      var out = new Int16Array(Math.ceil(n / 2));
      var channels = [];
      for (var c = 0; c < audio.numberOfChannels; c++) channels.push(audio.getChannelData(c));
      var step = 60 * RATE;
      function mix(from) {
        var to = Math.min(out.length, from + step);
        // this minute and the filter's reach on either side, mixed down once
        var lo = Math.max(0, 2 * from - half), hi = Math.min(n, 2 * (to - 1) + half + 1);
        var mono = new Float32Array(hi - lo);
        for (var c = 0; c < channels.length; c++) {
          var ch = channels[c];
          for (var i = lo; i < hi; i++) mono[i - lo] += ch[i];
        }
        var scale = 1 / channels.length;
        for (var j = from; j < to; j++) {
          var centre = 2 * j, sum = 0;
          var a = Math.max(lo, centre - half), b = Math.min(hi - 1, centre + half);
          for (var x = a; x <= b; x++) sum += TAPS[x - centre + half] * mono[x - lo];
          var v = sum * scale;
          out[j] = v >= 1 ? 32767 : v <= -1 ? -32768 : Math.round(v * 32767);
        }
        if (to === out.length) return out;
        return new Promise(function (resolve) { setTimeout(resolve, 0); }).then(function () { return mix(to); });
      }
      return mix(0);
    }, function () { throw fail(TEXT.undecodable, 'undecodable'); });
  }

  /** Samples [from, to) as floats. */
  function mono(audio, from, to) {
    var out = new Float32Array(Math.max(0, to - from));
    for (var i = from; i < to; i++) out[i - from] = audio[i] / 32768;
    return out;
  }

  /** Where piece k starts, in samples: 0 for the first, then the middle of the longest quiet
   * stretch in the QUIET_S before k * pieceSeconds (a pause between sentences rather than one
   * between words; frames within 4x the quietest, or digital silence, count as quiet). */
  function boundary(audio, k, pieceSeconds) {
    if (k === 0) return 0;
    var end = Math.min(audio.length, Math.round(k * pieceSeconds * RATE));
    var start = Math.max(0, end - QUIET_S * RATE);
    var pcm = mono(audio, start, end);
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

  q._pageMethods.transcribe = function (a) {
    if (!self.QuireVoice || !QuireVoice.available()) throw fail(TEXT.notIncluded, 'not-included');
    if (a.data) current = { key: a.key, bytes: a.data, audio: null };
    if (current.key !== a.key) return { needData: true };
    var ready = current.audio ? Promise.resolve(current.audio) : decode(current.bytes).then(function (audio) {
      current.audio = audio;
      current.bytes = null;  // the decoded sound is all that is needed now
      return audio;
    });
    return ready.then(function (audio) {
      var pieces = Math.max(1, Math.ceil(audio.length / (a.pieceSeconds * RATE)));
      if (a.piece >= pieces) throw new Error('piece ' + a.piece + ' of a recording with ' + pieces);
      var from = boundary(audio, a.piece, a.pieceSeconds);
      var to = a.piece + 1 < pieces ? boundary(audio, a.piece + 1, a.pieceSeconds) : audio.length;
      var pcm = mono(audio, from, to);
      if (a.piece + 1 === pieces) current = { key: null, bytes: null, audio: null };  // done: let it go
      var done = { text: '', start: from / RATE, end: to / RATE, pieces: pieces, silent: true, voiced: 0 };
      if (QuireVoice.silent(pcm)) return done;
      var speech = voiced(pcm);
      return QuireVoice.transcribe(padded(pcm)).then(function (r) {
        return { text: r.text || '', start: from / RATE, end: to / RATE, pieces: pieces, silent: !!r.silent, voiced: speech };
      });
    }, function (err) {
      current = { key: null, bytes: null, audio: null };
      throw err;
    });
  };
  /* Media types by extension, so the browser knows what it plays (video files play in <video>). */
  var TYPES = { mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/ogg',
    wav: 'audio/wav', flac: 'audio/flac', webm: 'video/webm', mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime' };

  /** recording(sourceId) -> a File of the recording as it was added (to play a cited moment), or
   * null when this browser does not keep originals (Settings: Keep original files). */
  q.recording = function (sourceId) {
    return q._call('recording', [sourceId]).then(function (r) {
      if (!r) return null;
      var ext = ((/\.([a-z0-9]+)$/i.exec(r.name) || [])[1] || '').toLowerCase();
      return new File([q._fromBase64(r.base64)], r.name, { type: TYPES[ext] || 'application/octet-stream' });
    });
  };
})();
