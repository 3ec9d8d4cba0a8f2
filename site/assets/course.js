/* The course a bundle carries (python3 build.py --library VAULT; docs/courses.md).
 *
 * The bundle's about record (QUIRE_BUNDLE.course: title, documents, passages, sets, made, sha256,
 * size) is all the page reads until someone loads the course: then its vault arrives as a packed
 * asset through quire.loadChecked (sha256-checked; a classic script, so file:// works) and goes in
 * as one course import (quire.importVault with course 'offer': py/quire/vault_course.py).  What the
 * student decided is kept per sha256 in quire.main ('quire.course'), so a second open does not offer
 * the same course again and a new course vault does.  A kiosk installs the course itself
 * (kiosk-library.js), so it shows no offer.
 *
 *   quire.course()                 -> the about record, or null when the bundle carries none
 *   quire.courseState()            -> 'new' | 'loaded' | 'declined' | 'none'
 *   quire.courseVault()            -> Blob: the course vault, checked against its sha256
 *   quire.loadCourse({mode})       -> importVault's result; mode 'merge' (default) or 'replace'
 *   quire.declineCourse()          -> the offer goes until offerCourse() (Privacy: "Add the course")
 *   quire.offerCourse()            -> shows the offer card again */
(function () {
  'use strict';
  var q = self.quire;
  var KEY = 'quire.course';  // {<sha256>: 'loaded' | 'declined'}
  var t = QuireUI.t, h = QuireUI.h;
  var card = null;

  function about() { return (self.QUIRE_BUNDLE && QUIRE_BUNDLE.course) || null; }
  q.course = function () { var c = about(); return c ? Object.assign({}, c) : null; };

  function decided() { return q.kv.get(KEY).then(function (r) { return r || {}; }); }
  function decide(value) {
    var c = about();
    return decided().then(function (r) { r[c.sha256] = value; return q.kv.set(KEY, r); });
  }

  q.courseState = function () {
    var c = about();
    if (!c) return Promise.resolve('none');
    return decided().then(function (r) { return r[c.sha256] || 'new'; });
  };

  /* A damaged or missing course asset says which file and what to do. */
  function assetError(err) {
    var c = about();
    if (err && err.checksum) return new Error(t('The course in this copy of Quire is damaged (its checksum does not match {sha}), so it was not loaded. Copy the whole folder again, or ask your teacher for a new copy.', { sha: c.sha256.slice(0, 12) }));
    if (err && err.kind) return new Error(t('The course file {file} is missing or damaged, so the course was not loaded. Copy the whole folder again, or ask your teacher for a new copy.', { file: err.arg }));
    return err;
  }

  q.courseVault = function () {
    var c = about();
    if (!c) return Promise.reject(new Error('this bundle carries no course'));
    return QuireBoot.loadChecked(c.asset).then(function (buffer) {
      return new Blob([buffer], { type: 'application/zip' });
    }, function (err) { throw assetError(err); });
  };

  q.loadCourse = function (opts) {
    var c = about();
    var mode = (opts && opts.mode) || 'merge';
    return q.courseVault().then(function (blob) {
      return q.importVault(blob, { mode: mode, course: 'offer', title: c.title });
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
        q.loadCourse({ mode: mode }).then(function (r) {
          QuireUI.toast(t('The course {title} is in your library.', { title: c.title }));
          document.dispatchEvent(new CustomEvent('quire:course-loaded', { detail: r }));
        }, function (err) {
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

  if (!about() || (self.QuireKiosk && QuireKiosk.on)) return;  // a kiosk installs its course itself
  q.ready.then(function () {
    q.courseState().then(function (state) { if (state === 'new') show(); });
    window.addEventListener('hashchange', function () { if (location.hash === '#privacy') privacyButton(); });
    if (location.hash === '#privacy') privacyButton();
  }, function () { /* boot.js shows the error */ });
})();
