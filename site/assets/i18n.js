/* The page's language: English or German, message catalogs, plurals, numbers and dates.
 *
 * The English text is the message id (gettext's convention), so a view still reads top to
 * bottom in English:  t('Removed {name}.', {name: s.name})  ->  "{name} entfernt." in German.
 * A catalog (assets/i18n-de.js) maps ids to German; a plural noun maps to its two forms:
 * 'page': ['Seite', 'Seiten'].  English needs no catalog: its text is the id itself, and
 * tests/test_i18n.py checks that every id the code uses has a German entry and the other way round.
 *
 * Messages from the engine (Python) arrive in English; the catalog's engine templates
 * ('The file {name} is password-protected…') match them and carry their parameters over.
 *
 * The language comes from ?lang=de in the address, else the one chosen before (remembered in
 * this browser), else the browser's own languages, else English. */
var QuireI18n = (function () {
  'use strict';
  var NAMES = { en: 'English', de: 'Deutsch' };
  var KEY = 'quire.lang';
  var catalogs = { en: {} };
  var engines = { en: [] };

  function stored() { try { return localStorage.getItem(KEY); } catch (e) { return null; } }

  function choose() {
    var asked = new URLSearchParams(location.search).get('lang');
    if (NAMES[asked]) return asked;
    if (NAMES[stored()]) return stored();
    var langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || 'en'];
    for (var i = 0; i < langs.length; i++) {
      var base = String(langs[i]).toLowerCase().split('-')[0];
      if (NAMES[base]) return base;
    }
    return 'en';
  }

  var lang = choose();
  var rules = new Intl.PluralRules(lang);
  var numbers = new Intl.NumberFormat(lang);

  /** add('de', {'Search': 'Suchen', 'page': ['Seite', 'Seiten']}) */
  function add(code, entries) { catalogs[code] = Object.assign(catalogs[code] || {}, entries); }

  /** addEngine('de', {'{name} is empty.': '{name} ist leer.'}): templates for the engine's messages. */
  function addEngine(code, templates) {
    engines[code] = (engines[code] || []).concat(Object.keys(templates).map(function (en) {
      var names = [];
      var pattern = en.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, function (_, n) { names.push(n); return '([\\s\\S]+?)'; });
      return { re: new RegExp('^' + pattern + '$'), names: names, text: templates[en] };
    }));
  }

  function format(text, params) {
    if (!params) return text;
    return text.replace(/\{(\w+)\}/g, function (m, name) {
      var v = params[name];
      if (v == null) return m;
      return typeof v === 'number' ? numbers.format(v) : String(v);
    });
  }

  /** t('Removed {name}.', {name: 'a.pdf'}) -> 'Removed a.pdf.' (or its German). */
  function t(text, params) {
    var hit = catalogs[lang] && catalogs[lang][text];
    return format(typeof hit === 'string' ? hit : text, params);
  }

  /** plural(1, 'page') -> '1 page'; plural(3, 'page') -> '3 pages'; in German '3 Seiten'. */
  function plural(n, one, many) {
    var forms = catalogs[lang] && catalogs[lang][one];
    if (!Array.isArray(forms)) forms = [one, many || one + 's'];
    return numbers.format(Number(n)) + ' ' + (rules.select(Number(n)) === 'one' ? forms[0] : forms[1]);
  }

  /** A message from the engine, in the page's language when the catalog knows its template. */
  function engine(message) {
    var text = String(message == null ? '' : message);
    var hit = catalogs[lang] && catalogs[lang][text];
    if (typeof hit === 'string') return hit;
    var list = engines[lang] || [];
    for (var i = 0; i < list.length; i++) {
      var m = list[i].re.exec(text);
      if (!m) continue;
      var params = {};
      list[i].names.forEach(function (n, j) { params[n] = engine(m[j + 1]); });
      return format(list[i].text, params);
    }
    // "Label. Sentence." made of known messages: translate sentence by sentence.
    var sentences = text.split(/(?<=\.)\s+(?=[A-Z])/);
    if (sentences.length < 2) return text;
    var out = sentences.map(function (s) {
      var whole = engine(s);
      if (whole !== s || s.slice(-1) !== '.') return whole;
      var bare = engine(s.slice(0, -1));
      return bare === s.slice(0, -1) ? s : bare + '.';
    });
    return out.some(function (s, i) { return s !== sentences[i]; }) ? out.join(' ') : text;
  }

  /** Translate the page's fixed markup: [data-i18n] elements' text, [data-i18n-attr] attributes. */
  function apply(root) {
    (root || document).querySelectorAll('[data-i18n]').forEach(function (el) { el.textContent = t(el.textContent.replace(/\s+/g, " ").trim()); });
    (root || document).querySelectorAll('[data-i18n-attr]').forEach(function (el) {
      el.dataset.i18nAttr.split(',').forEach(function (a) { if (el.hasAttribute(a)) el.setAttribute(a, t(el.getAttribute(a))); });
    });
  }

  /** Choose a language for this browser and show the page in it. */
  function set(code) {
    if (!NAMES[code]) throw new Error('Unknown language "' + code + '"; choose one of: ' + Object.keys(NAMES).join(', '));
    try { localStorage.setItem(KEY, code); } catch (e) { /* remembered for this page only */ }
    var url = new URL(location.href);
    url.searchParams.delete('lang');
    if (url.href === location.href) location.reload(); else location.replace(url.href);
  }

  document.documentElement.lang = lang;
  return { lang: lang, names: NAMES, add: add, addEngine: addEngine, t: t, plural: plural, engine: engine, apply: apply, set: set,
    number: function (n) { return numbers.format(n); }, catalog: function (code) { return catalogs[code] || {}; } };
})();
