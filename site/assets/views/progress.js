/* Progress: today and this week, streaks, a 90-day heatmap, time and quiz charts, cards,
 * per-source coverage and the badges.  Nothing here is started by hand: it reads the
 * events the engine recorded.  Also shows the small toast when a badge is earned. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;
  var SVG = 'http://www.w3.org/2000/svg';
  var root, body, visible = false;

  function s(tag, attrs) {
    var el = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { if (attrs[k] != null) el.setAttribute(k, String(attrs[k])); });
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) el.appendChild(arguments[i]);
    return el;
  }
  function title(text) { var t = document.createElementNS(SVG, 'title'); t.textContent = text; return t; }
  function label(x, y, text, cls) { var t = s('text', { x: x, y: y, class: cls || 'axis' }); t.textContent = text; return t; }

  function day(iso, opts) { return new Date(iso + 'T12:00:00').toLocaleDateString(QuireI18n.lang, opts || { month: 'short', day: 'numeric' }); }
  function minutes(m) {
    if (!m) return '0 min';
    if (m < 60) return Math.round(m) + ' min';
    return Math.floor(m / 60) + ' h ' + (Math.round(m % 60) ? Math.round(m % 60) + ' min' : '');
  }
  var plural = QuireUI.plural;

  function init(el) {
    root = el;
    body = h('div', { class: 'progress-body', testid: 'progress-body' }, h('p', { class: 'muted' }, t('Loading…')));
    root.append(
      h('div', { class: 'view-head' }, h('h2', null, t('Progress')),
        h('span', { class: 'muted small' }, t('Sessions are noticed, never started: a pause of more than 15 minutes begins a new one.')),
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', testid: 'progress-refresh', onclick: render }, t('Refresh'))),
      body);
    document.addEventListener('quire:badges', function (e) {
      e.detail.forEach(function (b) {
        var note = QuireUI.toast(t('Badge earned: {name}', { name: QuireI18n.engine(b.name) }), 'badge');
        note.prepend(QuireIcons.svg(b.icon));
        note.title = QuireI18n.engine(b.description);
        note.dataset.testid = 'badge-toast';
      });
      if (visible) render();
    });
    document.addEventListener('quire:vault-imported', function () { if (visible) render(); });
    document.addEventListener('quire:erased', function () {
      QuireUI.fill(body, h('p', { class: 'muted' }, t('Loading…')));
      if (visible) render();
    });
  }

  function show() { visible = true; render(); }

  function render() {
    return q.progress().then(draw, function (err) {
      QuireUI.fill(body, h('p', { class: 'fix', role: 'alert' }, t('Progress could not be read: {reason}', { reason: QuireI18n.engine(err.message) })));
    });
  }

  function draw(d) {
    visible = !root.hidden;
    QuireUI.fill(body,
      stats(d),
      h('div', { class: 'card pg-card', testid: 'heatmap-card' },
        h('div', { class: 'pg-card-head' }, h('h3', null, t('Last 90 days')),
          h('span', { class: 'muted small' }, plural(d.heatmap.filter(function (x) { return x.count; }).length, 'active day'))),
        heatmap(d.heatmap)),
      h('div', { class: 'pg-two' },
        h('div', { class: 'card pg-card', testid: 'time-chart-card' },
          h('div', { class: 'pg-card-head' }, h('h3', null, t('Time studied per day')), h('span', { class: 'muted small' }, t('last 30 days'))),
          timeChart(d.time_per_day)),
        h('div', { class: 'card pg-card', testid: 'accuracy-card' },
          h('div', { class: 'pg-card-head' }, h('h3', null, t('Quiz accuracy')), h('span', { class: 'muted small' }, t('per day with answers'))),
          accuracyChart(d.quiz_accuracy))),
      h('div', { class: 'pg-two' },
        h('div', { class: 'card pg-card', testid: 'coverage-card' },
          h('div', { class: 'pg-card-head' }, h('h3', null, t('Coverage by source')), h('span', { class: 'muted small' }, t('passages quizzed or carded'))),
          coverage(d.coverage)),
        h('div', { class: 'card pg-card', testid: 'sessions-card' },
          h('div', { class: 'pg-card-head' }, h('h3', null, t('Recent sessions'))),
          sessions(d.sessions))),
      badges(d.badges));
  }

  /* ---- numbers ---- */
  function stat(testid, value, name, note, cls) {
    return h('div', { class: 'pg-stat ' + (cls || ''), testid: testid },
      h('span', { class: 'pg-stat-value' }, value, cls === 'hot' ? QuireIcons.svg('flame') : null), h('span', { class: 'pg-stat-name' }, name),
      note ? h('span', { class: 'pg-stat-note muted' }, note) : null);
  }

  function stats(d) {
    var today = d.today, w = d.week, c = d.cards;
    return h('div', { class: 'pg-stats', testid: 'progress-stats' },
      stat('stat-today', minutes(today.minutes), t('Today'), plural(today.actions, 'action') + ' · ' + plural(today.sessions, 'session')),
      stat('stat-week', minutes(w.minutes), t('This week'), plural(w.days_active, 'day') + ' · ' + plural(w.questions, 'question')),
      stat('stat-streak', plural(d.streak.current, 'day'), t('Current streak'), t('longest {days}', { days: plural(d.streak.longest, 'day') }), d.streak.current ? 'hot' : ''),
      stat('stat-cards', QuireI18n.number(c.due_now), t('Cards due now'), t('{due} today · {reviewed} reviewed today', { due: c.due_today, reviewed: c.reviewed_today })),
      stat('stat-total', minutes(d.total_minutes), t('All time'), plural(c.reviewed_total, 'card review') + ' · ' + plural(d.events, 'action')));
  }

  /* ---- the heatmap: one column per week, Monday on top ---- */
  function level(x, max) {
    if (!x.count) return 0;
    var r = (x.minutes || x.count) / Math.max(1, max);
    return r > 0.75 ? 4 : r > 0.5 ? 3 : r > 0.25 ? 2 : 1;
  }

  function heatmap(days) {
    var cell = 14, gap = 3, top = 16, left = 30, scale = 1.5;
    var max = Math.max.apply(null, days.map(function (x) { return x.minutes || x.count; }).concat([1]));
    var first = new Date(days[0].date + 'T12:00:00');
    var offset = (first.getDay() + 6) % 7; // Monday = 0
    var weeks = Math.ceil((days.length + offset) / 7);
    var W = left + weeks * (cell + gap), H = top + 7 * (cell + gap);
    var svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, width: Math.round(W * scale), height: Math.round(H * scale), class: 'heatmap', role: 'img',
      'aria-label': t('Study activity over the last 90 days'), 'data-testid': 'heatmap' });
    [t('Mon'), '', t('Wed'), '', t('Fri'), '', t('Sun')].forEach(function (n, i) { if (n) svg.appendChild(label(0, top + i * (cell + gap) + 10, n, 'axis hm-axis')); });
    var lastMonth = null;
    days.forEach(function (x, i) {
      var col = Math.floor((i + offset) / 7), row = (i + offset) % 7;
      var month = x.date.slice(0, 7);
      if ((row === 0 || i === 0) && month !== lastMonth && col < weeks - 1) {
        svg.appendChild(label(left + col * (cell + gap), 10, day(x.date, { month: 'short' }), 'axis hm-axis'));
        lastMonth = month;
      }
      svg.appendChild(s('rect', { x: left + col * (cell + gap), y: top + row * (cell + gap), width: cell, height: cell, rx: 3,
        class: 'hm hm-' + level(x, max), 'data-date': x.date, 'data-count': x.count, 'data-minutes': x.minutes },
        title(day(x.date, { weekday: 'short', month: 'short', day: 'numeric' }) + ': ' + (x.count ? plural(x.count, 'action') + ', ' + minutes(x.minutes) : t('no study')))));
    });
    var legend = h('div', { class: 'hm-legend muted small' }, t('Less'),
      [0, 1, 2, 3, 4].map(function (l) { return s('svg', { width: 12, height: 12, viewBox: '0 0 12 12' }, s('rect', { width: 12, height: 12, rx: 2, class: 'hm hm-' + l })); }), t('More'));
    var active = days.filter(function (x) { return x.count; });
    var best = active.slice().sort(function (a, b) { return b.minutes - a.minutes || b.count - a.count; })[0];
    var total = active.reduce(function (t, x) { return t + x.minutes; }, 0);
    var facts = h('dl', { class: 'hm-facts' },
      h('dt', null, t('Active days')), h('dd', null, t('{n} of {total}', { n: active.length, total: days.length })),
      h('dt', null, t('Time in 90 days')), h('dd', null, minutes(total)),
      h('dt', null, t('Average active day')), h('dd', null, active.length ? minutes(total / active.length) : '—'),
      h('dt', null, t('Best day')), h('dd', null, best ? day(best.date) + ' · ' + minutes(best.minutes) : '—'));
    return h('div', { class: 'hm-wrap' }, h('div', { class: 'hm-map' }, svg, legend), facts);
  }

  /* ---- charts ---- */
  function frame(w, hgt, pad) {
    return s('svg', { viewBox: '0 0 ' + w + ' ' + hgt, class: 'chart', role: 'img', preserveAspectRatio: 'xMidYMid meet' });
  }

  function timeChart(rows) {
    var W = 420, H = 170, L = 34, B = 22, T = 10;
    var max = Math.max(10, Math.max.apply(null, rows.map(function (r) { return r.minutes; })));
    var step = max > 120 ? 60 : max > 40 ? 20 : 10;
    max = Math.ceil(max / step) * step;
    var svg = frame(W, H);
    svg.setAttribute('data-testid', 'time-chart');
    svg.setAttribute('aria-label', t('Minutes studied per day'));
    for (var v = 0; v <= max; v += step) {
      var y = H - B - (v / max) * (H - B - T);
      svg.appendChild(s('line', { x1: L, x2: W, y1: y, y2: y, class: 'grid' }));
      svg.appendChild(label(L - 6, y + 4, String(v), 'axis end'));
    }
    var bw = (W - L) / rows.length;
    rows.forEach(function (r, i) {
      var bh = (r.minutes / max) * (H - B - T);
      svg.appendChild(s('rect', { x: L + i * bw + 1.5, y: H - B - bh, width: Math.max(1, bw - 3), height: Math.max(r.minutes ? 2 : 0, bh), rx: 2, class: 'bar' },
        title(day(r.date) + ': ' + minutes(r.minutes))));
      if (i === rows.length - 1) svg.appendChild(label(W, H - 6, t('today'), 'axis end'));
      else if ((rows.length - 1 - i) % 7 === 0 && rows.length - 1 - i >= 5) svg.appendChild(label(L + i * bw + bw / 2, H - 6, day(r.date), 'axis mid'));
    });
    return svg;
  }

  function accuracyChart(rows) {
    if (!rows.length) return h('p', { class: 'empty pg-empty', testid: 'accuracy-empty' }, t('Answer a quiz and your accuracy appears here.'));
    rows = rows.slice(-30);
    var W = 420, H = 170, L = 34, B = 22, T = 10, R = 12;
    var svg = frame(W, H);
    svg.setAttribute('data-testid', 'accuracy-chart');
    svg.setAttribute('aria-label', t('Share of quiz answers right, per day'));
    [0, 50, 100].forEach(function (v) {
      var y = H - B - (v / 100) * (H - B - T);
      svg.appendChild(s('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'grid' }));
      svg.appendChild(label(L - 6, y + 4, v + '%', 'axis end'));
    });
    var x = function (i) { return rows.length === 1 ? (L + W - R) / 2 : L + 8 + i * (W - R - L - 16) / (rows.length - 1); };
    var y = function (a) { return H - B - a * (H - B - T); };
    svg.appendChild(s('polyline', { points: rows.map(function (r, i) { return x(i) + ',' + y(r.accuracy); }).join(' '), class: 'line' }));
    rows.forEach(function (r, i) {
      svg.appendChild(s('circle', { cx: x(i), cy: y(r.accuracy), r: 4, class: 'dot' },
        title(day(r.date) + ': ' + t('{correct} of {answered} right ({percent}%)', { correct: r.correct, answered: r.answered, percent: Math.round(r.accuracy * 100) }))));
    });
    svg.appendChild(label(x(0), H - 6, day(rows[0].date), 'axis mid'));
    if (rows.length > 1) svg.appendChild(label(x(rows.length - 1), H - 6, day(rows[rows.length - 1].date), 'axis mid'));
    return svg;
  }

  function coverage(rows) {
    if (!rows.length) return h('p', { class: 'empty pg-empty' }, t('Train a source in Library to see how much of it you have studied.'));
    return h('ul', { class: 'coverage', testid: 'coverage' }, rows.map(function (c) {
      var fill = h('span', { class: 'cov-fill' });
      fill.style.width = Math.round(c.fraction * 100) + '%';
      return h('li', { testid: 'coverage-row', dataset: { source: c.name } },
        h('span', { class: 'cov-name', title: c.name }, c.name),
        h('span', { class: 'cov-bar', role: 'meter', 'aria-label': c.name, 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': String(Math.round(c.fraction * 100)) }, fill),
        h('span', { class: 'cov-num muted small' }, t('{n} of {total}', { n: c.covered, total: c.chunks }) + ' · ' + Math.round(c.fraction * 100) + '%'));
    }));
  }

  function sessions(rows) {
    if (!rows.length) return h('p', { class: 'empty pg-empty' }, t('Ask a question, answer a quiz or review cards: sessions appear by themselves.'));
    return h('ul', { class: 'sessions', testid: 'sessions' }, rows.slice(0, 6).map(function (x) {
      var start = new Date(x.start), end = new Date(x.end + 60000);
      return h('li', null, h('span', null, start.toLocaleDateString(QuireI18n.lang, { weekday: 'short', month: 'short', day: 'numeric' })),
        h('span', { class: 'muted' }, start.toLocaleTimeString(QuireI18n.lang, { hour: '2-digit', minute: '2-digit' }) + '–' +
          end.toLocaleTimeString(QuireI18n.lang, { hour: '2-digit', minute: '2-digit' })),
        h('span', null, minutes(x.minutes) + ' · ' + plural(x.actions, 'action')));
    }));
  }

  /* ---- badges: ladder by ladder, each tile showing its rung ---- */
  function badges(b) {
    var ladders = {}, order = [];
    b.all.forEach(function (x) {
      if (!ladders[x.ladder]) { ladders[x.ladder] = []; order.push(x.ladder); }
      ladders[x.ladder].push(x);
    });
    var tiles = [];
    order.forEach(function (key) {
      var rungs = ladders[key].sort(function (a, c) { return a.step - c.step; });
      rungs.forEach(function (x) { tiles.push(tile(x, rungs)); });
    });
    var next = b.next.length ? h('p', { class: 'muted small badges-next', testid: 'badges-next' }, t('Closest next:') + ' ',
      b.next.map(function (x, i) { return [i ? ' · ' : '', h('span', { class: 'badge-chip' }, QuireIcons.svg(x.icon), ' ' + QuireI18n.engine(x.name) + ' ' + x.value + '/' + x.target)]; })) : null;
    return h('div', { class: 'card pg-card', testid: 'badges-card' },
      h('div', { class: 'pg-card-head' }, h('h3', null, t('Achievements')),
        h('span', { class: 'muted small', testid: 'badges-count' }, t('{n} of {total} earned', { n: b.earned.length, total: b.total }))),
      next,
      h('div', { class: 'badge-grid', testid: 'badge-grid' }, tiles));
  }

  function tile(x, rungs) {
    var fill = h('span', { class: 'cov-fill' });
    fill.style.width = Math.round(x.fraction * 100) + '%';
    var ladder = rungs.length > 1 ? h('span', { class: 'badge-rungs', title: t('Step {n} of {total} in this ladder', { n: x.step + 1, total: rungs.length }) },
      rungs.map(function (r) { return h('i', { class: (r.earned ? 'on' : '') + (r.code === x.code ? ' me' : '') }); })) : null;
    return h('div', { class: 'badge-tile ' + (x.earned ? 'earned' : 'locked'), testid: 'badge', dataset: { code: x.code, earned: x.earned ? '1' : '0', ladder: x.ladder },
      title: QuireI18n.engine(x.description) + (x.awarded ? ' ' + t('Earned {date}.', { date: new Date(x.awarded).toLocaleDateString(QuireI18n.lang) }) : '') },
      h('span', { class: 'badge-icon' }, QuireIcons.svg(x.icon)),
      h('span', { class: 'badge-name' }, QuireI18n.engine(x.name), ladder),
      h('span', { class: 'badge-desc muted' }, QuireI18n.engine(x.description)),
      x.earned ? h('span', { class: 'badge-state' }, t('✓ earned') + (x.awarded ? ' ' + new Date(x.awarded).toLocaleDateString(QuireI18n.lang, { month: 'short', day: 'numeric' }) : '')) :
        h('span', { class: 'badge-progress' }, h('span', { class: 'cov-bar' }, fill), h('span', { class: 'muted small' }, Math.min(x.value, x.target) + ' / ' + x.target)));
  }

  QuireUI.register('progress', { init: init, show: show });
  window.addEventListener('hashchange', function () { if (location.hash !== '#progress') visible = false; });
})();
