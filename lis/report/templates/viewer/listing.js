(function () {
  "use strict";
  var table = document.getElementById("episodes");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filters = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
  var count = document.getElementById("shown");
  function apply() {
    var want = {};
    filters.forEach(function (f) { want[f.getAttribute("data-filter")] = f.value.trim().toLowerCase(); });
    var shown = 0;
    rows.forEach(function (r) {
      var ok = true;
      for (var k in want) {
        var v = want[k];
        if (!v) { continue; }
        if (k === "text") { ok = (r.getAttribute("data-text") || "").indexOf(v) >= 0; }
        else if (k === "caps") { ok = (" " + (r.getAttribute("data-caps") || "") + " ").indexOf(" " + v + " ") >= 0; }
        else { ok = (r.getAttribute("data-" + k) || "").toLowerCase() === v; }
        if (!ok) { break; }
      }
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    if (count) { count.textContent = String(shown); }
  }
  filters.forEach(function (f) { f.addEventListener(f.tagName === "INPUT" ? "input" : "change", apply); });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    if (!th.classList.contains("sortable")) { return; }
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var numeric = th.getAttribute("data-type") === "num";
      var key = function (r) {
        var c = r.cells[col]; var s = c.getAttribute("data-sort");
        if (s === null) { s = c.textContent; }
        if (numeric) { var n = parseFloat(s); return isNaN(n) ? -Infinity : n; }
        return s.toLowerCase();
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var d = x < y ? -1 : x > y ? 1 : 0;
        return asc ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
