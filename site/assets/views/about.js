/* About view: the engine's facts (versions, mode, timings) live in boot.js's panel. */
(function () {
  'use strict';
  QuireUI.register('about', { init: function () {} });
})();
