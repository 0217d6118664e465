// The completion page: a cancellable, announced countdown back to the crowd platform
// (instead of a meta refresh, which a worker can neither see coming nor stop).
(function () {
  "use strict";

  function startCountdown(box) {
    var url = box.dataset.url, left = parseInt(box.dataset.seconds, 10);
    var status = box.querySelector("#countdown-status"), shown = box.querySelector("#countdown-visible");
    var cancel = box.querySelector("#countdown-cancel");
    if (!url || !(left > 0) || !status || !shown) return;
    box.hidden = false;
    function text() { return "Going back to Prolific in " + left + " second" + (left === 1 ? "" : "s") + "."; }
    // The visible line ticks every second; the live region speaks at the start, every
    // 10 s and in the last 3 s: a region that talks nonstop is noise.
    function tick(speak) { shown.textContent = text(); if (speak) status.textContent = text(); }
    tick(true);
    var timer = window.setInterval(function () {
      left -= 1;
      if (left <= 0) { window.clearInterval(timer); window.location.assign(url); return; }
      tick(left % 10 === 0 || left <= 3);
    }, 1000);
    cancel.addEventListener("click", function () {
      window.clearInterval(timer);
      var stay = "Staying on this page. Use the button above to return to Prolific when you are ready.";
      shown.textContent = stay;
      status.textContent = stay;
      cancel.hidden = true;
    });
  }

  function boot() {
    var box = document.getElementById("return-countdown");
    if (box) startCountdown(box);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot); else boot();
})();

// A page restored from the back-forward cache is a snapshot of an earlier step (a form
// already answered): fetch the current step instead. Cache-Control: no-store keeps most
// pages out of that cache; this covers browsers that keep them anyway.
window.addEventListener("pageshow", function (e) {
  if (e.persisted && document.querySelector("form.task, #consent-form, #qualify-form, #survey-form")) window.location.reload();
});
