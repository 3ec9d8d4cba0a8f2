/* QuireStore, part 4: open-tab marks, and judging whether the last session was cut short
 * (store-db.js lists the parts).  Loads last: the page's session watch starts here.
 *
 * A browser killed or crashed in the middle of a write tears the log the way a full disk
 * does (store-seal.js): the next session appends after the torn record, and the start after
 * that finds the checksum mismatch and deletes everything (seen after SIGKILL during a
 * Train's commit, then one more session: tests/test_kill_browser.py).  So each tab leaves a
 * mark that it is open, holds a Web Lock of the same name while it is, and says "closed"
 * when it goes (pagehide).  At the next start, a mark whose lock nobody holds and that never
 * said "closed" is a session that ended without closing: the log is then treated as torn
 * (one seal, 5 MiB, before the first write).  A mark that is only in localStorage made no
 * write, so it is not counted (the IndexedDB mark is each session's first write).
 *
 * The mark is written twice.  localStorage alone is not enough: Chromium saves it a few
 * seconds after a change, so a browser killed within those seconds of opening left no
 * mark (a clean-clone CI run lost its library that way).  A key in quire.main's IndexedDB
 * is on disk as soon as its transaction completes (a kill cannot undo a write the process
 * has made), so it is written first thing, once this start has been judged: until then
 * no write goes out, from the page or the engine (see checked()).  "closed" stays in
 * localStorage: a mark from IndexedDB with no "closed" beside it was cut short.
 */
