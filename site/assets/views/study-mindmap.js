/* Study, the mind map player: the interactive map (assets/mindmap.js) with its toolbar, and
 * the passages behind the chosen topic.  Opened by the study hub (views/study.js), which
 * keeps the returned map for the SVG and PNG exports. */
(function () {
  'use strict';
  var h = QuireUI.h, t = QuireUI.t, q = self.quire;

  function mindmapPlayer(body, set) {
    // Not an <aside>: a complementary landmark must not sit inside <main> (axe).
    var side = h('div', { class: 'mm-side', testid: 'mm-sources' }, h('p', { class: 'muted small' }, t('Click a topic to see the passages it comes from. Click a number to open a branch; drag to pan; scroll to zoom. With the keyboard: arrows move, Enter opens the passages, Space collapses.')));
    var canvas = h('div', { class: 'mm-canvas' });
    var bar = h('div', { class: 'mm-toolbar' },
      h('button', { type: 'button', class: 'small-button', testid: 'mm-zoom-in', 'aria-label': t('Zoom in'), onclick: function () { map.zoomIn(); } }, '+'),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-zoom-out', 'aria-label': t('Zoom out'), onclick: function () { map.zoomOut(); } }, '−'),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-fit', onclick: function () { map.fit(); } }, t('Fit')),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-expand-all', onclick: function () { map.expandAll(); } }, t('Expand all')),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-collapse-all', onclick: function () { map.collapseAll(); } }, t('Collapse all')));
    body.append(bar, h('div', { class: 'mm-wrap' }, canvas, side));
    var map = QuireMindmap.create(canvas, set.map, { onSelect: function (node) { showSources(side, node); } });
    return map;
  }

  function showSources(side, node) {
    var list = h('ul', { class: 'mm-passages' });
    QuireUI.fill(side, h('h4', { testid: 'mm-selected' }, node.label),
      node.chunk_ids.length ? h('p', { class: 'muted small' }, QuireUI.plural(node.chunk_ids.length, 'passage')) :
        h('p', { class: 'muted small' }, t('No passage is linked to this topic.')), list);
    node.chunk_ids.slice(0, 6).forEach(function (cid) {
      var li = h('li', { testid: 'mm-passage' }, h('span', { class: 'muted small' }, t('Loading…')));
      list.appendChild(li);
      q._call('passage', [cid, node.label]).then(function (p) {
        var text = p.chunk.text.replace(/^\[[^\]]*\]\s*/, '');
        QuireUI.fill(li, h('button', { type: 'button', class: 'link', testid: 'mm-open-passage', onclick: function () { QuirePassage.open(cid, node.label); } },
          p.source.name + (p.location_label ? ' · ' + p.location_label : '')),
        h('p', { class: 'small' }, text.slice(0, 180) + (text.length > 180 ? '…' : '')));
      }, function (err) { QuireUI.fill(li, h('span', { class: 'muted small' }, err.message)); });
    });
  }

  self.QuireStudy.players.mindmap = mindmapPlayer;
})();
