/* Study, the workshop player: a course outline whose lessons are written when first opened,
 * then kept, and marked done.  Opened by the study hub (views/study.js). */
(function () {
  'use strict';
  var h = QuireUI.h, t = QuireUI.t, q = self.quire;
  var S = self.QuireStudy, sourceLink = S.sourceLink;  // views/study.js loads first

  function workshopPlayer(body, set) {
    var outline = h('nav', { class: 'ws-outline', testid: 'workshop-outline', 'aria-label': t('Lessons') });
    var panel = h('article', { class: 'ws-lesson', testid: 'lesson-panel' },
      h('p', { class: 'muted' }, t('Choose a lesson. Each one is written from your passages the first time you open it, then kept.')));
    var progress = h('div', { class: 'ws-progress' });
    body.append(progress, h('div', { class: 'workshop', testid: 'workshop-player' }, outline, panel));
    function paint(s) {
      set = s;
      var total = s.stats.lessons, done = s.done.length;
      var bar = h('div', { class: 'progress' }, h('div', { class: 'progress-fill' }));
      bar.firstChild.style.width = Math.round(100 * done / Math.max(total, 1)) + '%';
      QuireUI.fill(progress, h('span', { testid: 'workshop-progress' }, t('{done} of {lessons} done', { done: done, lessons: QuireUI.plural(total, 'lesson') })), bar);
      QuireUI.fill(outline, s.outline.modules.map(function (m, mi) {
        return h('section', null, h('h4', null, (mi + 1) + '. ' + QuireI18n.engine(m.title)), m.summary ? h('p', { class: 'muted small' }, QuireI18n.engine(m.summary)) : null,
          h('ol', null, m.lessons.map(function (l, li) {
            var key = mi + '.' + li;
            return h('li', null, h('button', { type: 'button', class: 'lesson-link' + (s.done.indexOf(key) >= 0 ? ' done' : '') + (s.lessons[key] ? ' written' : ''),
              testid: 'lesson-link', dataset: { key: key }, onclick: function () { open(mi, li); } },
            h('span', { class: 'check', 'aria-hidden': 'true' }, s.done.indexOf(key) >= 0 ? '✓' : (mi + 1) + '.' + (li + 1)), QuireI18n.engine(l.title)));
          })));
      }));
    }
    var showing = 0, pending = null;  // the lesson last clicked wins; a late answer for another is dropped
    function open(mi, li) {
      var key = mi + '.' + li;
      if (pending === key) return;  // already being written: a second click would write it twice
      var mine = ++showing;
      pending = key;
      QuireUI.fill(panel, h('div', { class: 'study-progress', testid: 'lesson-loading' }, h('div', { class: 'progress indeterminate' }, h('div', { class: 'progress-fill' })),
        h('span', { class: 'muted small' }, set.lessons[mi + '.' + li] ? t('Opening…') : t('Writing this lesson from your passages…'))));
      q.openLesson(set.id, mi, li, { onProgress: function () {} }).then(function (res) {
        if (pending === key) pending = null;
        if (mine !== showing) return q.openSet(set.id).then(paint);  // the outline marks it written; the panel stays
        var L = res.lesson;
        var doneBtn = h('button', { type: 'button', class: res.done ? '' : 'primary', testid: 'lesson-done', onclick: function (e) {
          // A double click is one: its second click (detail 2) may come after the first was saved
          // on a slow machine, and would flip the lesson back.
          if (e && e.detail > 1) return;
          doneBtn.disabled = true;  // a double click would send the same state twice and flip the label back
          q.lessonDone(set.id, mi, li, !res.done).then(function (s) {
            res.done = s.done.indexOf(key) >= 0;
            paint(s);
            doneBtn.disabled = false;
            doneBtn.textContent = res.done ? t('Mark as not done') : t('Mark lesson done');
            doneBtn.className = res.done ? '' : 'primary';
          }, function (err) { doneBtn.disabled = false; QuireUI.toast(err.message, 'error'); });
        } }, res.done ? t('Mark as not done') : t('Mark lesson done'));
        QuireUI.fill(panel,
          h('p', { class: 'muted small' }, res.module),
          h('h3', { testid: 'lesson-title' }, QuireI18n.engine(L.title)),
          L.made_without_ai ? h('span', { class: 'badge no-ai' }, t('made without an AI model: the passages themselves')) : null,
          L.introduction ? h('p', { class: 'lede' }, L.introduction) : null,
          L.sections.map(function (sec) {
            return h('section', { class: 'ws-section' }, h('h4', null, sec.heading),
              h('div', { class: 'md' }, QuireMarkdown.render(sec.body, {})), sourceLink(sec.chunk_ids));
          }),
          L.key_points.length ? h('div', { class: 'key-points' }, h('h4', null, t('Key points')), h('ul', null, L.key_points.map(function (p) { return h('li', null, p); }))) : null,
          L.exercises.length ? h('div', { class: 'exercises' }, h('h4', null, t('Check yourself')), L.exercises.map(function (ex) {
            return h('details', null, h('summary', null, ex.prompt), h('p', null, ex.answer || t('Answer from the passages above.')));
          })) : null,
          h('div', { class: 'add-row' }, doneBtn));
        return q.openSet(set.id).then(paint);
      }, function (err) {
        if (pending === key) pending = null;
        if (mine === showing) QuireUI.fill(panel, h('p', { class: 'error', role: 'alert' }, err.message));
      });
    }
    paint(set);
  }

  S.players.workshop = workshopPlayer;
})();
