// Client-side sorting of tables marked .sortable: click a header to sort by it, again to reverse.
// Cells may carry data-v (a number or text) to sort by instead of their displayed text.
"use strict";
(function () {
  function value(td) {
    const raw = td.hasAttribute("data-v") ? td.getAttribute("data-v") : td.textContent.trim();
    const n = raw === "" ? NaN : Number(raw);
    return { raw: raw, num: n, isNum: raw !== "" && !Number.isNaN(n) };
  }
  function sortBy(table, col, th) {
    const tbody = table.tBodies[0];
    const asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    const rows = Array.from(tbody.rows);
    rows.sort(function (a, b) {
      const x = value(a.cells[col]), y = value(b.cells[col]);
      let c;
      if (x.isNum && y.isNum) c = x.num - y.num;
      else if (x.isNum !== y.isNum) c = x.isNum ? -1 : 1;  // blanks last
      else c = x.raw.localeCompare(y.raw, undefined, { numeric: true });
      return asc ? c : -c;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      Array.from(table.tHead.rows[0].cells).forEach(function (th, i) {
        th.setAttribute("tabindex", "0");
        th.setAttribute("role", "button");
        th.addEventListener("click", function () { sortBy(table, i, th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, i, th); }
        });
      });
    });
    // The cell the reader came from: in view, among however many cells.
    const from = document.querySelector("#compare-table tr[data-from]");
    if (from) from.scrollIntoView({ block: "center" });
  });
})();
