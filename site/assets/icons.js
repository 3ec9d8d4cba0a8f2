/* Inline SVG icons.  Emoji render as empty boxes on a Linux without an emoji font, so no
 * badge, streak or button shows one: badges.json keeps its emoji as the badge's data, and
 * QuireIcons.svg('🔥') draws the matching icon (a medal for one it does not know).
 *
 *   QuireIcons.svg('flame')  ->  <svg class="ico" aria-hidden="true" viewBox="0 0 24 24">…</svg>
 *
 * Every icon is a few strokes on a 24×24 grid in currentColor, so it follows the text colour. */
var QuireIcons = (function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var PATHS = {
    doc: 'M6 2h8l4 4v16H6z M14 2v4h4 M9 11h6 M9 15h6 M9 19h4',
    books: 'M4 4h4v16H4z M10 4h4v16h-4z M16 5l3.5-1 3 15.5-3.5 1z',
    columns: 'M3 9l9-6 9 6 M5 9v10 M10 9v10 M14 9v10 M19 9v10 M3 21h18',
    question: 'M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20z M9.1 9a3 3 0 1 1 4.2 2.7c-.8.4-1.3 1.2-1.3 2v.8 M12 17.5v.5',
    chat: 'M4 4h16v12H9l-5 4z M8 9h8 M8 12h5',
    search: 'M10.5 18a7.5 7.5 0 1 0 0-15 7.5 7.5 0 0 0 0 15z M16 16l6 6',
    target: 'M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20z M12 17a5 5 0 1 0 0-10 5 5 0 0 0 0 10z M12 13a1 1 0 1 0 0-2 1 1 0 0 0 0 2z',
    pencil: 'M4 20l1-5L16 4l4 4L9 19z M14 6l4 4 M4 20h6',
    note: 'M5 3h14v18H5z M8 8h8 M8 12h8 M8 16h5',
    star: 'M12 2.5l2.9 6 6.6.8-4.9 4.6 1.3 6.6L12 17.3 6.1 20.5l1.3-6.6L2.5 9.3l6.6-.8z',
    stars: 'M10 4l2.2 4.5 5 .7-3.6 3.5.9 5L10 15.4 5.5 17.7l.9-5L2.8 9.2l5-.7z M19 2v4 M17 4h4 M20 15v4 M18 17h4',
    cards: 'M3 7h12v14H3z M7 3h14v14 M6 12h6 M6 15h4',
    ace: 'M5 2h14v20H5z M12 7l3.5 8h-7z M10 13h4 M8 5v1 M16 18v1',
    brain: 'M9 3a3 3 0 0 0-3 3 3 3 0 0 0-2 5 3 3 0 0 0 1 5 3 3 0 0 0 4 4h3V3z M15 3a3 3 0 0 1 3 3 3 3 0 0 1 2 5 3 3 0 0 1-1 5 3 3 0 0 1-4 4h-3',
    flame: 'M12 22c4 0 7-2.8 7-7 0-3.5-2.5-6.5-4.5-8.5 0 2.5-1.5 4-3 4.5C12 8 11 4.5 8.5 2 8.5 6 5 9 5 14.5 5 19 8 22 12 22z M12 22c-1.7 0-3-1.3-3-3 0-2 1.5-3 3-4.5 1.5 1.5 3 2.5 3 4.5 0 1.7-1.3 3-3 3z',
    calendar: 'M3 5h18v16H3z M3 10h18 M8 2v5 M16 2v5 M7 14h2 M11 14h2 M15 14h2 M7 17h2 M11 17h2',
    trophy: 'M7 3h10v6a5 5 0 0 1-10 0z M7 5H3v2a4 4 0 0 0 4 4 M17 5h4v2a4 4 0 0 1-4 4 M12 14v4 M8 21h8 M9 18h6',
    stopwatch: 'M12 22a8 8 0 1 0 0-16 8 8 0 0 0 0 16z M12 10v4l2.5 2 M10 2h4 M12 2v4 M19 6l1.5-1.5',
    hourglass: 'M6 2h12 M6 22h12 M7 2c0 5 5 6 5 10s-5 5-5 10 M17 2c0 5-5 6-5 10s5 5 5 10 M9 19h6',
    repeat: 'M4 11V9a4 4 0 0 1 4-4h12 M17 2l3 3-3 3 M20 13v2a4 4 0 0 1-4 4H4 M7 22l-3-3 3-3',
    folder: 'M3 6h6l2 2h10v12H3z M3 11h18',
    cap: 'M2 9l10-5 10 5-10 5z M6 11v5c0 1.5 2.7 3 6 3s6-1.5 6-3v-5 M22 9v6',
    tools: 'M14.5 6.5a4 4 0 0 0 5 5L21 13l-2 2-6.5-6.5 M14.5 6.5L17 4l3 3-2.5 2.5 M12.5 8.5L4 17l3 3 8.5-8.5 M3 3l5 5',
    map: 'M3 6l6-3 6 3 6-3v15l-6 3-6-3-6 3z M9 3v15 M15 6v15',
    box: 'M3 7l9-4 9 4v10l-9 4-9-4z M3 7l9 4 9-4 M12 11v10',
    medal: 'M8 2l4 7 4-7 M12 22a6 6 0 1 0 0-12 6 6 0 0 0 0 12z M12 13l1 2.2 2.3.3-1.7 1.6.4 2.3-2-1.1-2 1.1.4-2.3-1.7-1.6 2.3-.3z',
    close: 'M6 6l12 12 M18 6L6 18',
    check: 'M4 12.5l5 5L20 6.5',
    edit: 'M4 20l1-5L16 4l4 4L9 19z M14 6l4 4',
    mic: 'M9 3h6v11H9z M5 11a7 7 0 0 0 14 0 M12 18v4 M8 22h8',
    gear: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z M12 2v3 M12 19v3 M2 12h3 M19 12h3 M4.9 4.9L7 7 M17 17l2.1 2.1 M4.9 19.1L7 17 M17 7l2.1-2.1',
    quiz: 'M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20z M9.1 9a3 3 0 1 1 4.2 2.7c-.8.4-1.3 1.2-1.3 2v.8 M12 17.5v.5',
    flashcards: 'M3 7h12v14H3z M7 3h14v14',
    workshop: 'M4 5h16 M4 10h16 M4 15h16 M4 20h10',
    mindmap: 'M12 14a2 2 0 1 0 0-4 2 2 0 0 0 0 4z M5 5a2 2 0 1 0 0 .1z M19 5a2 2 0 1 0 0 .1z M5 19a2 2 0 1 0 0 .1z M19 19a2 2 0 1 0 0 .1z M6.5 6.5l4 4 M17.5 6.5l-4 4 M6.5 17.5l4-4 M17.5 17.5l-4-4',
  };
  /* The emoji badges.json names, and the icon drawn for each. */
  var EMOJI = {
    '📄': 'doc', '📚': 'books', '🏛️': 'columns', '🏛': 'columns', '❓': 'question', '💬': 'chat', '🔎': 'search', '🔍': 'search',
    '🎯': 'target', '✏️': 'pencil', '✏': 'pencil', '📝': 'note', '⭐': 'star', '★': 'star', '🌟': 'stars', '🃏': 'cards', '🂡': 'ace',
    '🧠': 'brain', '🔥': 'flame', '📅': 'calendar', '🏆': 'trophy', '⏱️': 'stopwatch', '⏱': 'stopwatch', '⌛': 'hourglass',
    '🔁': 'repeat', '🗂️': 'folder', '🗂': 'folder', '🎓': 'cap', '🛠️': 'tools', '🛠': 'tools', '🗺️': 'map', '🗺': 'map', '📦': 'box',
  };

  /** The icon named by name or emoji, as an SVG element hidden from screen readers (the text beside it speaks). */
  function svg(name) {
    var key = PATHS[name] ? name : EMOJI[name] || 'medal';
    var el = document.createElementNS(NS, 'svg');
    el.setAttribute('class', 'ico ico-' + key);
    el.setAttribute('viewBox', '0 0 24 24');
    el.setAttribute('aria-hidden', 'true');
    el.setAttribute('focusable', 'false');
    el.dataset.icon = key;
    var path = document.createElementNS(NS, 'path');
    path.setAttribute('d', PATHS[key]);
    el.appendChild(path);
    return el;
  }

  return { svg: svg, names: Object.keys(PATHS), emoji: EMOJI };
})();
