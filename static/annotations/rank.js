// Worker task pages: drag-to-rank (SortableJS), keyboard moves, choice shortcuts, sequential reveal,
// time on task.
// The page initialises at DOMContentLoaded, before a worker can press a key (htmx fires its first
// htmx:load only in a later timer task, after the load event); htmx.onLoad covers swapped-in
// fragments (e.g. a 422). Each form initialises once and then carries data-ready.
(function () {
  "use strict";

  // Positions as the page shows them: answers are numbered 1..n, the bar is not one of them.
  function announce(form, item) {
    var status = form.querySelector("#rank-status");
    if (!status || !item) return;
    var items = Array.prototype.slice.call(item.parentNode.children);
    var answers = items.filter(function (li) { return !li.classList.contains("bar"); });
    var bar = item.parentNode.querySelector(".bar");
    var above = bar ? answers.filter(function (li) { return items.indexOf(li) < items.indexOf(bar); }).length : 0;
    if (item === bar) {
      status.textContent = "The acceptable bar: " + above + " of " + answers.length + " answers above it";
      return;
    }
    var rank = answers.indexOf(item) + 1;
    var text = (item.dataset.label || "Item") + ": position " + rank + " of " + answers.length;
    if (bar) text += rank <= above ? ", acceptable" : ", below the acceptable bar";
    status.textContent = text;
  }

  function move(item, delta) {
    if (!item) return;
    if (delta < 0 && item.previousElementSibling) item.parentNode.insertBefore(item, item.previousElementSibling);
    if (delta > 0 && item.nextElementSibling) item.parentNode.insertBefore(item.nextElementSibling, item);
  }

  function moved(form, item) {
    form.dataset.touched = "1";
    placeBar(form, item);
    announce(form, item);
  }

  // The bar starts on top ("no answer is acceptable"). Moving it, or moving an answer above
  // it, places it: the confirmation box is ticked for the worker. Left on top, the worker
  // ticks the box to say so; until then the ranking is not sent (nor stored, worker.task).
  function placeBar(form, item) {
    var bar = form.querySelector("#ranking .bar"), box = form.querySelector("#bar-confirm");
    if (!bar || !box || box.checked) return;
    if (item === bar || bar.previousElementSibling) {
      box.checked = true;
      var warning = form.querySelector("#bar-warning");
      if (warning) warning.hidden = true;
    }
  }

  function initRanking(form) {
    var list = form.querySelector(".sortable");
    if (!list || list.dataset.ready) return;
    list.dataset.ready = "1";
    if (window.Sortable) {
      // On a touch screen a swipe over an answer must scroll the (long) list: a phone or
      // tablet drags by the handle only; a mouse drags the whole item, and a touch on a
      // hybrid laptop needs a long press (delayOnTouchOnly) before it drags.
      var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
      var options = {
        animation: 120,
        forceFallback: true, // mouse/touch events instead of native DnD: same on phones and desktops
        fallbackTolerance: 4,
        delay: coarse ? 0 : 350,
        delayOnTouchOnly: true,
        touchStartThreshold: 6,
        filter: "button",
        preventOnFilter: false,
        ghostClass: "ghost",
        // A long list scrolls while an answer is dragged near the screen's top or bottom edge,
        // on phones too (the fallback autoscroll: forceFallback drags send no native events).
        scroll: true,
        forceAutoScrollFallback: true,
        scrollSensitivity: 90,
        scrollSpeed: 14,
        bubbleScroll: true,
        onEnd: function (evt) { if (evt.oldIndex !== evt.newIndex) moved(form, evt.item); else announce(form, evt.item); },
      };
      if (coarse) options.handle = ".handle";
      list.classList.toggle("by-handle", !!coarse);
      var sortable = window.Sortable.create(list, options);
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
      moved(form, item);
    });
    list.addEventListener("keydown", function (e) {
      var item = e.target.closest("li");
      if (!item || e.target !== item) return;
      if (e.key === "ArrowUp" || e.key === "ArrowDown") {
        e.preventDefault();
        move(item, e.key === "ArrowUp" ? -1 : 1);
        item.focus();
        moved(form, item);
      }
    });
    var box = form.querySelector("#bar-confirm"), barWarning = form.querySelector("#bar-warning");
    if (box && barWarning) box.addEventListener("change", function () { if (box.checked) barWarning.hidden = true; });
    // The order shown is random: an untouched ranking is most likely a click-through.
    // Ask once; a second press submits it as shown.
    var warning = form.querySelector("#untouched-warning");
    form.addEventListener("htmx:confirm", function (e) {
      // First the bar: moved, or confirmed where it is (the server refuses it otherwise).
      if (box && !box.checked) {
        e.preventDefault();
        if (barWarning) barWarning.hidden = false;
        box.focus();
        return;
      }
      if (!warning || form.dataset.touched || form.dataset.warned) return;
      e.preventDefault();
      form.dataset.warned = "1";
      warning.hidden = false;
      var button = form.querySelector("#submit-ranking");
      if (button) button.textContent = "Submit as shown";
    });
  }

  function initReveal(form) {
    if (!form.dataset.sequential) return;
    var a = form.querySelector("#reveal-a"), b = form.querySelector("#reveal-b");
    var hint = form.querySelector("#reveal-hint");
    var buttons = form.querySelectorAll("button.submit");
    function update() {
      var bothSeen = a.dataset.seen && b.dataset.seen;
      buttons.forEach(function (btn) { btn.disabled = !bothSeen; });
      b.querySelector("summary").setAttribute("aria-disabled", a.dataset.seen ? "false" : "true");
      // The hint follows the state, not the last event: B's toggle may run after A's.
      if (hint && a.dataset.seen) hint.textContent = bothSeen ? "" : "Now open System B's answer.";
    }
    // As in the original order study: A's answer must be opened before B's.
    // "toggle" is queued, not fired at the click: A may be open before its event has run.
    b.addEventListener("toggle", function () {
      if (a.open) a.dataset.seen = "1";
      if (b.open && !a.dataset.seen) {
        b.open = false;
        if (hint) hint.textContent = "Open System A's answer first: in this task the answers are read in order, A then B.";
        return;
      }
      if (b.open) b.dataset.seen = "1";
      update();
    });
    a.addEventListener("toggle", function () {
      if (a.open) a.dataset.seen = "1";
      update();
    });
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

  // Pairwise shortcuts as Potato has them: 1 = System A, 2 = System B, 0 = no preference
  // (only where the page offers it). Never while the worker types: a rationale may hold digits.
  var CHOICE_KEYS = { "1": "#choose-a", "2": "#choose-b", "0": "#choose-tie" };
  var NOT_TYPING = ["button", "checkbox", "color", "file", "radio", "range", "reset", "submit"];

  function typing(el) {
    if (!el || !el.tagName) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && NOT_TYPING.indexOf((el.type || "text").toLowerCase()) < 0;
  }

  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.repeat || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    var selector = CHOICE_KEYS[e.key];
    var form = selector && document.querySelector("form.task-pairwise");
    var button = form && form.querySelector(selector);
    if (!button) return;
    e.preventDefault();
    if (button.disabled) {
      // The order condition keeps the choices off until both answers were opened: say why.
      var hint = form.querySelector("#reveal-hint");
      if (hint) hint.textContent = "Open System A's answer, then System B's, before choosing.";
      return;
    }
    button.click(); // a real click, so htmx sends the button's name=choice value
  });

  function init(root) {
    var forms = root.matches && root.matches("form.task") ? [root] : root.querySelectorAll ? root.querySelectorAll("form.task") : [];
    Array.prototype.forEach.call(forms, function (form) {
      if (form.dataset.ready) return;
      initRanking(form); initReveal(form); initTimer(form);
      form.dataset.ready = "1";
    });
  }

  function boot() {
    init(document);
    if (window.htmx) window.htmx.onLoad(init);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot); else boot();
})();
