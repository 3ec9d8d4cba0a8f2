/* The kiosk's known library: what a kiosk goes back to after every visit (kiosk-reset.js).
 *
 * It is the course vault the bundle carries, when it carries one, else the sample library.
 * Either way it is a vault file, so going back is one replacing import: one commit in the engine
 * (py/quire/services/vault.py) that leaves either the library before it or the known one.  The
 * sample's vault is made by the engine from the sample's own documents, in a library of its own
 * (quire.sampleVault), and kept in quire.main, so every reset restores the same bytes; a new build
 * or another language makes it again. */
var QuireKioskLibrary = (function () {
  'use strict';
  var q = self.quire;
  var KEPT = 'quire.kiosk.known';  // {key, bytes, sample}: the sample's vault, as made last

  /* The bundle's course vault (python3 build.py --library, or dropped in: assets/course.js): {id, blob, title} with
   * id its sha256, so that a new course replaces the library a kiosk kept; null without one. */
  function bundledVault() {
    return q.courseFound().then(function (about) {
      if (!about) return null;
      return q.courseVault().then(function (blob) { return { id: about.sha256, blob: blob, title: about.title }; });
    });
  }

  function sampleKey() {
    return 'sample:' + (self.QUIRE_BUNDLE && QUIRE_BUNDLE.build) + ':' + QuireI18n.lang;
  }

  function sampleLibrary() {
    var key = sampleKey();
    return q.kv.get(KEPT).then(function (kept) {
      if (kept && kept.key === key) return kept;
      return q.sampleVault().then(function (made) {
        return made.vault.arrayBuffer().then(function (buf) {
          var fresh = { key: key, bytes: new Uint8Array(buf), sample: made.sample };
          return q.kv.set(KEPT, fresh).then(function () { return fresh; });
        });
      });
    }).then(function (k) { return { key: k.key, vault: new Blob([k.bytes]), sample: k.sample }; });
  }

  /** key() -> what names the known library now: a kiosk that kept another one goes back to this one. */
  function key() {
    return bundledVault().then(function (course) { return course ? 'course:' + course.id : sampleKey(); });
  }

  /** known() -> {key, vault: Blob, sample: {ids, version, category} | null, course: title}; sample is null for a course vault. */
  function known() {
    return bundledVault().then(function (course) {
      return course ? { key: 'course:' + course.id, vault: course.blob, sample: null, course: course.title } : sampleLibrary();
    });
  }

  return { key: key, known: known };
})();
