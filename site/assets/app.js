/* Start the views once the engine is ready; until then the boot panel owns the page. */
(function () {
  'use strict';
  function reveal() {
    document.querySelector('[data-testid="boot-panel"]').hidden = true;
    document.querySelector('[data-testid="nav"]').hidden = false;
    QuireUI.start();
    // After the views exist, so each can fill itself from the engine.
    document.dispatchEvent(new CustomEvent('quire:ready', { detail: self.quire.status() }));
  }
  self.quire.ready.then(reveal, function () { /* boot.js shows the error */ });
})();
