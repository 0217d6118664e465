// Copy buttons: <button class="copy" data-copy="ID"> copies the value of the field with that id.
(function () {
  "use strict";

  function copied(button, ok) {
    var status = document.getElementById("copy-status");
    var label = button.textContent, name = button.getAttribute("aria-label");
    var shown = ok ? "Copied" : "Select and copy";
    button.textContent = shown;
    // The visible text must stay part of the accessible name (WCAG 2.5.3).
    if (name) button.setAttribute("aria-label", shown + ": " + name);
    if (status) status.textContent = ok ? "Copied to the clipboard." : "Could not copy: the text is selected, press Ctrl+C.";
    window.setTimeout(function () {
      button.textContent = label;
      if (name) button.setAttribute("aria-label", name);
    }, 1500);
  }

  document.addEventListener("click", function (e) {
    var button = e.target.closest("button.copy[data-copy]");
    if (!button) return;
    var field = document.getElementById(button.dataset.copy);
    if (!field) return;
    field.focus();
    field.select();
    // The Clipboard API needs a secure context (https or localhost); fall back to execCommand.
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () { copied(button, true); }, function () { copied(button, false); });
    } else {
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (err) { ok = false; }
      copied(button, ok);
    }
  });
})();
