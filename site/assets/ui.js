/* Small DOM helpers and the view router shared by every view.  No framework: a newcomer
 * can read a view top to bottom.  Text always goes in as text, never as HTML. */
var QuireUI = (function () {
  'use strict';

  /** h('button', {class: 'primary', onclick: fn, dataset: {testid: 'x'}}, 'Label', child) */
  function h(tag, attrs) {
    var el = document.createElement(tag);
    var a = attrs || {};
    Object.keys(a).forEach(function (k) {
      var v = a[k];
      if (v == null || v === false) return;
      if (k === 'dataset') Object.keys(v).forEach(function (d) { el.dataset[d] = v[d]; });
      else if (k === 'testid') el.setAttribute('data-testid', v);
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (v === true) el.setAttribute(k, '');
      else el.setAttribute(k, String(v));
    });
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }

  function append(el, child) {
    if (child == null || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(el, c); }); return; }
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }

  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

  /** Replace el's children; null and false children are skipped (DOM append would print "null"). */
  function fill(el) {
    clear(el);
    for (var i = 1; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }

  /* One Intl formatter per style: toLocaleString() builds a new one on every call (a
   * thousand-row library spent 0.3 s there). */
  var formats = {};

  function bytes(n) {
    if (n == null) return '—';
    var units = ['B', 'KB', 'MB', 'GB'];
    var i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    var digits = i && n < 10 ? 1 : 0;
    var f = formats['bytes' + digits] || (formats['bytes' + digits] =
      new Intl.NumberFormat(QuireI18n.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }));
    return f.format(n) + ' ' + units[i];
  }

  function formatter(name, options) {
    return formats[name] || (formats[name] = new Intl.DateTimeFormat(QuireI18n.lang, options));
  }

  function date(seconds) {
    if (!seconds) return '—';
    return formatter('full', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(seconds * 1000));
  }

  /** A short date for tables: today's time, else day and month (the year only when it differs). */
  function shortDate(seconds) {
    if (!seconds) return '—';
    var d = new Date(seconds * 1000), now = new Date();
    if (d.toDateString() === now.toDateString()) return formatter('time', { hour: '2-digit', minute: '2-digit' }).format(d);
    return d.getFullYear() === now.getFullYear() ? formatter('day', { day: 'numeric', month: 'short' }).format(d)
      : formatter('medium', { dateStyle: 'medium' }).format(d);
  }

  var t = QuireI18n.t;
  /** A count with its noun, in the page's language: plural(1, 'page') -> '1 page'; plural(3, 'card') -> '3 cards'. */
  var plural = QuireI18n.plural;

  /** A transient message; errors stay until dismissed.  toast(err, 'error') or toast(err.message, 'error')
   * of an engine error with a technical detail (a traceback) adds a "Copy details" button. */
  function toast(message, kind, detail) {
    if (message && typeof message === 'object' && 'message' in message) { detail = detail || message.detail; message = message.message; }
    if (!detail && kind === 'error' && self.quire && self.quire._errorDetail) detail = self.quire._errorDetail(message);
    var box = document.querySelector('[data-testid="toasts"]');
    var text = h('span', { class: 'toast-text' }, QuireI18n.engine(message));
    var note = h('div', { class: 'toast ' + (kind || 'info'), role: kind === 'error' ? 'alert' : 'status', testid: 'toast' }, text,
      h('button', { type: 'button', class: 'toast-close', 'aria-label': t('Dismiss'), onclick: function () { note.remove(); } }, QuireIcons.svg('close')));
    if (typeof detail === 'string' && detail) {
      var report = message + '\n\n' + detail;
      var button = h('button', { type: 'button', class: 'toast-copy', testid: 'copy-details', onclick: function () { copyDetails(note, button, report); } }, t('Copy details'));
      text.appendChild(button);
    }
    if (mainEl && !settling) mainHeight = mainEl.clientHeight;  // as it was before the first toast of this task
    box.appendChild(note);
    settleAfterToast();
    if (kind !== 'error') setTimeout(function () { note.remove(); }, 6000);
    return note;
  }

  /* The clipboard API needs a secure context (not file://) and permission; without it the
   * text is shown selected in a read-only box, for Ctrl+C. */
  function copyDetails(note, button, report) {
    function copied() { button.textContent = t('Details copied'); }
    function showText() {
      if (note.querySelector('.toast-detail')) return;
      var area = h('textarea', { class: 'toast-detail', testid: 'toast-detail', readonly: true, rows: 8, 'aria-label': t('Select the details and copy them (Ctrl+C).') });
      area.value = report;
      note.appendChild(area);
      area.focus();
      area.select();
      button.textContent = t('Select the details and copy them (Ctrl+C).');
    }
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(report).then(copied, showText);
    else showText();
  }

  /* Toasts take their own strip above the status bar, so <main> gets shorter when one comes,
   * and what sat at its bottom edge would slide out of sight (a flashcard's rating buttons on a
   * phone).  The control the person is working with, the focused one, stays in view: when
   * <main> shrinks and the focused element was in view before, <main> scrolls just enough.
   * toast() settles this itself, in a microtask (after its caller has added an icon, before the
   * next frame); a ResizeObserver catches any other shrink.  WebKit under load once delivered the
   * observer's note only after the frame in which the toasts were drawn. */
  var mainEl = document.querySelector('main');
  var mainHeight = mainEl ? mainEl.clientHeight : 0;
  function keepFocusInView() {
    var main = mainEl;
    if (!main) return;
    var before = mainHeight;
    var height = mainHeight = main.clientHeight;
    var el = document.activeElement;
    if (height >= before || !el || el === main || !main.contains(el)) return;
    var top = main.getBoundingClientRect().top + main.clientTop;
    var box = el.getBoundingClientRect();
    var hidden = box.bottom - (top + height);
    // Only what was in view before, and only as far as its top stays in view.
    if (hidden > 0 && box.bottom <= top + before + 1 && box.top >= top) main.scrollTop += Math.min(hidden + 8, box.top - top);
  }
  var settling = false;
  function settleAfterToast() {
    if (settling) return;
    settling = true;
    Promise.resolve().then(function () { settling = false; keepFocusInView(); });
  }
  if (mainEl && typeof ResizeObserver === 'function') new ResizeObserver(keepFocusInView).observe(mainEl);

  /* ---- views: one <section data-view="name"> each, chosen by the URL hash ---- */
  var views = {};
  var excluded = {};  // views a kiosk leaves out (kiosk-reset.js): never registered, never shown
  function register(name, view) { if (!excluded[name]) views[name] = view; }
  function exclude(names) { names.forEach(function (name) { excluded[name] = true; delete views[name]; }); }

  /* Whether el's view is the one on screen. A hidden view does not rebuild itself after every
   * change (with 5,000 sources each rebuild took seconds of the page); its show() catches up. */
  function shown(el) { var view = el && el.closest('[data-view]'); return !!view && !view.hidden; }

  function show(name) {
    // An excluded view's address (#settings in a kiosk) lands on the library, and says so.
    if (excluded[name]) history.replaceState(history.state, '', '#library');
    if (!views[name]) name = 'library';
    document.querySelectorAll('[data-view]').forEach(function (s) { s.hidden = s.dataset.view !== name; });
    document.querySelectorAll('[data-nav]').forEach(function (a) {
      if (a.dataset.nav === name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    });
    if (views[name].show) views[name].show();
  }

  function start() {
    Object.keys(views).forEach(function (name) {
      var root = document.querySelector('[data-view="' + name + '"]');
      if (root && views[name].init) views[name].init(root);
    });
    window.addEventListener('hashchange', function () { show(location.hash.slice(1)); });
    show(location.hash.slice(1) || 'library');
  }

  /* A vault import's step (quire.importVault's onProgress) in words, for a status line. */
  function importStep(stage) {
    return ({ checking: t('Checking the whole file…'), index: t('Building the search index from its passages…'),
              saving: t('Saving it in one go…'), opening: t('Opening the library…') })[stage] || '';
  }

  /* The language switch in the top bar: the page reloads in the chosen language. */
  QuireI18n.apply();
  var langSwitch = document.querySelector('[data-testid="lang-switch"]');
  if (langSwitch) {
    langSwitch.value = QuireI18n.lang;
    langSwitch.addEventListener('change', function () { QuireI18n.set(langSwitch.value); });
  }

  return { t: t, shortDate: shortDate, h: h, clear: clear, fill: fill, bytes: bytes, plural: plural, date: date, toast: toast, importStep: importStep, register: register, exclude: exclude, shown: shown, show: show, start: start };
})();
