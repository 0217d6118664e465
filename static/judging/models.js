/* The model form's presets and the connection-test result area (the CSP allows no inline scripts). */
"use strict";
(function () {
  function field(form, name) {
    return form.querySelector('[name="' + name + '"]');
  }

  function applyPreset(button) {
    var form = document.getElementById("judge-form");
    if (!form) return;
    var values = JSON.parse(button.dataset.fields);
    var kind = field(form, "kind");
    if (kind) {
      kind.value = "openai";
      kind.dispatchEvent(new Event("change", { bubbles: true }));
    }
    Object.keys(values).forEach(function (name) {
      var input = field(form, name);
      if (!input) return;
      input.value = values[name];
      input.dispatchEvent(new Event("change", { bubbles: true }));
    });
    var model = field(form, "model");
    if (model) model.placeholder = button.dataset.modelPlaceholder || "";
    var note = document.getElementById("preset-note");
    if (note) note.textContent = button.dataset.label + ": " + button.dataset.note;
    document.querySelectorAll("button[data-preset]").forEach(function (other) {
      other.setAttribute("aria-pressed", other === button ? "true" : "false");
    });
    var help = document.getElementById("simulator-help");
    if (help && button.dataset.preset === "simulator") help.open = true;
  }

  // Only a baseline needs "which baseline".
  function showKindFields() {
    var form = document.getElementById("judge-form");
    var kind = form && field(form, "kind");
    if (!kind) return;
    var baseline = form.querySelector(".field-baseline");
    if (baseline) baseline.hidden = kind.value !== "baseline";
  }
  document.addEventListener("change", function (event) {
    if (event.target.name === "kind") showKindFields();
  });
  document.addEventListener("DOMContentLoaded", showKindFields);

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-preset]");
    if (!button) return;
    event.preventDefault();
    applyPreset(button);
  });

  // A throttled test (429) still shows its one-line answer in the result area.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (target && target.id === "connection-result" && event.detail.xhr.status === 429) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "connection-result") {
      event.detail.target.hidden = false;
    }
  });
})();
