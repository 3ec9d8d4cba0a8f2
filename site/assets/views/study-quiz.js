/* Study, the quiz player: one question at a time, feedback with its source, then the score
 * and every attempt.  Opened by the study hub (views/study.js). */
(function () {
  'use strict';
  var h = QuireUI.h, t = QuireUI.t, q = self.quire;
  var S = self.QuireStudy, sourceLink = S.sourceLink;  // views/study.js loads first

  function quizPlayer(body, set) {
    var box = h('div', { class: 'quiz', testid: 'quiz-player' });
    body.appendChild(box);
    renderQuiz(box, set, { session: set.session, score: set.stats.score, position: set.stats.position, total: set.stats.total });
  }

  function renderQuiz(box, set, st) {
    var s = st.session;
    if (s.status === 'finished') return renderScore(box, set, st);
    var item = s.items[s.order[s.position]];
    var options = h('div', { class: 'quiz-options' });
    var feedback = h('div', { class: 'quiz-feedback', testid: 'quiz-feedback', hidden: true });
    var nextBtn = h('button', { type: 'button', class: 'primary', testid: 'quiz-next', hidden: true }, s.position + 1 === s.order.length ? t('See your score') : t('Next question'));
    item.options.forEach(function (opt, i) {
      options.appendChild(h('button', { type: 'button', class: 'quiz-option', testid: 'quiz-option', dataset: { index: i },
        onclick: function () { choose(i); } }, h('span', { class: 'opt-letter' }, String.fromCharCode(65 + i)), h('span', null, QuireI18n.engine(opt))));
    });
    function choose(i) {
      options.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
      q.quizAnswer(set.id, i).then(function (res) {
        options.children[res.answer].classList.add('right');
        if (!res.correct) options.children[i].classList.add('wrong');
        feedback.dataset.correct = String(res.correct);
        QuireUI.fill(feedback, h('strong', null, res.correct ? t('Correct.') : t('Not quite: the answer is {letter}.', { letter: String.fromCharCode(65 + res.answer) })),
          res.explanation ? h('p', null, QuireI18n.engine(res.explanation)) : null, sourceLink(res.chunk_ids));
        feedback.hidden = false;
        nextBtn.hidden = false;
        nextBtn.focus();
        nextBtn.onclick = function () { renderQuiz(box, set, res); };
      }, function (err) { QuireUI.toast(err.message, 'error'); });
    }
    var pct = Math.round(100 * s.position / s.order.length);
    var bar = h('div', { class: 'progress' }, h('div', { class: 'progress-fill' }));
    bar.firstChild.style.width = pct + '%';
    QuireUI.fill(box,
      h('div', { class: 'quiz-head' }, h('span', { testid: 'quiz-progress' }, t('Question {n} of {total}', { n: s.position + 1, total: s.order.length })),
        h('span', { class: 'muted small' }, item.type === 'true_false' ? t('True or false') : t('Multiple choice')),
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', class: 'small-button', testid: 'quiz-finish', onclick: function () {
          q.quizSubmit(set.id).then(function (res) { renderQuiz(box, set, res); });
        } }, t('Finish now'))),
      bar,
      h('p', { class: 'quiz-question', testid: 'quiz-question' }, QuireI18n.engine(item.question)),
      options, feedback, h('div', { class: 'quiz-actions' }, nextBtn));
  }

  function renderScore(box, set, st) {
    var sc = st.score;
    var byId = {};
    st.session.items.forEach(function (it) { byId[it.id] = it; });
    var grade = sc.percent >= 80 ? 'great' : sc.percent >= 50 ? 'ok' : 'low';
    var attempts = st.session.history.concat([{ finished: st.session.finished, score: sc }]);
    QuireUI.fill(box,
      h('div', { class: 'quiz-score grade-' + grade, testid: 'quiz-score', dataset: { correct: sc.correct, total: sc.total } },
        h('div', { class: 'score-ring' }, h('strong', null, sc.percent + '%')),
        h('div', null, h('h3', null, t('{correct} of {total} correct', { correct: sc.correct, total: sc.total })),
          h('p', { class: 'muted' }, sc.skipped ? t('{n} skipped.', { n: sc.skipped }) + ' ' : '', sc.percent >= 80 ? t('Well done.') : t('Review the ones you missed below, then try again.')),
          h('div', { class: 'add-row' },
            h('button', { type: 'button', class: 'primary', testid: 'quiz-retry', onclick: function () { restart(false); } }, t('Take it again')),
            sc.wrong.length ? h('button', { type: 'button', testid: 'quiz-retry-wrong', onclick: function () { restart(true); } }, t('Retry the {n} missed', { n: sc.wrong.length })) : null))),
      h('ol', { class: 'quiz-review' }, st.session.answers.map(function (a) {
        var it = byId[a.item] || {};
        return h('li', { class: a.correct ? 'right' : 'wrong' }, h('p', null, QuireI18n.engine(it.question)),
          h('p', { class: 'small' }, a.correct ? '✓ ' + QuireI18n.engine(it.options[it.answer]) : '✗ ' + (a.choice == null ? t('skipped') : QuireI18n.engine(it.options[a.choice])) + ' — ' + t('answer: {answer}', { answer: QuireI18n.engine(it.options[it.answer]) })),
          it.explanation ? h('p', { class: 'muted small' }, QuireI18n.engine(it.explanation)) : null, sourceLink(it.chunk_ids));
      })),
      h('details', { class: 'quiz-history', testid: 'quiz-history', open: attempts.length > 1 },
        h('summary', null, t('Attempts ({n})', { n: attempts.length })),
        h('table', { class: 'mini' }, h('tr', null, h('th', null, t('Finished')), h('th', null, t('Score'))),
          attempts.map(function (a) {
            return h('tr', { testid: 'quiz-attempt' }, h('td', null, a.finished ? new Date(a.finished).toLocaleString(QuireI18n.lang) : '—'),
              h('td', null, a.score.correct + ' / ' + a.score.total + ' (' + a.score.percent + '%)'));
          }))));
    function restart(onlyWrong) {
      q.quizRestart(set.id, onlyWrong).then(function (res) { renderQuiz(box, set, res); }, function (err) { QuireUI.toast(err.message, 'error'); });
    }
  }

  S.players.quiz = quizPlayer;
})();