(function (S) {
  'use strict';
  var SESSION_PREFIX = 'quire.session.';  // localStorage: '1' while the tab is open, 'closed' after
  var MARK_PREFIX = 'session:';           // quire.main / kv: {started}, one per open tab
  var JUDGE_WAIT = 10000;  // ms: marks that cannot be read by then are judged from localStorage alone
  var judging = null, judged = null;
  var started = null;  // the page: resolves with torn once this start is judged and its mark written

  /* Hold writes until judge(torn) (the engine's worker is told by the page). */
  function hold() {
    if (!judging) judging = new Promise(function (resolve) { judged = resolve; });
    return judging;
  }
  var cutShort = false;  // did this start find a session that ended without closing?
  var judgement = null;  // what it was judged from (for tests and bug reports)
  function judge(cut) {
    cutShort = cutShort || !!cut;
    if (cut) S.setTorn(true, typeof localStorage !== 'undefined');
    var done = judged;
    judging = judged = null;
    if (done) done(S.torn());
  }

  function marks() {
    return S.run(S.mainConnection, ['kv'], 'readonly', function (t) {
      return S.request(t.objectStore('kv').getAllKeys(IDBKeyRange.bound(MARK_PREFIX, MARK_PREFIX + '\uffff')));
    }, 'read its open-tab marks').then(function (keys) { return keys.map(function (k) { return k.slice(MARK_PREFIX.length); }); });
  }
  function mark(put, deletes) {
    return S.run(S.mainConnection, ['kv'], 'readwrite', function (t) {
      var kv = t.objectStore('kv');
      (deletes || []).forEach(function (id) { kv.delete(MARK_PREFIX + id); });
      if (put) kv.put({ started: Date.now() }, MARK_PREFIX + put);
    }, 'save its open-tab mark');
  }

  function watchSessions() {
    if (typeof localStorage === 'undefined' || typeof addEventListener !== 'function') return;  // the page only
    var id = Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
    var said = {};  // id -> what localStorage says of that session
    try {
      Object.keys(localStorage).forEach(function (k) {
        if (k.indexOf(SESSION_PREFIX) === 0) said[k.slice(SESSION_PREFIX.length)] = localStorage.getItem(k);
      });
      localStorage.setItem(SESSION_PREFIX + id, '1');
    } catch (e) { return; /* refused: the flag from the torn key still holds */ }
    hold();
    var locks = typeof navigator !== 'undefined' && navigator.locks;
    if (locks) locks.request(SESSION_PREFIX + id, function () { return new Promise(function () {}); }).catch(function () {});
    addEventListener('pagehide', function (e) {
      try { localStorage.setItem(SESSION_PREFIX + id, 'closed'); } catch (err) { /* refused */ }
      // May not finish as the tab goes: "closed" says it.  Not into the back-forward cache:
      // WebKit freezes the page with the write's transaction open, and every later write of
      // every Quire page waited for it (the next page in that tab never started).
      if (!judging && !e.persisted) mark(null, [id]).catch(function () {});
    });
    addEventListener('pageshow', function (e) {  // back from the back-forward cache
      if (!e.persisted) return;
      try { localStorage.setItem(SESSION_PREFIX + id, '1'); } catch (err) { /* refused */ }
      mark(id).catch(function () {});
    });
    var stored = marks().then(null, function () { return null; });
    var held = locks ? locks.query().then(function (state) {
      var out = {};
      (state.held || []).forEach(function (l) { out[l.name] = true; });
      return out;
    }, function () { return null; }) : Promise.resolve(null);
    var timer;
    var late = new Promise(function (resolve) { timer = setTimeout(resolve, JUDGE_WAIT, [null, null]); });
    started = Promise.race([Promise.all([stored, held]), late]).then(function (r) {
      clearTimeout(timer);
      var ids = {};
      (r[0] || []).forEach(function (x) { ids[x] = true; });
      Object.keys(said).forEach(function (x) { ids[x] = true; });
      // Without locks no open tab can be told from a cut one: every mark that did not say "closed" counts.
      var gone = Object.keys(ids).filter(function (x) { return x !== id && !(r[1] && r[1][SESSION_PREFIX + x]); });
      // A session with no mark in IndexedDB made no write (its mark is its first), so it tore
      // nothing, whatever localStorage says: its tab closed (pagehide took the mark away) or it
      // died before writing.  (A tab's "closed" is written as it goes, and a start soon after may
      // not see it: from file://, clean-clone CI runs counted a tab closed normally as cut short.)
      // Marks that could not be read leave localStorage alone to judge.
      var cut = gone.filter(function (x) { return said[x] !== 'closed' && (!r[0] || r[0].indexOf(x) >= 0); });
      judgement = { said: said, marks: r[0], held: r[1] && Object.keys(r[1]), gone: gone, cut: cut };
      judge(cut.length > 0);
      gone.forEach(function (x) { try { localStorage.removeItem(SESSION_PREFIX + x); } catch (e) { /* refused */ } });
      // This start's first write: after a cut-short session it retires the log first (seal).
      return mark(id, gone.filter(function (x) { return r[0] && r[0].indexOf(x) >= 0; }));
    }).catch(function () { if (judging) judge(true); }).then(function () { return S.torn(); });
  }

  S.SESSION_PREFIX = SESSION_PREFIX;
  S.MARK_PREFIX = MARK_PREFIX;
  /* The write a store-db.js write waits for until this start is judged (null once it is). */
  S.judging = function () { return judging; };
  /* The engine's worker: hold its writes until the page has judged this start and made its
   * first write; verdict(torn) then says how the log is (the page may have sealed it already:
   * a torn flag from the init message is then cleared, whether or not the page's broadcast
   * reached this worker). */
  S.hold = hold;
  S.verdict = function (flag) {
    S.setTorn(!!flag || S.tears() > 0);  // (a failed open here meanwhile still counts)
    var done = judged;
    judging = judged = null;
    if (done) done(S.torn());
  };
  /* The page: resolves with torn once this start is judged and its first write (the mark,
   * and a seal before it if needed) is done, so the engine does not seal a second time. */
  S.checked = function () { return started || Promise.resolve(S.torn()); };
  S.pending = function () { return !!started; };
  S.cutShort = function () { return cutShort; };
  /* What this start was judged from: {said (localStorage), marks (IndexedDB), held (locks), gone, cut}. */
  S.judgement = function () { return judgement; };
  /* The open-tab marks in IndexedDB (for the Privacy panel): [{key, bytes}]. */
  S.marks = function () {
    return marks().then(function (ids) { return ids.map(function (x) { return { key: MARK_PREFIX + x, bytes: MARK_PREFIX.length + x.length + 16 }; }); });
  };

  watchSessions();
})(QuireStore);
