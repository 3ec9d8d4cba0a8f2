/* QuireMindmap: a topic tree as an SVG diagram you can collapse, expand, pan and zoom.
 *
 *   var map = QuireMindmap.create(container, tree, {onSelect: function (node) { ... }});
 *   map.toggle('0.2'); map.expandAll(); map.fit(); map.focus('0.2');
 *   map.svgText()  -> a standalone SVG file (what is expanded now, no pan/zoom)
 *   map.pngBlob()  -> Promise<Blob> of the same drawing at 2x
 *
 * tree = {topic, children: [{label, chunk_ids, children: [...]}]}.  Layout is left to right:
 * a column per depth, leaves stacked in order, each parent centred on its children.  Boxes are
 * as wide as their measured label, so no label is clipped.  The first view and Fit show the whole
 * map at a readable size, collapsing deeper levels when it would not fit otherwise.
 *
 * Keyboard (an ARIA tree, one node in the tab order): arrows move (Right opens, Left closes or goes
 * to the parent), Home/End jump, Enter shows the node's passages, Space collapses or expands.
 * Colours are SVG attributes, not CSS, so an exported file looks the same anywhere (and the
 * page's CSP forbids inline styles anyway). */
var QuireMindmap = (function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#2f5d8a', '#2e6b3a', '#9a3b1b', '#6b4fa0', '#a8741a', '#1f7a7a', '#a03a6b'];
  var ROW = 34, GAP = 8, COL_GAP = 56, FONT = 13, MAX_CHARS = 40, PAD = 24;
  var READABLE = 0.7;  // the smallest scale at which 13 px labels stay readable (about 9 px)
  var FONT_FAMILY = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';

  function el(tag, attrs, parent) {
    var node = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  function short(label, max) { max = max || MAX_CHARS; return label.length > max ? label.slice(0, max - 1) + '…' : label; }
  /* The label's real width in the font it is drawn in (a guess per character clipped long words). */
  var measurer = null;
  function textWidth(text, depth) {
    measurer = measurer || document.createElement('canvas').getContext('2d');
    measurer.font = (depth <= 1 ? '600 ' : '400 ') + (depth ? FONT : FONT + 2) + 'px ' + FONT_FAMILY;
    return measurer.measureText(text).width;
  }
  function width(text, depth) { return Math.ceil(textWidth(text, depth) + (depth ? 26 : 34)); }

  /* Visible nodes with positions.  Keys are child index paths: '' is the root, '1.0' a grandchild.
   * Labels longer than maxChars end in "…" (the whole label is the node's title). */
  function layout(tree, open, maxChars) {
    var nodes = [], colWidth = [];
    var next = 0;
    function walk(node, key, depth, branch, parent) {
      var kids = node.children || [];
      var isOpen = key === '' || open.has(key);
      var label = depth ? node.label : tree.topic;
      var text = short(label, maxChars);
      var n = { key: key, label: label, text: text, depth: depth, branch: branch, parent: parent, w: width(text, depth),
        hasKids: kids.length > 0, open: isOpen, chunk_ids: node.chunk_ids || [], count: kids.length };
      nodes.push(n);
      colWidth[depth] = Math.max(colWidth[depth] || 0, n.w);
      if (kids.length && isOpen) {
        var ys = kids.map(function (child, i) {
          return walk(child, key === '' ? String(i) : key + '.' + i, depth + 1, depth ? branch : i, n).y;
        });
        n.y = (ys[0] + ys[ys.length - 1]) / 2;
      } else {
        n.y = next * (ROW + GAP) + ROW / 2;
        next++;
      }
      return n;
    }
    walk(tree, '', 0, 0, null);
    var xs = [PAD];
    for (var d = 1; d < colWidth.length; d++) xs[d] = xs[d - 1] + colWidth[d - 1] + COL_GAP;
    nodes.forEach(function (n) { n.x = xs[n.depth]; n.y += PAD; });
    var w = xs[xs.length - 1] + colWidth[colWidth.length - 1] + PAD + 16;
    return { nodes: nodes, width: w, height: Math.max(next, 1) * (ROW + GAP) + PAD * 2 };
  }

  function draw(g, lay, opts) {
    var colour = function (n) { return n.depth ? PALETTE[n.branch % PALETTE.length] : '#1f2630'; };
    lay.nodes.forEach(function (n) {
      if (!n.parent) return;
      var p = n.parent, x1 = p.x + p.w + (p.hasKids && p.depth ? 19 : 0), y1 = p.y, x2 = n.x, y2 = n.y, xm = (x1 + x2) / 2;
      el('path', { d: 'M' + x1 + ' ' + y1 + ' C' + xm + ' ' + y1 + ' ' + xm + ' ' + y2 + ' ' + x2 + ' ' + y2,
        fill: 'none', stroke: colour(n), 'stroke-width': n.depth === 1 ? 2.5 : 1.6, 'stroke-opacity': 0.55 }, g);
    });
    lay.nodes.forEach(function (n) {
      var c = colour(n);
      var node = el('g', { transform: 'translate(' + n.x + ',' + (n.y - ROW / 2) + ')', 'data-testid': 'mm-node',
        'data-key': n.key, 'data-depth': n.depth, 'data-open': n.open ? '1' : '0', class: 'mm-node' +
          (opts.selected === n.key ? ' selected' : '') }, g);
      if (opts.interactive) {
        node.setAttribute('role', 'treeitem');
        node.setAttribute('aria-level', String(n.depth + 1));
        node.setAttribute('aria-selected', opts.selected === n.key ? 'true' : 'false');
        node.setAttribute('tabindex', opts.focus === n.key ? '0' : '-1');
        if (n.hasKids) node.setAttribute('aria-expanded', n.open ? 'true' : 'false');
      }
      var filled = n.depth <= 1;
      el('rect', { width: n.w, height: ROW, rx: 9, fill: filled ? c : '#fffdf8', stroke: c,
        'stroke-width': opts.selected === n.key ? 3 : 1.3 }, node);
      var text = el('text', { x: n.w / 2, y: ROW / 2 + FONT * 0.36, 'text-anchor': 'middle',
        'font-family': FONT_FAMILY, 'font-size': n.depth ? FONT : FONT + 2,
        'font-weight': n.depth <= 1 ? 600 : 400, fill: filled ? '#ffffff' : '#1f2630' }, node);
      text.textContent = n.text;
      el('title', {}, node).textContent = n.label + (n.chunk_ids.length ? ' — ' + QuireUI.plural(n.chunk_ids.length, 'passage') : '');
      if (n.hasKids && n.depth) {
        var knob = el('g', { transform: 'translate(' + (n.w + 10) + ',' + ROW / 2 + ')', class: 'mm-toggle',
          'data-testid': 'mm-toggle', 'data-key': n.key }, node);
        el('circle', { r: 9, fill: '#fffdf8', stroke: c, 'stroke-width': 1.5 }, knob);
        var sign = el('text', { 'text-anchor': 'middle', y: 4.5, 'font-size': 13, 'font-weight': 700, fill: c,
          'font-family': 'system-ui, sans-serif' }, knob);
        sign.textContent = n.open ? '−' : String(n.count);
      }
    });
  }

  function create(container, tree, opts) {
    opts = opts || {};
    var open = new Set((tree.children || []).map(function (_, i) { return String(i); }));
    var view = { x: 0, y: 0, k: 1 };
    var selected = null, lay = null, focusKey = '', maxChars = MAX_CHARS;
    var svg = el('svg', { class: 'mindmap', 'data-testid': 'mindmap-svg', role: 'tree',
      'aria-label': QuireUI.t('Mind map of {topic}', { topic: QuireI18n.engine(tree.topic) }) });
    var stage = el('g', { role: 'none' }, svg);
    container.appendChild(svg);

    function apply() { stage.setAttribute('transform', 'translate(' + view.x + ',' + view.y + ') scale(' + view.k + ')'); }
    function render() {
      var hadFocus = svg.contains(document.activeElement);
      lay = layout(tree, open, maxChars);
      if (!lay.nodes.some(function (n) { return n.key === focusKey; })) focusKey = '';
      while (stage.firstChild) stage.removeChild(stage.firstChild);
      draw(stage, lay, { selected: selected, focus: focusKey, interactive: true });
      apply();
      if (hadFocus) nodeEl(focusKey).focus();
    }
    function nodeEl(key) { return stage.querySelector('[data-testid="mm-node"][data-key="' + key + '"]'); }
    function find(key) {
      if (key === '') return tree;
      return key.split('.').reduce(function (n, i) { return n.children[Number(i)]; }, tree);
    }
    function scaleToFit(box) { return Math.min(1.4, box.width / lay.width, box.height / lay.height); }
    /* The whole map in its frame.  When that would make the labels too small, the deepest open
     * level closes first (down to the first level, which always shows). */
    function fit() {
      var box = svg.getBoundingClientRect();
      if (!box.width) return;
      while (scaleToFit(box) < READABLE && open.size) {
        var deepest = Math.max.apply(null, Array.from(open).map(function (k) { return k.split('.').length; }));
        Array.from(open).forEach(function (k) { if (k.split('.').length === deepest) open.delete(k); });
        render();
      }
      // A narrow frame (a phone): shorter labels rather than unreadably small ones.
      while (scaleToFit(box) < READABLE && maxChars > 14) {
        maxChars -= 6;
        render();
      }
      frame();
    }
    /* The map as it is, scaled and centred to fit (Expand all asks for every level). */
    function frame() {
      var box = svg.getBoundingClientRect();
      if (!box.width) return;
      view.k = scaleToFit(box);
      view.x = (box.width - lay.width * view.k) / 2;
      view.y = Math.max(0, (box.height - lay.height * view.k) / 2);
      apply();
      svg.setAttribute('data-fitted', '1');  // the first view is in place (tests wait for it)
    }
    function zoom(factor, cx, cy) {
      var box = svg.getBoundingClientRect();
      cx = cx == null ? box.width / 2 : cx;
      cy = cy == null ? box.height / 2 : cy;
      var k = Math.min(4, Math.max(0.15, view.k * factor));
      view.x = cx - (cx - view.x) * (k / view.k);
      view.y = cy - (cy - view.y) * (k / view.k);
      view.k = k;
      apply();
    }
    /* Refit only when the drawing no longer fits, so a click does not make the map jump. */
    function keepInView() {
      var box = svg.getBoundingClientRect();
      if (view.x < 0 || view.y < 0 || view.x + lay.width * view.k > box.width || view.y + lay.height * view.k > box.height) frame();
    }
    function toggle(key) {
      if (open.has(key)) open.delete(key); else open.add(key);
      render();
      keepInView();
    }
    function select(key) {
      selected = key;
      render();
      var data = find(key);
      if (opts.onSelect) opts.onSelect({ key: key, label: key === '' ? tree.topic : data.label, chunk_ids: data.chunk_ids || [] });
    }
    /* Move the keyboard focus to a node and pan just enough to show it. */
    function focusNode(key) {
      focusKey = key;
      stage.querySelectorAll('[data-testid="mm-node"]').forEach(function (g) { g.setAttribute('tabindex', g.getAttribute('data-key') === key ? '0' : '-1'); });
      var g = nodeEl(key);
      if (!g) return;
      g.focus();
      var n = lay.nodes.filter(function (x) { return x.key === key; })[0];
      var box = svg.getBoundingClientRect();
      var left = view.x + n.x * view.k, right = view.x + (n.x + n.w + 24) * view.k;
      var top = view.y + (n.y - ROW / 2) * view.k, bottom = view.y + (n.y + ROW / 2) * view.k;
      if (left < 0) view.x -= left - 8; else if (right > box.width) view.x -= right - box.width + 8;
      if (top < 0) view.y -= top - 8; else if (bottom > box.height) view.y -= bottom - box.height + 8;
      apply();
    }
    svg.addEventListener('keydown', function (e) {
      var i = lay.nodes.map(function (n) { return n.key; }).indexOf(focusKey);
      var n = lay.nodes[i];
      if (!n) return;
      var go = null;
      if (e.key === 'ArrowDown') go = lay.nodes[i + 1];
      else if (e.key === 'ArrowUp') go = lay.nodes[i - 1];
      else if (e.key === 'Home') go = lay.nodes[0];
      else if (e.key === 'End') go = lay.nodes[lay.nodes.length - 1];
      else if (e.key === 'ArrowRight') {
        if (n.hasKids && !n.open) { toggle(n.key); focusNode(n.key); } else go = lay.nodes[i + 1] && lay.nodes[i + 1].parent === n ? lay.nodes[i + 1] : null;
      } else if (e.key === 'ArrowLeft') {
        if (n.hasKids && n.open && n.depth) { toggle(n.key); focusNode(n.key); } else go = n.parent;
      } else if (e.key === 'Enter') select(n.key);
      else if (e.key === ' ') { if (n.hasKids && n.depth) { toggle(n.key); focusNode(n.key); } }
      else return;
      e.preventDefault();
      if (go) focusNode(go.key);
    });
    function setAll(expand) {
      open.clear();
      if (expand) {
        (function walk(node, key) {
          (node.children || []).forEach(function (c, i) {
            var k = key === '' ? String(i) : key + '.' + i;
            if (c.children && c.children.length) { open.add(k); walk(c, k); }
          });
        })(tree, '');
      }
      render();
      if (expand) frame(); else fit();
    }

    // Click: a knob toggles, a node selects.  Drag on anything pans; the wheel zooms at the cursor.
    var drag = null;
    svg.addEventListener('pointerdown', function (e) {
      drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
    });
    svg.addEventListener('pointermove', function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) { drag.moved = true; svg.setPointerCapture(e.pointerId); svg.classList.add('panning'); }
      view.x = drag.vx + dx;
      view.y = drag.vy + dy;
      apply();
    });
    function endDrag() { svg.classList.remove('panning'); }
    svg.addEventListener('pointerup', endDrag);
    svg.addEventListener('pointercancel', function () { drag = null; endDrag(); });
    svg.addEventListener('click', function (e) {
      var moved = drag && drag.moved;
      drag = null;
      if (moved) return;
      var knob = e.target.closest('[data-testid="mm-toggle"]');
      if (knob) { toggle(knob.getAttribute('data-key')); return; }
      var node = e.target.closest('[data-testid="mm-node"]');
      if (!node) return;
      focusKey = node.getAttribute('data-key');
      select(focusKey);
    });
    svg.addEventListener('wheel', function (e) {
      e.preventDefault();
      var box = svg.getBoundingClientRect();
      zoom(e.deltaY < 0 ? 1.12 : 1 / 1.12, e.clientX - box.left, e.clientY - box.top);
    }, { passive: false });

    /* A standalone drawing of what is expanded now. */
    function svgText() {
      var l = layout(tree, open, MAX_CHARS);
      var out = el('svg', { xmlns: NS, width: l.width, height: l.height, viewBox: '0 0 ' + l.width + ' ' + l.height });
      el('rect', { width: l.width, height: l.height, fill: '#f6f4ef' }, out);
      var title = el('title', {}, out);
      title.textContent = tree.topic;
      draw(el('g', {}, out), l, {});
      return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(out);
    }

    function pngBlob(scale) {
      scale = scale || 2;
      var l = layout(tree, open, MAX_CHARS);
      var url = URL.createObjectURL(new Blob([svgText()], { type: 'image/svg+xml' }));
      return new Promise(function (resolve, reject) {
        var img = new Image();
        img.onload = function () {
          var canvas = document.createElement('canvas');
          canvas.width = Math.ceil(l.width * scale);
          canvas.height = Math.ceil(l.height * scale);
          var ctx = canvas.getContext('2d');
          ctx.scale(scale, scale);
          ctx.drawImage(img, 0, 0);
          URL.revokeObjectURL(url);
          canvas.toBlob(function (blob) { if (blob) resolve(blob); else reject(new Error('the PNG could not be made')); }, 'image/png');
        };
        img.onerror = function () { URL.revokeObjectURL(url); reject(new Error('the drawing could not be turned into a PNG')); };
        img.src = url;
      });
    }

    render();
    requestAnimationFrame(fit);
    return { toggle: toggle, expandAll: function () { setAll(true); }, collapseAll: function () { setAll(false); },
      fit: fit, focus: focusNode, zoomIn: function () { zoom(1.25); }, zoomOut: function () { zoom(0.8); },
      svgText: svgText, pngBlob: pngBlob, element: svg };
  }

  return { create: create, layout: layout };
})();
