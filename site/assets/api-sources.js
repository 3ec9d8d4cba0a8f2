/* The source list on the automation surface: window.quire.sources() and categories().
 * The page keeps one copy of the list and asks the engine only for what changed since; more than
 * 500 records come in pages (docs/architecture.md, "The source list in pages"). */
(function () {
  'use strict';
  var q = self.quire;

  /* Every view asks for the sources when the engine is ready and after each change. The page
   * keeps one copy of the list and asks the engine only for what changed since (sourcesSince):
   * 5,000 notes are 2.5 MB of JSON, and each view used to get all of it after every change.
   * Calls made while one is on its way share its answer (share: the pipeline ends the sharing
   * at any other call, a change among them, or a change from another tab). Records are
   * frozen: the copy is shared. */
  var copy = { epoch: null, revision: 0, byId: {}, list: [] };
  var filling = null;  // an answer on its way in pages
  function bySourceOrder(a, b) { return a.added - b.added || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); }
  function sorted(byId) { return Object.keys(byId).map(function (id) { return byId[id]; }).sort(bySourceOrder); }
  function syncSources() {
    if (filling) return filling;
    return q._call('sourcesSince', [copy.epoch, copy.revision], { share: true }).then(function (d) {
      if (d.epoch === copy.epoch && d.revision < copy.revision) return copy.list;  // an older answer, overtaken
      if (d.more != null) {  // callers that shared this answer share the pages too
        if (!filling) filling = pages(d);
        return filling;
      }
      if (d.all) copy.byId = {};
      d.removed.forEach(function (id) { delete copy.byId[id]; });
      d.changed.forEach(function (s) { copy.byId[s.id] = Object.freeze(s); });
      if (d.all || d.changed.length || d.removed.length) copy.list = sorted(copy.byId);
      copy.epoch = d.epoch;
      copy.revision = d.revision;
      return copy.list;
    });
  }
  /* More than 500 records (a whole list, or what a Train changed) come a page at a time
   * (Library.sources_since), the engine answering other calls between pages; then what changed
   * meanwhile, as usual. */
  function pages(first) {
    var head = first, byId = first.all ? {} : Object.assign({}, copy.byId);
    function take(d) {
      if (d.all) { head = d; byId = {}; }  // the engine started over (its library was reloaded)
      d.removed.forEach(function (id) { delete byId[id]; });
      d.changed.forEach(function (s) { byId[s.id] = Object.freeze(s); });
      if (d.more != null) return q._call('sourcesSince', [head.epoch, head.revision, d.more], { share: true }).then(take);
      copy.byId = byId;
      copy.list = sorted(byId);
      copy.epoch = head.epoch;
      copy.revision = head.revision;
      return null;
    }
    return take(first).then(function () {
      filling = null;
      return syncSources();
    }, function (err) {
      filling = null;
      throw err;
    });
  }
  q.sources = function () { return syncSources().then(function (list) { return list.slice(); }); };
  q.categories = function () {
    return q._call('categories', [], { share: true }).then(function (v) { return v.slice(); });
  };
})();
