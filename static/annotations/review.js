// Review page: "Select all on this page" for the bulk decision (without JS the box stays hidden
// and each submission is ticked by hand).
(function () {
  "use strict";
  function boxes() { return document.querySelectorAll('input[type=checkbox][name=assignment][form=bulk-form]'); }
  function init() {
    var all = document.getElementById("select-all");
    if (!all) return;
    all.closest("[hidden]") && all.closest("[hidden]").removeAttribute("hidden");
    all.addEventListener("change", function () {
      boxes().forEach(function (b) { b.checked = all.checked; });
    });
    document.addEventListener("change", function (e) {
      if (e.target.name !== "assignment") return;
      var list = Array.prototype.slice.call(boxes());
      all.checked = list.length > 0 && list.every(function (b) { return b.checked; });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
