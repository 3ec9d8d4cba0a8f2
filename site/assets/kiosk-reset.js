/* A kiosk's visits (kiosk.js decides whether this page is a kiosk): after some minutes without
 * input the kiosk resets, so that the next visitor starts clean.
 *
 * A reset is one transaction: the known library (kiosk-library.js) comes back with one replacing
 * vault import, and everything a visitor made (chats, study sets, sources, progress) goes with
 * it.  The reset is marked in quire.main before the import and cleared after it, so a page that
 * finds the mark (the tab was reloaded or closed mid-reset) finishes it.  After an idle reset the
 * page reloads: no dialog, chat, player or typed text of the visitor stays, and a kiosk that runs
 * for days starts every visit with a fresh tab.  An idle kiosk nobody touched is not reset again.
 *
 * On its first start a kiosk takes over an empty library only.  A browser that already holds one
 * (someone tried ?kiosk on their own library) keeps it until a person confirms on the page.
 *
 *   quire.kiosk              -> true in kiosk mode
 *   quire.kioskStatus()      -> {on, idleMinutes, state: starting|ready|resetting|takeover|failed, resets, known, error}
 *   quire.kioskReset()       -> resets now, as an idle kiosk does (the page then reloads)
 *   quire.showView('study')  -> shows a view (library, search, ask, study, progress, privacy, settings, about)
 *   quire.uiLanguage()       -> 'en' or 'de';  quire.setUiLanguage('de') reloads the page in German */
(function () {
  'use strict';
  var q = self.quire;
  var K = self.QuireKiosk;
  var STATE = 'quire.kiosk';  // {owned, resetting, clean, key, resets}
  var INPUT = ['pointerdown', 'pointermove', 'keydown', 'wheel', 'touchstart', 'input'];
  var status = { on: K.on, idleMinutes: K.idleMinutes, state: K.on ? 'starting' : 'off', resets: 0, known: null, error: null };

  q.kiosk = K.on;
  q.kioskStatus = function () { return Object.assign({}, status); };
  q.uiLanguage = function () { return QuireI18n.lang; };
  q.setUiLanguage = function (code) { QuireI18n.set(code); };
  q.showView = function (name) {
    location.hash = '#' + name;
    QuireUI.show(name);
    return location.hash.slice(1);
  };
  if (!K.on) return;

  var t = QuireUI.t, h = QuireUI.h;
  var record = {}, running = null, timer = null, last = 0;
  var idleMs = K.idleMinutes * 60000;
  QuireUI.exclude(K.excludedViews);  // before the views register: #settings lands on the library

  function setState(state) {
    status.state = state;
    document.documentElement.dataset.kioskState = state;
  }

  function save(changes) {
    record = Object.assign({}, record, changes);
    return q.kv.set(STATE, record);
  }

  /* ---- the reset ---- */

  /** reset(why): 'first' (an empty library taken over), 'interrupted', 'changed' (another known
   * library), 'takeover' (confirmed on the page), 'idle' or 'asked'; the last three reload. */
  function reset(why) {
    if (running) return running;
    clearTimeout(timer);
    timer = null;
    setState('resetting');
    var cover = h('div', { class: 'kiosk-cover', testid: 'kiosk-cover', role: 'status' }, t('Getting ready for the next visitor…'));
    document.body.appendChild(cover);
    running = QuireKioskLibrary.known().then(function (lib) {
      return save({ resetting: true }).then(function () {
        return q.importVault(lib.vault, lib.course ? { mode: 'replace', course: 'kiosk', title: lib.course } : { mode: 'replace' });
      }).then(function () {
        return q.sampleRestored(lib.sample);
      }).then(function () {
        return save({ owned: true, resetting: false, clean: true, key: lib.key, resets: (record.resets || 0) + 1 });
      });
    }).then(function () {
      status.resets = record.resets;
      status.known = record.key;
      status.error = null;
      if (why === 'idle' || why === 'asked' || why === 'takeover') { reloadHome(); return; }
      running = null;
      cover.remove();
      setState('ready');
      q.embedInBackground();  // the known library's passages, when meaning-based search runs in this tab
    }, function (err) {
      // The mark stays: the next start tries again, and so does the next idle period.
      running = null;
      cover.remove();
      status.error = err.message;
      setState('failed');
      QuireUI.toast(err, 'error');
      arm(idleMs);
    });
    return running;
  }

  function reloadHome() {
    history.replaceState(history.state, '', location.pathname + location.search + '#library');
    location.reload();
  }

  /* ---- idle: minutes without input ---- */

  function arm(ms) {
    clearTimeout(timer);
    timer = setTimeout(check, ms);
  }

  function check() {
    timer = null;
    var left = idleMs - (Date.now() - last);
    if (left > 0) arm(left);
    else reset('idle');
  }

  /* The first input after a reset starts the visit (and its idle timer); later ones move it on. */
  function input() {
    last = Date.now();
    if (timer !== null || (status.state !== 'ready' && status.state !== 'failed')) return;
    arm(idleMs);
    if (record.clean) save({ clean: false }).catch(function () { /* then this visit is not marked: a reload leaves it until the next input */ });
  }
  INPUT.forEach(function (type) { window.addEventListener(type, input, { capture: true, passive: true }); });

  /* ---- start: finish a reset, take over an empty library, or ask ---- */

  function takeover() {
    setState('takeover');
    var go = h('button', { type: 'button', class: 'danger', testid: 'kiosk-takeover-confirm',
      onclick: function () { go.disabled = true; reset('takeover'); } }, t('Replace it and start the kiosk'));
    document.getElementById('main').prepend(h('div', { class: 'card kiosk-takeover', testid: 'kiosk-takeover', role: 'alert' },
      h('h3', null, t('This browser already holds a library')),
      h('p', null, t('A kiosk goes back to its own library after every visit (the sample library, or the course it was built with), and everything else in this browser’s library is deleted. This library is kept until you decide. To keep it, open the kiosk in a browser profile of its own.')),
      go));
  }

  function start() {
    return Promise.all([q.kv.get(STATE), QuireKioskLibrary.key()]).then(function (r) {
      record = r[0] || {};
      status.resets = record.resets || 0;
      status.known = record.key || null;
      if (record.resetting) return reset('interrupted');
      if (record.owned) {
        if (record.key !== r[1]) return reset('changed');
        setState('ready');
        if (!record.clean) { last = Date.now(); arm(idleMs); }  // a visit was under way when the page loaded
        return null;
      }
      return q.sources().then(function (sources) { return sources.length ? takeover() : reset('first'); });
    }).catch(function (err) {
      status.error = err.message;
      setState('failed');
      QuireUI.toast(err, 'error');
    });
  }

  q.kioskReset = function () { return reset('asked'); };
  setState('starting');
  q.ready.then(start, function () { /* boot.js shows the error */ });
})();
