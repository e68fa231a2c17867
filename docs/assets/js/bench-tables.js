/* benchbook: sortable tables (vendored tablesort) and the records index filters.
 * Without JavaScript every table is still a complete, plain table; this only adds sorting and filters. */
(function () {
  "use strict";
  // "≈354", "1,234", "0.87×", "12.5 (n=30)", "45%": sort by the number.
  var NUMBER = /^[≈~]?\s*(-?[\d,]*\.?\d+)\s*(?:×|%)?(?:\s*\(n=\d+\))?$/;

  var MISSING = { "": true, "—": true, "not stated": true };

  function prepareSort(table) {
    var rows = table.tBodies.length ? table.tBodies[0].rows : [];
    var heads = table.tHead.rows[0].cells;
    var numeric = [];
    for (var j = 0; j < heads.length; j++) numeric.push({ numbers: 0, other: 0 });
    for (var i = 0; i < rows.length; i++) {
      var cells = rows[i].cells;
      for (var k = 0; k < cells.length && k < heads.length; k++) {
        var text = cells[k].textContent.trim();
        var m = text.match(NUMBER);
        if (m) {
          cells[k].setAttribute("data-sort", m[1].replace(/,/g, ""));
          numeric[k].numbers++;
        } else if (!MISSING[text]) {
          numeric[k].other++;
        }
      }
    }
    // A column of figures (missing ones aside) sorts as numbers; missing figures count as 0.
    for (var h = 0; h < heads.length; h++) {
      if (numeric[h].numbers && !numeric[h].other) heads[h].setAttribute("data-sort-method", "number");
    }
    new Tablesort(table);
    table.setAttribute("data-bench-sortable", "");
  }

  function addFilters(box) {
    var table = box.querySelector("table");
    if (!table || !table.tHead) return;
    var wanted = (box.getAttribute("data-filters") || "").split(",");
    var heads = Array.prototype.map.call(table.tHead.rows[0].cells, function (c) { return c.textContent.trim(); });
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var form = document.createElement("form");
    form.className = "bench-filters";
    form.setAttribute("aria-label", "Filter records");
    var count = document.createElement("output");
    var selects = [];
    wanted.forEach(function (name) {
      var col = heads.indexOf(name);
      if (col < 0) return;
      var values = {};
      rows.forEach(function (r) { values[r.cells[col].textContent.trim()] = true; });
      var label = document.createElement("label");
      label.textContent = name + " ";
      var select = document.createElement("select");
      select.name = name;
      select.setAttribute("data-column", String(col));
      var all = document.createElement("option");
      all.value = "";
      all.textContent = "all";
      select.appendChild(all);
      Object.keys(values).sort().forEach(function (v) {
        var o = document.createElement("option");
        o.value = v;
        o.textContent = v;
        select.appendChild(o);
      });
      select.addEventListener("change", apply);
      label.appendChild(select);
      form.appendChild(label);
      selects.push(select);
    });
    form.appendChild(count);
    function apply() {
      var shown = 0;
      rows.forEach(function (r) {
        var ok = selects.every(function (s) {
          return !s.value || r.cells[Number(s.getAttribute("data-column"))].textContent.trim() === s.value;
        });
        r.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = shown + " of " + rows.length + " shown";
    }
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    box.insertBefore(form, box.firstChild);
    apply();
  }

  function init() {
    var tables = document.querySelectorAll("article table:not(.highlighttable):not([data-bench-sortable])");
    for (var i = 0; i < tables.length; i++) {
      if (tables[i].tHead && window.Tablesort) prepareSort(tables[i]);
    }
    var boxes = document.querySelectorAll(".bench-records[data-filters]:not([data-bench-ready])");
    for (var k = 0; k < boxes.length; k++) {
      boxes[k].setAttribute("data-bench-ready", "");
      addFilters(boxes[k]);
    }
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
