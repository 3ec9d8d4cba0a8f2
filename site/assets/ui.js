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

  function bytes(n) {
    if (n == null) return '—';
    var units = ['B', 'KB', 'MB', 'GB'];
    var i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    return (i ? n.toFixed(n < 10 ? 1 : 0) : String(n)) + ' ' + units[i];
  }

  function date(seconds) {
    if (!seconds) return '—';
    return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  }

  var pluralRules = new Intl.PluralRules('en');
  /** A count with its noun: plural(1, 'page', 'pages') -> '1 page'; plural(3, 'card') -> '3 cards'. */
  function plural(n, one, many) { return n + ' ' + (pluralRules.select(Number(n)) === 'one' ? one : many || one + 's'); }

  /** A transient message; errors stay until dismissed. */
  function toast(message, kind) {
    var box = document.querySelector('[data-testid="toasts"]');
    var t = h('div', { class: 'toast ' + (kind || 'info'), role: kind === 'error' ? 'alert' : 'status', testid: 'toast' },
      h('span', null, message),
      h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', onclick: function () { t.remove(); } }, '×'));
    box.appendChild(t);
    if (kind !== 'error') setTimeout(function () { t.remove(); }, 6000);
    return t;
  }

  /* ---- views: one <section data-view="name"> each, chosen by the URL hash ---- */
  var views = {};
  function register(name, view) { views[name] = view; }

  function show(name) {
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

  return { h: h, clear: clear, fill: fill, bytes: bytes, plural: plural, date: date, toast: toast, register: register, show: show, start: start };
})();
