// Search and filter the cases on the index page. The list is in the page already (it works
// without this script); the script only hides the rows that do not match. Its data is the JSON
// index embedded in the page: ids, titles, specialties, difficulties and tags, never a
// diagnosis. A case id (`chest_pain_001`) is found whole or by its words.
(function () {
  "use strict";
  var form = document.getElementById("case-filters");
  var source = document.getElementById("case-index");
  var table = document.getElementById("case-table");
  if (!form || !source || !table) {
    return;
  }
  var cases = JSON.parse(source.textContent);
  var byId = {};
  cases.forEach(function (c) {
    // Names joined by underscores (ids, specialties, tags) are searchable as typed and as
    // words: `chest_pain_001` finds that one case, `emergency medicine` the specialty.
    var named = [c.id, c.specialty].concat(c.tags);
    var words = named.map(function (n) { return String(n).replace(/_/g, " "); });
    c.text = normalise([c.title, c.difficulty].concat(named, words).join(" "));
    byId[c.id] = c;
  });
  var search = document.getElementById("case-search");
  var count = document.getElementById("case-count");
  var none = document.getElementById("no-match");
  var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr[data-case]"));

  function normalise(text) {
    return String(text).toLowerCase().replace(/\s+/g, " ").trim();
  }

  function chosen(name) {
    return document.getElementById("filter-" + name).value;
  }

  function matches(c, words, specialty, difficulty, tag) {
    if (specialty && c.specialty !== specialty) return false;
    if (difficulty && c.difficulty !== difficulty) return false;
    if (tag && c.tags.indexOf(tag) < 0) return false;
    return words.every(function (word) { return c.text.indexOf(word) >= 0; });
  }

  function update() {
    var query = normalise(search.value);
    var words = query ? query.split(" ") : [];
    var specialty = chosen("specialty");
    var difficulty = chosen("difficulty");
    var tag = chosen("tag");
    var shown = 0;
    rows.forEach(function (row) {
      var c = byId[row.getAttribute("data-case")];
      var keep = Boolean(c) && matches(c, words, specialty, difficulty, tag);
      row.hidden = !keep;
      shown += keep ? 1 : 0;
    });
    count.textContent = shown + " of " + rows.length + " cases shown.";
    none.hidden = shown > 0;
  }

  form.hidden = false;
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  form.addEventListener("submit", function (event) { event.preventDefault(); update(); });
  form.addEventListener("reset", function () { window.setTimeout(update, 0); });
  update();
})();
