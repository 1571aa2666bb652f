"""The trajectory viewer's CSS and JavaScript, inlined into every page (the pages open from disk,
offline: no server, no CDN, no file they could lose when copied one by one)."""
from __future__ import annotations

CSS = """
:root { --fg:#1d1f21; --muted:#666; --line:#d8d8d8; --bg2:#f6f7f9; --ok:#17803d; --bad:#b3261e; --part:#9a6700; --err:#6f42c1; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); margin: 0 auto;
       padding: 1rem 1.5rem 4rem; max-width: 1400px; }
h1 { font-size: 1.4rem; margin: .2rem 0 .6rem; } h2 { font-size: 1.15rem; margin: 1.4rem 0 .5rem; }
h3 { font-size: 1rem; margin: 0 0 .4rem; }
a { color: #0b57d0; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .45rem; text-align: left; vertical-align: top; }
th { background: var(--bg2); position: sticky; top: 0; }
th.sortable { cursor: pointer; user-select: none; } th.sortable:after { content: " \\2195"; color: #aaa; }
th[aria-sort=ascending]:after { content: " \\2191"; color: var(--fg); }
th[aria-sort=descending]:after { content: " \\2193"; color: var(--fg); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: var(--bg2); border: 1px solid var(--line); border-radius: 4px; padding: .5rem .6rem; margin: .3rem 0;
      white-space: pre-wrap; word-break: break-word; overflow-wrap: anywhere; font: 12.5px/1.4 ui-monospace, Menlo, Consolas, monospace; }
details > summary { cursor: pointer; color: var(--muted); margin: .2rem 0; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .8rem; margin: .4rem 0 1rem; }
.meta dt { color: var(--muted); } .meta dd { margin: 0; }
.badge { display: inline-block; border-radius: 3px; padding: 0 .4rem; font-size: 12px; color: #fff; background: #888; }
.badge.correct { background: var(--ok); } .badge.wrong { background: var(--bad); }
.badge.partial { background: var(--part); } .badge.error { background: var(--err); }
.cap { display: inline-block; border: 1px solid #999; border-radius: 3px; padding: 0 .3rem; margin-right: .2rem;
       font-size: 12px; color: #333; background: #fff; }
.turn { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; margin: .8rem 0; }
.turn-head { display: flex; flex-wrap: wrap; gap: .3rem 1rem; color: var(--muted); font-size: 13px; margin-bottom: .3rem; }
.call { border-left: 3px solid #0b57d0; padding-left: .7rem; margin: .6rem 0; }
.call.failed { border-left-color: var(--bad); }
.label { color: var(--muted); font-size: 12.5px; margin-top: .3rem; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .5rem 0 .8rem;
           padding: .5rem .7rem; background: var(--bg2); border: 1px solid var(--line); border-radius: 6px; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
.filters select, .filters input { font: inherit; padding: .15rem .3rem; min-width: 9rem; }
nav.pager { display: flex; gap: 1rem; margin: .5rem 0; }
.warn { background: #fff4e5; border: 1px solid #f0c36d; padding: .4rem .7rem; border-radius: 4px; }
.muted { color: var(--muted); }
"""

# The index page: sortable columns, and filters over data-* attributes of the rows.
INDEX_JS = """
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
"""
