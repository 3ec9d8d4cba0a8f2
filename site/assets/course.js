/* The course a bundle carries (python3 build.py --library VAULT, or a vault saved over the empty
 * course.quirevault next to index.html; docs/courses.md).
 *
 * A built-in course: the bundle's about record (QUIRE_BUNDLE.course: title, documents, passages,
 * sets, made, sha256, size) is all the page reads until someone loads the course: then its vault
 * arrives as a packed asset through quire.loadChecked (sha256-checked; a classic script, so file://
 * works).  A dropped-in course (over http(s) only: a page opened from file:// may not read a file)
 * is read from the server (the service worker keeps a copy for offline) and checked by the engine,
 * which makes its about record (py/quire/services/vault.py course_about); a built-in course wins.
 * Either goes in as one course import (quire.importVault with course 'offer':
 * py/quire/vault_course.py).  What the student decided is kept per sha256 in quire.main
 * ('quire.course'), so a second open does not offer the same course again and a new course vault
 * does.  A kiosk installs the course itself (kiosk-library.js), so it shows no offer.
 *
 *   quire.course()                 -> the about record (dropIn: 'course.quirevault' for a dropped-in
 *                                     one), or null when there is none or it is not known yet
 *   quire.courseFound()            -> a promise of the same, once known
 *   quire.courseProblem()          -> why a dropped-in course cannot be offered (its message), or null
 *   quire.courseState()            -> 'new' | 'loaded' | 'declined' | 'none'
 *   quire.courseVault()            -> Blob: the course vault, checked against its sha256
 *   quire.loadCourse({mode})       -> importVault's result; mode 'merge' (default) or 'replace'
 *   quire.declineCourse()          -> the offer goes until offerCourse() (Privacy: "Add the course")
 *   quire.offerCourse()            -> shows the offer card again */
