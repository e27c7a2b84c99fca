// evaldsl dashboard: draws the page from the JSON blocks above it.
// Every string from a record reaches the DOM through createTextNode /
// textContent (the `el` helper below); nothing here assigns HTML markup.
// Case rows are drawn a page at a time and a case's details are parsed
// and drawn only when its expander opens, so large records stay quick.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("evaldsl-data").textContent);
  var RUNS = DATA.runs, CASES = DATA.cases, PAGE = 100;
  var STATUSES = ["passed", "failed", "error", "skipped", "xfailed", "xpassed"];
  var state = { sortKey: null, sortDir: 1, page: 0, view: [], open: {} };
  var boardSort = { key: null, dir: 1 };

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (k === "class") node.className = attrs[k];
        else if (k === "text") node.textContent = attrs[k];
        else node.setAttribute(k, attrs[k]);
      }
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  function byId(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // ---- formatting ---------------------------------------------------
  function pct(x) { return x === null || x === undefined ? "\u2013" : (x * 100).toFixed(1) + "%"; }
  function num2(x) { return x === null || x === undefined ? "\u2013" : x.toFixed(2); }
  function secs(x) {
    if (x === null || x === undefined) return "\u2013";
    if (x < 0.001) return (x * 1e6).toFixed(0) + " \u00b5s";
    if (x < 1) return (x * 1000).toFixed(x < 0.01 ? 2 : 0) + " ms";
    return x.toFixed(2) + " s";
  }
  function int(x) { return x === null || x === undefined ? "\u2013" : x.toLocaleString("en-US"); }
  function date(x) { return x ? x.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "\u2013"; }
  function pretty(v) {
    if (typeof v === "string") return v;
    try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
  }
  var COLLATOR = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  function compare(a, b) {  // nulls are put last by the caller, whatever the direction
    if (typeof a === "number" && typeof b === "number") return a - b;
    return COLLATOR.compare(String(a), String(b));
  }
  function sortBy(items, keyOf, dir) {
    return items.slice().sort(function (x, y) {
      var a = keyOf(x), b = keyOf(y);
      var an = a === null || a === undefined, bn = b === null || b === undefined;
      if (an || bn) return an === bn ? 0 : (an ? 1 : -1);
      return dir * compare(a, b);
    });
  }
  function sortHeader(text, onSort) {  // a header that sorts on click, Enter or Space
    var th = el("th", { "class": "sortable", scope: "col", "aria-sort": "none", tabindex: "0", text: text });
    th.addEventListener("click", onSort);
    th.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onSort(); }
    });
    return th;
  }
  function markSorted(headRow, index, dir) {
    var ths = headRow.children;
    for (var i = 0; i < ths.length; i++) {
      if (ths[i].classList.contains("sortable")) ths[i].setAttribute("aria-sort", "none");
    }
    if (index !== null) ths[index].setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
  }

  // ---- leaderboard --------------------------------------------------
  var BOARD = [
    ["Run", function (r) { return r.label; }, function (r) { return r.label; }],
    ["Record", function (r) { return r.source; }, function (r) { return r.source + (r.complete ? "" : " (incomplete)"); }],
    ["Accuracy", function (r) { return r.accuracy; }, function (r) { return pct(r.accuracy); }],
    ["Avg score", function (r) { return r.average_score; }, function (r) { return num2(r.average_score); }],
    ["Passed", function (r) { return r.passed; }, function (r) { return int(r.passed); }],
    ["Failed", function (r) { return r.failed; }, function (r) { return int(r.failed); }],
    ["Errors", function (r) { return r.errors; }, function (r) { return int(r.errors); }],
    ["Latency p50", function (r) { return r.latency_p50_s; }, function (r) { return secs(r.latency_p50_s); }],
    ["Latency p95", function (r) { return r.latency_p95_s; }, function (r) { return secs(r.latency_p95_s); }],
    ["Tokens", function (r) { return r.tokens_total; }, function (r) { return int(r.tokens_total); }],
    ["Date", function (r) { return r.started_at; }, function (r) { return date(r.started_at); }]
  ];
  function drawBoard() {
    var table = byId("leaderboard"), head = table.tHead.rows[0], body = table.tBodies[0];
    if (!head.children.length) {
      BOARD.forEach(function (col, i) {
        head.appendChild(sortHeader(col[0], function () {
          boardSort.dir = boardSort.key === i ? -boardSort.dir : (i < 2 ? 1 : -1);
          boardSort.key = i;
          drawBoard();
        }));
      });
    }
    var rows = RUNS.map(function (r, i) { return { run: r, index: i }; });
    if (boardSort.key !== null) {
      var key = BOARD[boardSort.key][1];
      rows = sortBy(rows, function (x) { return key(x.run); }, boardSort.dir);
    }
    markSorted(head, boardSort.key, boardSort.dir);
    clear(body);
    rows.forEach(function (x) {
      var tr = el("tr", { "data-run": String(x.index) });
      BOARD.forEach(function (col, i) {
        tr.appendChild(el("td", { "class": i < 2 || i === 10 ? "" : "num", text: col[2](x.run) }));
      });
      body.appendChild(tr);
    });
  }

  // ---- comparison (two records) -------------------------------------
  function drawComparison() {
    var cmp = DATA.comparison;
    if (!cmp) return;
    var box = byId("comparison-body");
    box.appendChild(el("p", null, "A: ", el("strong", { text: cmp.a }), " \u2192 B: ", el("strong", { text: cmp.b })));
    if (cmp.verdict) box.appendChild(el("p", { "class": "verdict" }, el("strong", { text: cmp.verdict })));
    if (cmp.metrics && cmp.metrics.length) {
      var t = el("table", { "class": "grid" }, el("thead", null, el("tr", null,
        el("th", { text: "" }), el("th", { text: "A" }), el("th", { text: "B" }), el("th", { text: "B \u2212 A" }))));
      var tb = el("tbody");
      cmp.metrics.forEach(function (m) {
        tb.appendChild(el("tr", null, el("td", { text: m.name }), el("td", { "class": "num", text: m.a }),
          el("td", { "class": "num", text: m.b }), el("td", { "class": "num", text: m.delta })));
      });
      t.appendChild(tb);
      box.appendChild(t);
    }
    (cmp.statements || []).forEach(function (s) { box.appendChild(el("p", { text: s })); });
    (cmp.lists || []).forEach(function (list) {
      var ul = el("ul", { "class": "cmp-list" });
      list.items.forEach(function (item) { ul.appendChild(el("li", { text: item })); });
      var details = el("details", { "class": "cmp" }, el("summary", { text: list.title + " (" + list.items.length + ")" }), ul);
      details.open = list.items.length <= 20;
      box.appendChild(details);
    });
    byId("comparison").hidden = false;
  }

  // ---- filters ------------------------------------------------------
  function fillSelect(id, values, label) {
    var select = byId(id);
    values.forEach(function (v) { select.appendChild(el("option", { value: v, text: label ? label(v) : v })); });
  }
  function cellMatches(cell, status) {
    if (!cell) return false;
    if (status === "flaky") return cell.flaky;
    if (status === "errors") return cell.errors > 0;
    if (status.indexOf("kind:") === 0) return (cell.error_kinds || []).indexOf(status.slice(5)) >= 0;
    return cell.status === status;
  }
  function matches(c, f) {
    if (f.suite && c.suite !== f.suite) return false;
    if (f.tag && c.tags.indexOf(f.tag) < 0) return false;
    if (f.text && c.name.toLowerCase().indexOf(f.text) < 0) return false;
    if (!f.status) return true;
    if (f.status === "changed") {
      var seen = {};
      c.cells.forEach(function (cell) { if (cell) seen[cell.status] = 1; });
      return Object.keys(seen).length > 1;
    }
    return c.cells.some(function (cell) { return cellMatches(cell, f.status); });
  }
  function applyFilters() {
    var f = {
      suite: byId("f-suite").value, tag: byId("f-tag").value, status: byId("f-status").value,
      text: byId("f-search").value.trim().toLowerCase()
    };
    var view = [];
    for (var i = 0; i < CASES.length; i++) if (matches(CASES[i], f)) view.push(i);
    if (state.sortKey !== null) {
      var key = caseKey(state.sortKey);
      view = sortBy(view, function (i) { return key(CASES[i]); }, state.sortDir);
    }
    state.view = view;
    state.page = 0;
    drawCases();
  }
  function caseKey(k) {
    if (k === "suite") return function (c) { return c.suite; };
    if (k === "name") return function (c) { return c.name; };
    return function (c) { var cell = c.cells[k]; return cell ? cell.pass_rate : null; };
  }

  // ---- heatmap rows -------------------------------------------------
  function cellView(cell) {
    if (!cell) return { cls: "none", text: "\u00b7", title: "not in this record" };
    var frac = cell.runs > 1 ? " " + cell.passed + "/" + cell.runs : "";
    var title = cell.status + (cell.pass_rate === null ? "" : ", pass rate " + pct(cell.pass_rate)) +
      (cell.flaky ? ", flaky" : "") + (cell.errors ? ", " + cell.errors + " run(s) errored" : "");
    if (cell.status === "skipped") return { cls: "skipped", text: "\u2013 skip", title: title };
    if (cell.status === "error") return { cls: "error", text: "! error", title: title };
    var text;
    if (cell.flaky) text = "~" + frac;
    else if (cell.status === "xfailed") text = "\u2717 xfail";
    else if (cell.status === "xpassed") text = "\u2713 xpass";
    else text = (cell.passed === cell.runs ? "\u2713" : "\u2717") + frac;
    if (cell.errors) text += " !";
    return { cls: cell.flaky ? "flaky" : "", text: text, title: title, rate: cell.pass_rate };
  }
  function heat(rate) { return "hsl(" + Math.round(rate * 120) + ", 55%, 36%)"; }
  function caseRow(i) {
    var c = CASES[i];
    var button = el("button", { type: "button", "class": "case", "aria-expanded": state.open[i] ? "true" : "false" }, c.name);
    button.addEventListener("click", function () { toggle(i); });
    var tr = el("tr", { "data-case": String(i) }, el("td", { text: c.suite }), el("td", null, button));
    c.cells.forEach(function (cell) {
      var v = cellView(cell);
      var td = el("td", { "class": "cell " + v.cls, title: v.title, text: v.text });
      if (v.rate !== undefined && v.rate !== null && v.cls !== "error") td.style.backgroundColor = heat(v.rate);
      tr.appendChild(td);
    });
    return tr;
  }
  function drawCaseHead() {
    var head = byId("cases").tHead.rows[0];
    var cols = [["suite", "Suite"], ["name", "Case"]];
    RUNS.forEach(function (r, i) { cols.push([i, r.label + " \u00b7 " + r.source]); });
    cols.forEach(function (col) {
      head.appendChild(sortHeader(col[1], function () {
        state.sortDir = state.sortKey === col[0] ? -state.sortDir : 1;
        state.sortKey = col[0];
        applyFilters();
      }));
    });
  }
  function drawCases() {
    var body = byId("cases").tBodies[0], view = state.view;
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * PAGE, end = Math.min(view.length, start + PAGE);
    var frag = document.createDocumentFragment();
    for (var j = start; j < end; j++) {
      frag.appendChild(caseRow(view[j]));
      if (state.open[view[j]]) frag.appendChild(detailRow(view[j]));
    }
    clear(body);
    body.appendChild(frag);
    var keys = ["suite", "name"].concat(RUNS.map(function (r, i) { return i; }));
    markSorted(byId("cases").tHead.rows[0], state.sortKey === null ? null : keys.indexOf(state.sortKey), state.sortDir);
    byId("f-count").textContent = view.length + " of " + CASES.length + " cases";
    byId("p-info").textContent = view.length ? "rows " + (start + 1) + "\u2013" + end + " of " + view.length : "no case matches";
    byId("p-prev").disabled = state.page === 0;
    byId("p-next").disabled = state.page >= pages - 1;
  }
  function toggle(i) {
    if (state.open[i]) delete state.open[i]; else state.open[i] = true;
    var row = document.querySelector('#cases tr[data-case="' + i + '"]');
    row.querySelector("button.case").setAttribute("aria-expanded", state.open[i] ? "true" : "false");
    var next = row.nextSibling;
    if (next && next.classList.contains("detail")) next.parentNode.removeChild(next);
    if (state.open[i]) row.parentNode.insertBefore(detailRow(i), row.nextSibling);
  }

  // ---- case details (built when opened) -----------------------------
  function detailRow(i) {
    var td = el("td", { colspan: String(2 + RUNS.length) });
    var found = JSON.parse(byId("evaldsl-case-" + i).textContent);
    found.forEach(function (d, r) { if (d) td.appendChild(recordDetail(RUNS[r], d)); });
    return el("tr", { "class": "detail", "data-detail": String(i) }, td);
  }
  function badge(status) { return el("span", { "class": "badge " + status, text: status }); }
  function recordDetail(run, d) {
    var box = el("div", { "class": "record" });
    var rate = d.pass_rate === null ? "" : ", pass rate " + pct(d.pass_rate) + " (required " + pct(d.required_pass_rate) + ")";
    box.appendChild(el("h3", null, run.label + " \u00b7 " + run.source + " ", badge(d.status)));
    box.appendChild(el("div", { "class": "where", text: d.file + ":" + d.line }));
    box.appendChild(el("p", { text: "score " + num2(d.score) + rate + ", " + d.runs.length + " of " + d.repeat + " run(s)" }));
    if (d.skip !== null) box.appendChild(el("p", { text: "skipped" + (d.skip ? ": " + d.skip : "") }));
    if (d.xfail !== null) box.appendChild(el("p", { text: "expected to fail" + (d.xfail ? ": " + d.xfail : "") }));
    box.appendChild(el("h4", { text: "Prompt" }));
    box.appendChild(el("pre", { "class": "prompt", text: d.prompt }));
    d.runs.forEach(function (run) { box.appendChild(repeatDetail(run, d.runs.length)); });
    return box;
  }
  function repeatDetail(run, count) {
    var box = el("div", { "class": "repeat" });
    var name = count > 1 ? "Repeat " + (run.index + 1) : "Run";
    box.appendChild(el("h4", null, name + " ", badge(run.error ? "error" : run.passed ? "passed" : "failed"),
      " score " + num2(run.score) + ", " + secs(run.latency_s)));
    if (run.error) {
      box.appendChild(el("pre", { "class": "error", text: run.error.type + ": " + run.error.message + (run.error.kind ? "\n(kind: " + run.error.kind + ")" : "") }));
      if (run.error.traceback) box.appendChild(el("details", null, el("summary", { text: "traceback" }), el("pre", { text: run.error.traceback })));
    }
    if (run.conversation) { conversation(box, run); return box; }
    var a = run.artifacts;
    if (a) {
      if (a.transcript && a.transcript.length) {
        box.appendChild(el("h4", { text: "Transcript" }));
        a.transcript.forEach(function (m) { box.appendChild(message(m)); });
      }
      if (a.tool_calls && a.tool_calls.length) box.appendChild(toolCalls(a.tool_calls));
      box.appendChild(el("h4", { text: "Final answer" + (a.tokens !== null ? " (" + int(a.tokens) + " tokens)" : "") }));
      box.appendChild(el("pre", { "class": "final", text: a.final_text === null ? "(no final answer)" : a.final_text }));
      if (a.error) box.appendChild(el("pre", { "class": "error", text: "agent error: " + a.error }));
    }
    if (run.expectations.length) box.appendChild(expectations(run.expectations));
    return box;
  }
  // a conversation (record v3): each turn with its message, tool calls, reply, world state, expectations
  var ENDED = { script: "every scripted message was answered", user: "the simulated user said it was done",
    bound: "the simulated user reached its `user turns` bound", error: "an agent error ended it" };
  function conversation(box, run) {
    var c = run.conversation;
    box.appendChild(el("h4", { text: "Conversation: " + c.turns.length + " turn(s); " + (ENDED[c.ended_by] || c.ended_by) +
      (c.user_tokens !== null ? "; simulated user " + int(c.user_tokens) + " tokens" : "") }));
    c.turns.forEach(function (t) {
      var turn = el("div", { "class": "turn" });
      turn.appendChild(el("div", { "class": "role", text: "Turn " + t.turn + " · user" + (t.simulated ? " (simulated)" : "") }));
      turn.appendChild(el("pre", { "class": "prompt", text: t.message }));
      var a = t.artifacts;
      if (a) {
        if (a.tool_calls && a.tool_calls.length) turn.appendChild(toolCalls(a.tool_calls));
        turn.appendChild(el("div", { "class": "role", text: "agent" + (a.tokens !== null ? " (" + int(a.tokens) + " tokens)" : "") + ", " + secs(t.latency_s) }));
        turn.appendChild(el("pre", { "class": "final", text: a.final_text === null ? "(no reply)" : a.final_text }));
        if (a.error) turn.appendChild(el("pre", { "class": "error", text: "agent error: " + a.error }));
        if (a.transcript && a.transcript.length) {
          var more = el("details", null, el("summary", { text: "transcript of this turn" }));
          a.transcript.forEach(function (m) { more.appendChild(message(m)); });
          turn.appendChild(more);
        }
      } else {
        turn.appendChild(el("pre", { "class": "error", text: "(the agent gave no answer to this message)" }));
      }
      if (t.world_state !== null) turn.appendChild(el("details", null, el("summary", { text: "world state after this turn" }),
        el("pre", { text: pretty(t.world_state) })));
      var own = run.expectations.filter(function (e) { return e.turn === t.turn; });
      if (own.length) turn.appendChild(expectations(own, "Expectations of turn " + t.turn));
      box.appendChild(turn);
    });
    var whole = run.expectations.filter(function (e) { return e.turn === null || e.turn === undefined; });
    if (whole.length) box.appendChild(expectations(whole, "Expectations of the whole conversation"));
  }
  function message(m) {
    if (!m || typeof m !== "object" || Array.isArray(m)) return el("pre", { "class": "msg", text: pretty(m) });
    var box = el("div", { "class": "msg" });
    var role = m.role !== undefined ? String(m.role) : "entry";
    box.appendChild(el("div", { "class": "role", text: role + (m.tool_call_id ? " \u00b7 result of " + m.tool_call_id : "") + (m.name ? " \u00b7 " + m.name : "") }));
    if (m.role === undefined) { box.appendChild(el("pre", { text: pretty(m) })); return box; }
    if (m.content !== null && m.content !== undefined && m.content !== "") box.appendChild(el("pre", { text: pretty(m.content) }));
    (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach(function (call) {
      var fn = (call && call.function) || call || {};
      var args = fn.arguments !== undefined ? fn.arguments : fn.args;
      if (typeof args === "string") { try { args = JSON.parse(args); } catch (e) { /* shown raw */ } }
      box.appendChild(el("div", { "class": "call" }, "\u2192 call " + (fn.name || "?") + (call && call.id ? " (" + call.id + ")" : "")));
      box.appendChild(el("pre", { "class": "args", text: pretty(args === undefined ? null : args) }));
    });
    return box;
  }
  function toolCalls(calls) {
    var t = el("table", { "class": "grid tools" }, el("thead", null, el("tr", null,
      el("th", { text: "Tool call" }), el("th", { text: "Arguments" }), el("th", { text: "Result" }))));
    var tb = el("tbody");
    calls.forEach(function (c) {
      tb.appendChild(el("tr", null, el("td", { text: c.name }), el("td", null, el("pre", { text: pretty(c.args) })),
        el("td", null, c.result === null ? "\u2013" : el("pre", { text: pretty(c.result) }))));
    });
    t.appendChild(tb);
    return el("div", null, el("h4", { text: "Tool calls" }), t);
  }
  function expectations(list, title) {
    var t = el("table", { "class": "grid expectations" }, el("thead", null, el("tr", null,
      el("th", { text: "Expectation" }), el("th", { text: "Result" }), el("th", { text: "Credit" }),
      el("th", { text: "Detail" }), el("th", { text: "Where" }))));
    var tb = el("tbody");
    list.forEach(function (e) {
      tb.appendChild(el("tr", null, el("td", { text: e.label }), el("td", null, badge(e.passed ? "passed" : "failed")),
        el("td", { "class": "num", text: num2(e.credit) }), el("td", null, e.detail ? el("pre", { text: e.detail }) : "\u2013"),
        el("td", { "class": "where", text: e.file + ":" + e.line })));
    });
    t.appendChild(tb);
    return el("div", null, el("h4", { text: title || "Expectations" }), t);
  }

  // ---- start --------------------------------------------------------
  function start() {
    if (DATA.schema !== 1) { byId("generated").textContent = "This page's data is of an unknown version."; return; }
    byId("generated").textContent = "Generated " + date(DATA.generated_at) + " from " + RUNS.length +
      " record(s), " + CASES.length + " case(s).";
    drawComparison();
    drawBoard();
    fillSelect("f-suite", DATA.suites);
    fillSelect("f-tag", DATA.tags);
    var kinds = {};  // the error kinds that occur, each a filter of its own (by kind, never by message)
    CASES.forEach(function (c) { c.cells.forEach(function (cell) {
      if (cell) (cell.error_kinds || []).forEach(function (k) { kinds[k] = 1; });
    }); });
    var statuses = STATUSES.concat(["flaky", "errors"]).concat(RUNS.length > 1 ? ["changed"] : [])
      .concat(Object.keys(kinds).sort().map(function (k) { return "kind:" + k; }));
    var labels = { flaky: "flaky (some repeats passed)", errors: "any run errored", changed: "differs between records" };
    Object.keys(kinds).forEach(function (k) { labels["kind:" + k] = "error: " + k; });
    fillSelect("f-status", statuses, function (s) { return labels[s] || s; });
    var legend = byId("legend");
    [["\u2713", "passed"], ["\u2717", "failed"], ["~ k/n", "flaky: k of n repeats passed"], ["!", "error"],
     ["\u2013", "skipped"], ["\u00b7", "not in that record"]].forEach(function (x) {
      legend.appendChild(el("span", null, el("strong", { text: x[0] }), " " + x[1]));
    });
    legend.appendChild(el("span", { text: "colour: pass rate, red 0% to green 100%" }));
    drawCaseHead();
    ["f-suite", "f-tag", "f-status"].forEach(function (id) { byId(id).addEventListener("change", applyFilters); });
    var timer = null;
    byId("f-search").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(applyFilters, 120); });
    byId("filters").addEventListener("submit", function (e) { e.preventDefault(); applyFilters(); });
    byId("p-prev").addEventListener("click", function () { state.page--; drawCases(); });
    byId("p-next").addEventListener("click", function () { state.page++; drawCases(); });
    applyFilters();
    if (window.performance && performance.mark) performance.mark("evaldsl-drawn");  // read by bench/bench_report.py
  }
  start();
})();
