// Worker task pages: drag-to-rank (SortableJS), keyboard moves, sequential reveal, time on task.
// Everything initialises in htmx.onLoad, so a swapped-in fragment (e.g. a 422) works again.
(function () {
  "use strict";

  function announce(form, item) {
    var status = form.querySelector("#rank-status");
    if (!status || !item) return;
    var items = Array.prototype.slice.call(item.parentNode.children);
    status.textContent = (item.dataset.label || "Item") + ": position " + (items.indexOf(item) + 1) + " of " + items.length;
  }

  function move(item, delta) {
    if (!item) return;
    if (delta < 0 && item.previousElementSibling) item.parentNode.insertBefore(item, item.previousElementSibling);
    if (delta > 0 && item.nextElementSibling) item.parentNode.insertBefore(item.nextElementSibling, item);
  }

  function initRanking(form) {
    var list = form.querySelector(".sortable");
    if (!list || list.dataset.ready) return;
    list.dataset.ready = "1";
    if (window.Sortable) {
      var sortable = window.Sortable.create(list, {
        animation: 120,
        forceFallback: true, // mouse/touch events instead of native DnD: same on phones and desktops
        fallbackTolerance: 4,
        filter: "button",
        preventOnFilter: false,
        ghostClass: "ghost",
        onEnd: function (evt) { announce(form, evt.item); },
      });
      // No reordering while the answer is on its way (htmx.org's Sortable example).
      form.addEventListener("htmx:beforeRequest", function () { sortable.option("disabled", true); });
      form.addEventListener("htmx:afterRequest", function () { sortable.option("disabled", false); });
    }
    list.addEventListener("click", function (e) {
      var button = e.target.closest("button.move-up, button.move-down");
      if (!button) return;
      var item = button.closest("li");
      move(item, button.classList.contains("move-up") ? -1 : 1);
      button.focus();
      announce(form, item);
    });
    list.addEventListener("keydown", function (e) {
      var item = e.target.closest("li");
      if (!item || e.target !== item) return;
      if (e.key === "ArrowUp" || e.key === "ArrowDown") {
        e.preventDefault();
        move(item, e.key === "ArrowUp" ? -1 : 1);
        item.focus();
        announce(form, item);
      }
    });
  }

  function initReveal(form) {
    if (!form.dataset.sequential) return;
    var a = form.querySelector("#reveal-a"), b = form.querySelector("#reveal-b");
    var buttons = form.querySelectorAll("button.submit");
    function update() {
      var bothSeen = a.dataset.seen && b.dataset.seen;
      buttons.forEach(function (btn) { btn.disabled = !bothSeen; });
      b.querySelector("summary").setAttribute("aria-disabled", a.dataset.seen ? "false" : "true");
    }
    // As in the original order study: A's answer must be opened before B's.
    b.addEventListener("toggle", function () {
      if (b.open && !a.dataset.seen) { b.open = false; return; }
      if (b.open) b.dataset.seen = "1";
      update();
    });
    a.addEventListener("toggle", function () { if (a.open) a.dataset.seen = "1"; update(); });
    update();
  }

  function initTimer(form) {
    var field = form.querySelector("input[name=client_ms]");
    if (!field || form.dataset.timer) return;
    form.dataset.timer = "1";
    var visibleMs = 0, since = document.hidden ? null : performance.now();
    document.addEventListener("visibilitychange", function () {
      if (document.hidden && since !== null) { visibleMs += performance.now() - since; since = null; }
      else if (!document.hidden && since === null) { since = performance.now(); }
    });
    function stamp() { field.value = Math.round(visibleMs + (since === null ? 0 : performance.now() - since)); }
    form.addEventListener("submit", stamp, true);
    form.addEventListener("htmx:configRequest", function (e) { stamp(); e.detail.parameters["client_ms"] = field.value; });
  }

  function init(root) {
    var forms = root.matches && root.matches("form.task") ? [root] : root.querySelectorAll ? root.querySelectorAll("form.task") : [];
    Array.prototype.forEach.call(forms, function (form) { initRanking(form); initReveal(form); initTimer(form); });
  }

  function boot() {
    if (window.htmx) window.htmx.onLoad(init); else init(document);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot); else boot();
})();