(function () {
  'use strict';
  var q = self.quire;
  var KEY = 'quire.course';         // {<sha256>: 'loaded' | 'declined'}
  var ABOUT = 'quire.course.about'; // {<sha256>: about}: the engine's record of the dropped-in course
  var SLOT = 'course.quirevault';   // next to index.html (py/quire_build/library.py DROP_IN)
  var MAX_BYTES = 256 * 1024 * 1024; // as the build's MAX_COURSE_BYTES: the tab holds it twice while it loads
  var t = QuireUI.t, h = QuireUI.h;
  var card = null;
  var found = null, dropped = null, problem = null;

  function bundled() { return (self.QUIRE_BUNDLE && QUIRE_BUNDLE.course) || null; }
  function about() { return found; }

  var discovery = (bundled() ? Promise.resolve(bundled()) : dropIn()).then(function (c) { found = c; return c; });

  q.course = function () { var c = about(); return c ? Object.assign({}, c) : null; };
  q.courseFound = function () { return discovery.then(function () { return q.course(); }); };
  q.courseProblem = function () { return problem && problem.message; };

  /* ---- a course saved over the empty course.quirevault after the build ---- */

  function dropIn() {
    if (!/^https?:$/.test(location.protocol)) return Promise.resolve(null);
    return q.ready.then(function () { return fetch(SLOT, { cache: 'no-cache' }); }).then(function (res) {
      return res.ok ? res.blob() : null;  // no slot (a copy made before it existed): no course
    }, function () { return null; }).then(function (blob) {
      if (!blob || !blob.size) return null;
      if (blob.size > MAX_BYTES) {
        throw new Error(t('It is {mb} MB, over the 256 MB a course may have (a browser tab holds it in memory while it loads).',
          { mb: Math.round(blob.size / 1048576) }));
      }
      return aboutOf(blob).then(function (c) {
        dropped = blob;
        return Object.assign({}, c, { asset: null, dropIn: SLOT });
      });
    }).catch(function (err) {
      problem = new Error(t('The course file {file} next to this page cannot be used: {reason} Ask your teacher for a new copy of it.',
        { file: SLOT, reason: QuireI18n.engine(err.message) }));
      return null;
    });
  }

  function hex(buf) {
    return Array.prototype.map.call(new Uint8Array(buf), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }

  /* The engine reads the vault the first time (every check an import makes, so a damaged one is
   * refused here with the reason); later opens find its record by sha256, where the page can hash
   * (crypto.subtle: https and localhost). */
  function aboutOf(blob) {
    return blob.arrayBuffer().then(function (buf) {
      var digest = self.crypto && crypto.subtle ? crypto.subtle.digest('SHA-256', buf).then(hex, function () { return null; }) : Promise.resolve(null);
      return Promise.all([digest, q.kv.get(ABOUT)]).then(function (r) {
        var kept = r[1] || {};
        if (r[0] && kept[r[0]]) return kept[r[0]];
        return q._call('courseAbout', [null], { payload: new Uint8Array(buf) }).then(function (c) {
          var latest = {};
          latest[c.sha256] = c;
          return q.kv.set(ABOUT, latest).then(function () { return c; });
        });
      });
    });
  }

  /* ---- the student's decision ---- */

  function decided() { return q.kv.get(KEY).then(function (r) { return r || {}; }); }
  function decide(value) {
    var c = about();
    return decided().then(function (r) { r[c.sha256] = value; return q.kv.set(KEY, r); });
  }

  q.courseState = function () {
    return discovery.then(function (c) {
      if (!c) return 'none';
      return decided().then(function (r) { return r[c.sha256] || 'new'; });
    });
  };

  /* A damaged or missing course asset says which file and what to do. */
  function assetError(err) {
    var c = about();
    if (err && err.checksum) return new Error(t('The course in this copy of Quire is damaged (its checksum does not match {sha}), so it was not loaded. Copy the whole folder again, or ask your teacher for a new copy.', { sha: c.sha256.slice(0, 12) }));
    if (err && err.kind) return new Error(t('The course file {file} is missing or damaged, so the course was not loaded. Copy the whole folder again, or ask your teacher for a new copy.', { file: err.arg }));
    return err;
  }

  q.courseVault = function () {
    return discovery.then(function (c) {
      if (!c) throw new Error('this bundle carries no course');
      if (c.dropIn) return dropped;
      return QuireBoot.loadChecked(c.asset).then(function (buffer) {
        return new Blob([buffer], { type: 'application/zip' });
      }, function (err) { throw assetError(err); });
    });
  };

  q.loadCourse = function (opts) {
    var c = about();
    var mode = (opts && opts.mode) || 'merge';
    return q.courseVault().then(function (blob) {
      return q.importVault(blob, { mode: mode, course: 'offer', title: c.title, onProgress: opts && opts.onProgress });
    }).then(function (r) {
      return decide('loaded').then(function () { hide(); return r; });
    });
  };

  q.declineCourse = function () { return decide('declined').then(hide); };
  q.offerCourse = function () { return show(); };

  function hide() { if (card) { card.remove(); card = null; } }

  function facts(c) {
    return t('This copy comes with a library: {title}, {documents}, {passages}, made {made}', {
      title: c.title, documents: QuireUI.plural(c.documents, 'document'),
      passages: QuireUI.plural(c.passages, 'passage'), made: c.made || '?' });
  }

  function show() {
    var c = about();
    if (!c || card) return Promise.resolve();
    return q.sources().then(function (sources) {
      if (card) return;
      var msg = h('p', { class: 'muted', testid: 'course-message', role: 'status', 'aria-live': 'polite' });
      var buttons = [];
      function go(mode) {
        if (mode === 'replace' && !confirm(t('Replace the documents in your library with the course? Your own chats, progress and study sets stay.'))) return;
        buttons.forEach(function (b) { b.disabled = true; });
        msg.className = 'muted';
        msg.textContent = t('Loading the course… (checking it, then saving it in one go)');
        var bar = h('progress', { max: '1', value: '0', testid: 'course-progress', 'aria-label': t('Loading the course') });
        msg.parentNode.insertBefore(bar, msg);
        function step(e) {
          bar.value = e.fraction;
          msg.textContent = t('Loading the course: {step}', { step: QuireUI.importStep(e.stage) });
        }
        q.loadCourse({ mode: mode, onProgress: step }).then(function (r) {
          QuireUI.toast(t('The course {title} is in your library.', { title: c.title }));
          document.dispatchEvent(new CustomEvent('quire:course-loaded', { detail: r }));
        }, function (err) {
          bar.remove();
          buttons.forEach(function (b) { b.disabled = false; });
          msg.className = 'fix error';
          msg.setAttribute('role', 'alert');
          msg.dataset.testid = 'course-error';
          msg.textContent = t('The course could not be loaded: {reason}', { reason: QuireI18n.engine(err.message) });
        });
      }
      if (sources.length) {
        buttons.push(h('button', { type: 'button', class: 'primary', testid: 'course-merge', onclick: function () { go('merge'); } }, t('Add it to my library')));
        buttons.push(h('button', { type: 'button', testid: 'course-replace', onclick: function () { go('replace'); } }, t('Replace my documents with it')));
      } else {
        buttons.push(h('button', { type: 'button', class: 'primary', testid: 'course-load', onclick: function () { go('merge'); } }, t('Load the course')));
      }
      buttons.push(h('button', { type: 'button', testid: 'course-decline', onclick: function () { q.declineCourse(); } }, t('Not now')));
      card = h('div', { class: 'card course-offer', testid: 'course-offer', role: 'region', 'aria-label': t('Course') },
        h('h3', null, t('A course for you')),
        h('p', { testid: 'course-facts' }, facts(c)),
        c.sets ? h('p', { class: 'muted' }, t('Its study sets appear on the Study shelf, marked “from your teacher”.')) : null,
        h('div', { class: 'actions' }, buttons), msg);
      document.getElementById('main').prepend(card);
    });
  }

  /* Privacy (where vault import and export live): "Add the course" for a student who said not now. */
  function privacyButton() {
    var view = document.querySelector('[data-view="privacy"]');
    if (!view || view.querySelector('[data-testid="course-add"]')) return;
    q.courseState().then(function (state) {
      if (state !== 'declined' || view.querySelector('[data-testid="course-add"]')) return;
      view.prepend(h('div', { class: 'card' }, h('p', null, facts(about())),
        h('button', { type: 'button', testid: 'course-add', onclick: function (e) { e.target.closest('.card').remove(); show(); location.hash = '#library'; } }, t('Add the course'))));
    });
  }

  /* A dropped-in course that failed its checks: said once per open, in the Library. */
  function showProblem() {
    document.getElementById('main').prepend(h('div', { class: 'card', testid: 'course-problem', role: 'alert' },
      h('h3', null, t('A course could not be offered')), h('p', { class: 'fix error' }, problem.message)));
  }

  if (self.QuireKiosk && QuireKiosk.on) return;  // a kiosk installs its course itself
  q.ready.then(function () { return discovery; }).then(function (c) {
    if (problem) showProblem();
    if (!c) return;
    q.courseState().then(function (state) { if (state === 'new') show(); });
    window.addEventListener('hashchange', function () { if (location.hash === '#privacy') privacyButton(); });
    if (location.hash === '#privacy') privacyButton();
  }, function () { /* boot.js shows the error */ });
})();
