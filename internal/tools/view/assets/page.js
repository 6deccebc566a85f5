(function () {
  "use strict";
  var doc = document;
  // Rows and texts that are folded into templates: inflate on demand.
  function inflate(tpl) {
    var prev = tpl.previousElementSibling;
    if (tpl.classList.contains("rest") && prev) {
      prev.appendChild(tpl.content);
    } else {
      tpl.parentNode.insertBefore(tpl.content, tpl);
    }
    tpl.remove();
  }
  // Tool calls: give each start the duration and outcome its end reports.
  function starts() {
    var m = {}; // row id → its start status spans, by call id ("" for the first)
    function add(root) {
      root.querySelectorAll("[data-call-status]").forEach(function (s) {
        var ev = s.closest(".ev");
        if (!ev) return;
        var row = m[ev.id] || (m[ev.id] = {});
        if (!row[""]) row[""] = s;
        row["c:" + (s.getAttribute("data-call") || "")] = s;
      });
    }
    add(doc);
    doc.querySelectorAll("template.batch").forEach(function (t) { add(t.content); });
    return m;
  }
  function pairAll() {
    var m = starts();
    function each(root) {
      root.querySelectorAll("[data-start]").forEach(function (end) {
        var row = m[end.getAttribute("data-start")];
        if (!row) return;
        var s = row["c:" + (end.getAttribute("data-call") || "")] || row[""];
        if (!s || s.getAttribute("data-paired")) return;
        s.setAttribute("data-paired", "1");
        s.textContent = end.textContent;
        s.className = "status " + (end.classList.contains("failed") ? "failed" : "done");
        var row = end.closest(".ev");
        if (row) {
          var a = doc.createElement("a");
          a.className = "pair";
          a.href = "#" + row.id;
          a.textContent = "↓ result at " + (row.querySelector(".when") || {}).textContent;
          s.after(a);
        }
      });
    }
    each(doc);
    doc.querySelectorAll("template.batch").forEach(function (t) { each(t.content); });
    var u = doc.getElementById("unfinished");
    if (u) u.content.querySelectorAll("i").forEach(function (i) {
      var s = (m[i.getAttribute("data-row")] || {})["c:" + i.getAttribute("data-call")];
      if (s && !s.getAttribute("data-paired")) { s.textContent = "never completed"; s.className = "status failed"; }
    });
  }
  function batchesFrom(el) {
    var t = el.nextElementSibling;
    if (t && t.tagName === "TEMPLATE") inflate(t);
    el.remove();
  }
  function expandAll() {
    doc.querySelectorAll(".lazy").forEach(batchesFrom);
    doc.querySelectorAll("template.rest").forEach(inflate);
    doc.querySelectorAll(".txt").forEach(function (t) { t.classList.add("open"); });
    doc.querySelectorAll("button.more").forEach(function (b) { b.textContent = "show less"; });
  }
  pairAll();
  if ("IntersectionObserver" in window) {
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) { io.unobserve(e.target); batchesFrom(e.target); watch(); }
      });
    }, { rootMargin: "2000px 0px" });
    var watch = function () { doc.querySelectorAll(".lazy").forEach(function (l) { io.observe(l); }); };
    watch();
  } else {
    doc.querySelectorAll(".lazy").forEach(batchesFrom);
  }
  doc.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button.more");
    if (b) {
      var t = b.previousElementSibling;
      if (t && t.tagName === "TEMPLATE") { inflate(t); t = b.previousElementSibling; }
      if (t) {
        var open = t.classList.toggle("open");
        b.textContent = open ? "show less" : "show all";
      }
    }
    if (e.target.id === "expand") expandAll();
    // The notice where a page stops follows its deferred rows: rendered
    // first, so that rendering them does not push it away.
    var a = e.target.closest && e.target.closest('a[href="#more"]');
    if (a) expandAll();
  });
  doc.addEventListener("toggle", function (e) {
    var d = e.target;
    if (d.tagName === "DETAILS" && d.open) d.querySelectorAll(":scope > template.fold").forEach(inflate);
  }, true);
  doc.querySelectorAll("[data-hide]").forEach(function (box) {
    box.addEventListener("change", function () {
      doc.body.classList.toggle("hide-" + box.getAttribute("data-hide"), !box.checked);
    });
  });
  doc.body.setAttribute("data-ready", "1");
  doc.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  if (location.hash) {
    var id = location.hash.slice(1);
    if (!doc.getElementById(id) || id === "more") expandAll();
    var el = doc.getElementById(id);
    if (el) el.scrollIntoView();
  }
})();
