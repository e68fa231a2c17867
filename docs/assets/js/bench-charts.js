/* benchbook: click (or press Enter/Space on) a chart's legend entry to hide or show that series.
 * Progressive enhancement only: without JavaScript every chart is a complete static SVG. */
(function () {
  "use strict";

  function toggle(svg, item) {
    var name = item.getAttribute("data-series");
    var hidden = item.getAttribute("aria-pressed") === "false";
    var parts = svg.querySelectorAll("[data-series]");
    for (var i = 0; i < parts.length; i++) {
      var el = parts[i];
      if (el === item || el.getAttribute("data-series") !== name || el.classList.contains("legend-item")) continue;
      if (hidden) el.removeAttribute("display");
      else el.setAttribute("display", "none");
    }
    item.setAttribute("aria-pressed", hidden ? "true" : "false");
    item.classList.toggle("bench-off", !hidden);
  }

  function prepare(svg) {
    svg.setAttribute("data-bench-ready", "");
    var items = svg.querySelectorAll("g.legend-item[data-series]");
    for (var i = 0; i < items.length; i++) {
      (function (item) {
        item.setAttribute("role", "button");
        item.setAttribute("tabindex", "0");
        item.setAttribute("aria-pressed", "true");
        item.setAttribute("aria-label", "show or hide " + item.getAttribute("data-series"));
        item.addEventListener("click", function () { toggle(svg, item); });
        item.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            toggle(svg, item);
          }
        });
      })(items[i]);
    }
  }

  function init() {
    var charts = document.querySelectorAll("svg.bench-chart:not([data-bench-ready])");
    for (var i = 0; i < charts.length; i++) prepare(charts[i]);
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
