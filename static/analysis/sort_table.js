// Sortable tables: a click (or Enter) on a header of a table marked data-sortable sorts its body
// rows by that column, numbers by value (cells carry data-value), text A-Z; a second click
// reverses. Tables stay readable and in report order without script.
(function () {
  function key(cell) {
    const raw = cell.getAttribute("data-value");
    const text = raw === null ? cell.textContent.trim() : raw;
    const number = parseFloat(text);
    return isNaN(number) || text === "" || text === "None" ? { text: text.toLowerCase() } : { number };
  }
  function compare(a, b) {
    if ("number" in a && "number" in b) return a.number - b.number;
    if ("number" in a) return -1; // numbers before blanks
    if ("number" in b) return 1;
    return a.text.localeCompare(b.text);
  }
  function sortBy(table, index, header) {
    const body = table.tBodies[0];
    const descending = header.getAttribute("aria-sort") === "ascending";
    const rows = Array.from(body.rows);
    rows.sort((r1, r2) => compare(key(r1.cells[index]), key(r2.cells[index])) * (descending ? -1 : 1));
    rows.forEach((row) => body.appendChild(row));
    table.querySelectorAll("th[aria-sort]").forEach((th) => th.removeAttribute("aria-sort"));
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  function wire(root) {
    root.querySelectorAll("table[data-sortable]").forEach((table) => {
      if (table.dataset.sortWired) return;
      table.dataset.sortWired = "1";
      const headers = table.tHead ? table.tHead.rows[0].cells : [];
      Array.from(headers).forEach((th, index) => {
        th.tabIndex = 0;
        th.classList.add("sortable");
        th.addEventListener("click", () => sortBy(table, index, th));
        th.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            sortBy(table, index, th);
          }
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", () => wire(document));
  document.addEventListener("htmx:afterSwap", (event) => wire(event.target));
})();
