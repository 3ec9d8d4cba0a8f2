/* Study, the flashcard reviewer: FSRS reviews (Again, Hard, Good, Easy), cloze cards, cards
 * whose source changed, and the deck's schedule.  Opened by the study hub (views/study.js). */
(function () {
  'use strict';
  var h = QuireUI.h, t = QuireUI.t, q = self.quire;
  var S = self.QuireStudy, sourceLink = S.sourceLink, when = S.when;  // views/study.js loads first
  var RATINGS = [['again', t('Again')], ['hard', t('Hard')], ['good', t('Good')], ['easy', t('Easy')]];
  var RATING_LABEL = { again: t('Again'), hard: t('Hard'), good: t('Good'), easy: t('Easy') };

  function clozeParts(text, reveal) {
    var out = [], re = /\{\{c(\d+)::((?:(?!\}\}|::).)*)(?:::((?:(?!\}\}).)*))?\}\}/g, at = 0, m;
    while ((m = re.exec(text))) {
      out.push(text.slice(at, m.index));
      out.push(h('span', { class: reveal ? 'cloze shown' : 'cloze' }, reveal ? m[2] : '[' + (m[3] || '…') + ']'));
      at = re.lastIndex;
    }
    out.push(text.slice(at));
    return out;
  }

  function reviewer(body, set) {
    var box = h('div', { class: 'reviewer', testid: 'flash-reviewer' });
    var table = h('div', { class: 'deck-table' });
    body.append(box, table);
    function load() { return q.review(set.id).then(function (queue) { show(queue); }, function (err) { QuireUI.toast(err.message, 'error'); }); }
    function show(queue) {
      renderTable(queue);
      var counts = h('div', { class: 'flash-counts', testid: 'flash-counts' },
        h('span', { class: 'pill' }, queue.due + ' due'), h('span', { class: 'pill' }, QuireUI.plural(queue.total, 'card')),
        queue.flagged ? h('span', { class: 'pill warn' }, t('{n} to check', { n: queue.flagged })) : null,
        h('span', { class: 'muted small' }, t('Next due: {when}', { when: queue.due ? t('now') : when(queue.next_due) })));
      var card = queue.cards[0];
      if (!card) {
        return QuireUI.fill(box, counts, h('div', { class: 'flash-done', testid: 'flash-done' },
          h('strong', null, t('All caught up.')), h('p', { class: 'muted' }, queue.next_due ? t('The next card comes back {when} ({date}).', { when: when(queue.next_due), date: new Date(queue.next_due).toLocaleString(QuireI18n.lang) }) : '')));
      }
      var answer = h('div', { class: 'flash-back', testid: 'flash-back', hidden: true },
        card.type === 'cloze' ? h('p', { class: 'flash-text' }, clozeParts(card.text, true)) : h('p', { class: 'flash-text' }, card.back),
        card.type === 'cloze' && card.extra ? h('p', { class: 'muted small' }, card.extra) : null,
        sourceLink(card.chunk_ids));
      var rateRow = h('div', { class: 'rate-row', hidden: true }, RATINGS.map(function (r) {
        return h('button', { type: 'button', class: 'rate rate-' + r[0], testid: 'rate-' + r[0], dataset: { interval: card.intervals[r[0]] },
          onclick: function () { rate(card, r[0]); } }, h('strong', null, r[1]), h('small', null, card.intervals[r[0]]));
      }));
      var showBtn = h('button', { type: 'button', class: 'primary wide', testid: 'flash-show', onclick: function () {
        answer.hidden = false; rateRow.hidden = false; showBtn.hidden = true; rateRow.querySelector('.rate-good').focus();
      } }, t('Show answer'));
      QuireUI.fill(box, counts,
        card.flagged.length ? h('div', { class: 'flash-flag', testid: 'flash-flag' },
          h('strong', null, card.flagged.some(function (f) { return f.indexOf('removed') === 0; }) ? t('The source of this card was removed.') : t('The source of this card changed since it was made.')),
          t(' Check it still holds. '),
          h('button', { type: 'button', class: 'small-button', testid: 'flag-keep', onclick: function () { q.resolveCard(set.id, card.id, 'keep').then(load); } }, t('It still holds')),
          h('button', { type: 'button', class: 'small-button danger', testid: 'flag-delete', onclick: function () { q.resolveCard(set.id, card.id, 'delete').then(load); } }, t('Delete card'))) : null,
        h('div', { class: 'flashcard', testid: 'flashcard', dataset: { id: card.id } },
          h('span', { class: 'muted small card-kind' }, card.type === 'cloze' ? t('Fill the blank') : t('Question')),
          h('p', { class: 'flash-text', testid: 'flash-front' }, card.type === 'cloze' ? clozeParts(card.text, false) : card.front),
          answer),
        showBtn, rateRow);
    }
    function rate(card, rating) {
      box.querySelectorAll('.rate').forEach(function (b) { b.disabled = true; });
      q.rate(set.id, card.id, rating).then(function (res) {
        var lost = !document.activeElement || document.activeElement === document.body || box.contains(document.activeElement);
        show(res.next);
        // The rated card's buttons are gone: the keyboard (and what stays in view) goes on to the next card.
        var next = box.querySelector('[data-testid="flash-show"]');
        if (lost && next) next.focus();
        var note = h('p', { class: 'rated muted small', testid: 'flash-rated' }, t('Rated {rating}: back {when}.', { rating: RATING_LABEL[rating] || rating, when: res.interval === '<1m' ? t('in under a minute') : t('in {time}', { time: res.interval }) }));
        if (res.lapse && res.chunk_ids.length) {
          note.append(' ', h('button', { type: 'button', class: 'link', testid: 'show-passage', onclick: function () { QuirePassage.open(res.chunk_ids[0], ''); } }, t('Show me the passage')));
        }
        box.appendChild(note);
      }, function (err) { QuireUI.toast(err.message, 'error'); });
    }
    function renderTable(queue) {
      var items = {};
      set.items.forEach(function (i) { items[i.id] = i; });
      var ids = Object.keys(queue.schedule).sort(function (a, b) { return queue.schedule[a] < queue.schedule[b] ? -1 : 1; });
      QuireUI.fill(table, h('details', { testid: 'deck-details' }, h('summary', null, t('All cards and when they are due')),
        h('table', { class: 'mini' }, h('tr', null, h('th', null, t('Card')), h('th', null, t('Due'))), ids.map(function (id) {
          var it = items[id] || {};
          var text = it.type === 'cloze' ? it.text.replace(/\{\{c\d+::((?:(?!\}\}|::).)*)(?:::[^}]*)?\}\}/g, '[$1]') : it.front;
          return h('tr', { testid: 'card-due', dataset: { id: id, due: queue.schedule[id] } }, h('td', null, text),
            h('td', { class: 'nowrap' }, when(queue.schedule[id])));
        }))));
    }
    load();
  }

  S.players.flashcards = reviewer;
})();
