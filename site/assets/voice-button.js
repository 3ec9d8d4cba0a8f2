/* The microphone button of Ask and Search: press to record, press again to stop, Esc
 * cancels.  A level meter moves while recording; the transcript lands in the input for
 * editing and is never sent by itself.  Audio stays in this tab and is not stored.
 *
 *   QuireVoiceButton.attach(input, {testid: 'chat-mic'}) -> an element to put next to the input
 *     (hidden when this build has no voice; About then says why)
 */
(function () {
  'use strict';
  var h = QuireUI.h;
  var MAX_SECONDS = 28;  // one Whisper window (30 s) with room for the padding
  var TEXT = {  // every sentence the button shows (one place for the translators)
    label: QuireI18n.t('Speak your question (English only)'),
    start: QuireI18n.t('Recording… press the microphone again to stop, Esc to cancel.'),
    noMic: QuireI18n.t('This browser has no microphone (or no access to one), so voice input cannot record here.'),
    refused: QuireI18n.t('Microphone permission was refused. Allow the microphone for this page in the browser’s site settings, then press the microphone button again.'),
    busy: QuireI18n.t('The microphone is in use by another program or could not be started. Close the other program, then try again.'),
    loading: QuireI18n.t('Loading the voice engine (English only, once per visit)'),
    transcribing: QuireI18n.t('Transcribing (English only)…'),
    empty: QuireI18n.t('No speech was heard. Speak closer to the microphone and try again.'),
    done: QuireI18n.t('Check the transcript, edit it if needed, then send it.'),
    cancelled: QuireI18n.t('Recording cancelled.'),
    opening: QuireI18n.t('Waiting for the microphone… allow it if the browser asks. Press the microphone again to cancel.'),
    aboutOn: QuireI18n.t('Voice input: included. Speak a question in Ask or Search; Whisper tiny.en (English only) transcribes it inside this tab. Audio is never stored or sent anywhere.'),
    aboutOff: QuireI18n.t('Voice input: not included in this copy of Quire (it was built with --no-voice, or on a machine without Emscripten), so the microphone buttons are hidden. Rebuild with “python3 build.py” on a machine with Emscripten to add it.'),
  };

  function micError(err) {
    var name = err && err.name;
    if (name === 'NotAllowedError' || name === 'SecurityError') return TEXT.refused;
    if (name === 'NotFoundError' || name === 'OverconstrainedError' || name === 'TypeError') return TEXT.noMic;
    return TEXT.busy;
  }

  function attach(input, opts) {
    opts = opts || {};
    var id = opts.testid || 'mic';
    if (!self.QuireVoice || !QuireVoice.available()) return h('span', { hidden: true, testid: id + '-none' });
    var fill = h('div', { class: 'progress-fill' });
    var level = h('div', { class: 'progress voice-level', role: 'meter', testid: id + '-level', 'aria-label': 'Microphone level',
      'aria-valuemin': '0', 'aria-valuemax': '100', hidden: true }, fill);
    level.style.width = '5rem';  // sized here: the stylesheet belongs to the layout work
    function showLevel(on) { level.hidden = !on; level.style.display = on ? 'inline-block' : 'none'; }
    showLevel(false);
    var status = h('span', { class: 'small muted voice-status', testid: id + '-status', role: 'status' });
    var button = h('button', { type: 'button', class: 'icon voice-mic', testid: id, title: TEXT.label, 'aria-label': TEXT.label,
      'aria-pressed': 'false', onclick: toggle }, QuireIcons.svg('mic'));
    var wrap = h('span', { class: 'voice', testid: id + '-box' }, button, level, status);
    var rec = null;  // {stream, capture} while recording
    var run = 0;     // bumps on cancel, so a late transcript is dropped

    function say(text) { status.textContent = text; }
    /** The recording could not start: the box says so (data-state 'error') and why. */
    function failed(text) { wrap.setAttribute('data-state', 'error'); say(text); }

    function toggle() {
      if (rec) { stop(); return; }
      if (opening) { opening = null; capture0.cancel(); cancelled(); return; }  // a prompt left unanswered
      if (button.disabled) return;
      start();
    }

    var opening = false;  // between the press and the microphone's answer (a token; null once cancelled)
    var capture0 = null;  // the capture being opened

    function start() {
      if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) { failed(TEXT.noMic); return; }
      if (!QuireVoice.canCapture()) { failed(QuireVoice.TEXT.noCapture); return; }
      var capture;
      try { capture = QuireVoice.capture(); }  // during the press, so that its AudioContext may start
      catch (err) { failed(TEXT.busy); return; }
      var mine = opening = {};
      capture0 = capture;
      wrap.setAttribute('data-state', 'opening');
      say(TEXT.opening);
      // The engine loads when the recording stops, while the recording is decoded.
      capture.ready.then(function () {
        return navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
      }).then(function (stream) {
        if (opening !== mine) { stream.getTracks().forEach(function (t) { t.stop(); }); return; }  // cancelled meanwhile
        opening = false;
        record(stream, capture);
      }, function (err) {
        if (opening !== mine) return;
        opening = false;
        capture.cancel();
        failed(micError(err));
      });
    }

    function record(stream, capture) {
      var r = rec = { stream: stream, capture: capture };
      wrap.setAttribute('data-recorded-ms', '0');
      wrap.setAttribute('data-state', 'starting');
      document.addEventListener('keydown', onKey, true);
      capture.start(stream, { onRecorded: function (ms) {
        if (rec !== r) return;
        wrap.setAttribute('data-recorded-ms', String(ms));
        if (ms >= MAX_SECONDS * 1000) stop();
      } }).then(function (method) {
        if (rec !== r) return;
        wrap.setAttribute('data-capture', method);  // worklet | recorder: which way this browser records
        wrap.setAttribute('data-capture-format', capture.format);
        meter(r);
        showLevel(true);
        button.setAttribute('aria-pressed', 'true');
        button.classList.add('recording');
        wrap.setAttribute('data-state', 'recording');
        say(TEXT.start);
      }, function (err) {
        if (rec !== r) return;
        release();
        capture.cancel();
        wrap.setAttribute('data-state', 'error');
        say(err && err.message || String(err));
      });
    }

    /* The level meter reads the audio thread's analyser when this thread has time; a late frame only shows late. */
    function meter(r) {
      var analyser = r.capture.analyser;
      analyser.fftSize = 1024;
      var wave = new Float32Array(analyser.fftSize);
      (function frame() {
        if (rec !== r) return;
        analyser.getFloatTimeDomainData(wave);
        var sum = 0;
        for (var i = 0; i < wave.length; i++) sum += wave[i] * wave[i];
        var pct = Math.min(100, Math.round(Math.sqrt(sum / wave.length) * 300));
        fill.style.width = pct + '%';
        level.setAttribute('aria-valuenow', String(pct));
        requestAnimationFrame(frame);
      })();
    }

    function onKey(e) {
      if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); cancel(); }
    }

    function release() {
      var r = rec;
      rec = null;
      document.removeEventListener('keydown', onKey, true);
      showLevel(false);
      fill.style.width = '0';
      button.setAttribute('aria-pressed', 'false');
      button.classList.remove('recording');
      if (r) r.stream.getTracks().forEach(function (t) { t.stop(); });
      return r;
    }

    function cancel() {
      run++;
      var r = release();
      if (r) r.capture.cancel();
      button.disabled = false;
      cancelled();
    }

    function cancelled() {
      wrap.setAttribute('data-state', 'cancelled');
      say(TEXT.cancelled);
    }

    function stop() {
      var r = rec;
      if (!r) return;
      var pcm = r.capture.stop(MAX_SECONDS);  // the recording ends now; it is decoded while the engine loads
      pcm.catch(function () {});  // reported below, after the engine loaded
      release();
      var mine = ++run;
      button.disabled = true;
      wrap.setAttribute('data-state', 'transcribing');
      document.addEventListener('keydown', onKeyBusy, true);
      var bar = h('div', { class: 'progress', role: 'progressbar', testid: id + '-progress', 'aria-label': TEXT.loading,
        'aria-valuemin': '0', 'aria-valuemax': '100' }, h('div', { class: 'progress-fill' }));
      say(TEXT.transcribing);
      QuireVoice.load({ onProgress: function (p) {
        if (mine !== run) return;
        if (!bar.parentNode) wrap.appendChild(bar);
        bar.firstChild.style.width = Math.round(p.fraction * 100) + '%';
        bar.setAttribute('aria-valuenow', String(Math.round(p.fraction * 100)));
        say(TEXT.loading + ': ' + Math.round(p.fraction * 100) + '%');
      } }).then(function () {
        if (mine === run) say(TEXT.transcribing);
        return pcm;
      }).then(function (samples) { return QuireVoice.transcribe(samples); }).then(function (result) {
        if (mine !== run) return;
        var text = result.text;
        wrap.setAttribute('data-transcribe-ms', String(result.ms));
        if (!text) { say(TEXT.empty); wrap.setAttribute('data-state', 'empty'); return; }
        input.value = text;
        input.dispatchEvent(new Event('input', { bubbles: true }));
        input.focus();
        wrap.setAttribute('data-state', 'done');
        say(TEXT.done);
      }).catch(function (err) {
        if (mine !== run) return;
        wrap.setAttribute('data-state', 'error');
        say(err && err.message || String(err));
      }).finally(function () {
        if (bar.parentNode) bar.parentNode.removeChild(bar);
        document.removeEventListener('keydown', onKeyBusy, true);
        if (mine === run) button.disabled = false;
      });
    }

    function onKeyBusy(e) {
      if (e.key === 'Escape' && button.disabled) { e.preventDefault(); cancel(); }
    }

    return wrap;
  }

  /* About says whether this copy has voice input, and why not. */
  function about() {
    var section = document.querySelector('[data-view="about"]');
    if (!section) return;
    var on = !!(self.QuireVoice && QuireVoice.available());
    section.appendChild(h('div', { class: 'card about', testid: 'voice-about' }, h('h2', null, 'Voice input'),
      h('p', null, on ? TEXT.aboutOn : TEXT.aboutOff)));
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', about);
  else about();

  self.QuireVoiceButton = { attach: attach, TEXT: TEXT };
})();
