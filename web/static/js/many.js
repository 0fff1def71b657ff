// Many companies: a table of clues (CSV or TSV with a header line)
// resolves through the batch endpoint, MANY_CHUNK rows a request, one
// request at a time; a 429 is waited out as Retry-After says. Each row
// shows its best candidate; a person reviews the rows that are not exact
// and downloads the table with the result columns (sheet.js).

import { $, api, el, errorNode, explain, onRedraw, saveFile, setStatus, state, t } from "./core.js";
import { orderAction } from "./order.js";
import { readTable, tableCSV } from "./sheet.js";

const MANY_CHUNK = 100;
const MANY_MAX_ROWS = 5000; // more rows: the command line (companydocs resolve)
const MANY_CHOICES = 5; // candidates offered when a row is reviewed
const MANY_RETRIES = 5; // a late search is sent again up to this often
const MANY_PROPS = ["city", "postal_code", "address", "court", "register_number", "lei", "officer", "legal_form"];
// Header names that preselect a column, by property (lower case).
const MANY_GUESS = {
  query: /^(name|firma|firmenname|company|unternehmen|clue)$/,
  city: /^(ort|stadt|city|sitz|seat)$/,
  postal_code: /^(plz|postleitzahl|postal.?code|zip)$/,
  address: /^(straße|strasse|str\.?|adresse|address|street)$/,
  court: /^(gericht|registergericht|amtsgericht|court)$/,
  register_number: /^(hrb|hra|register|registernummer|register.?number|handelsregisternummer)$/,
  lei: /^lei$/,
  officer: /^(geschäftsführer|geschaeftsfuehrer|officer|director|vorstand|inhaber)$/,
  legal_form: /^(rechtsform|legal.?form)$/,
};

// The table read, each row's batch answer and the reviewer's choice
// (candidate index, -1 none of these, undefined not reviewed).
const m = { table: null, fileName: "", outcomes: [], choices: [], done: 0, running: false, controller: null,
  reviewing: null, error: null, read: null, status: null };

async function onManyFile() {
  const file = $("many-file").files[0];
  if (!file) {
    return;
  }
  $("many-text").value = "";
  m.fileName = file.name;
  // file.text() would drop a BOM; the download keeps the upload's.
  loadTable(new TextDecoder("utf-8", { ignoreBOM: true }).decode(await file.arrayBuffer()));
}

function onManyPaste() {
  $("many-file").value = "";
  m.fileName = "";
  loadTable($("many-text").value);
}

function loadTable(text) {
  stopMany();
  const table = text.trim() ? readTable(text) : null;
  Object.assign(m, { table, outcomes: [], choices: [], done: 0, reviewing: null, error: null, status: null });
  if (table && table.rows.length > MANY_MAX_ROWS) {
    m.read = { key: "many.tooMany", vars: { n: table.rows.length, max: MANY_MAX_ROWS } };
    m.table = null;
  } else if (table && table.rows.length > 0) {
    m.read = { key: table.rows.length === 1 ? "many.read.one" : "many.read.many", vars: { n: table.rows.length, cols: table.header.length } };
  } else {
    m.read = text.trim() ? { key: "many.noRows" } : null;
    m.table = null;
  }
  fillManySelects(true);
  renderMany();
}

// fillManySelects offers the header's columns in every select; guess
// preselects the columns whose names say what they hold.
function fillManySelects(guess) {
  for (const select of document.querySelectorAll("#many-columns select")) {
    const prop = select.dataset.prop;
    const previous = guess ? null : select.value;
    select.replaceChildren();
    if (!m.table) {
      continue;
    }
    if (prop !== "query") {
      select.append(el("option", { value: "", text: t("many.col.none") }));
    }
    m.table.header.forEach((h, i) => select.append(el("option", { value: String(i), text: h || t("many.col.unnamed", { n: i + 1 }) })));
    if (previous !== null) {
      select.value = previous;
    } else {
      const at = m.table.header.findIndex((h) => MANY_GUESS[prop].test(h.toLowerCase()));
      select.value = at >= 0 ? String(at) : prop === "query" ? "0" : "";
    }
  }
}

// manyQuery is the batch item of one row: the clue and the property
// columns picked, trimmed, as the command line sends them.
function manyQuery(row) {
  const item = { query: row[Number($("many-col-query").value)].trim() };
  const properties = {};
  for (const prop of MANY_PROPS) {
    const col = $("many-col-" + prop).value;
    if (col !== "" && row[Number(col)].trim() !== "") {
      properties[prop] = row[Number(col)].trim();
    }
  }
  if (Object.keys(properties).length > 0) {
    item.properties = properties;
  }
  return item;
}

async function runMany(event) {
  event.preventDefault();
  if (!m.table || m.running) {
    return;
  }
  const controller = new AbortController();
  Object.assign(m, { outcomes: [], choices: [], done: 0, reviewing: null, error: null, running: true, controller, status: null });
  renderMany();
  const chunkSize = state.limits ? Math.min(MANY_CHUNK, state.limits.batch_queries) : MANY_CHUNK;
  try {
    while (m.done < m.table.rows.length) {
      const chunk = m.table.rows.slice(m.done, m.done + chunkSize);
      m.outcomes.push(...(await resolveRows(chunk.map(manyQuery), controller.signal)));
      m.done += chunk.length;
      m.status = null;
      renderMany();
    }
    m.status = doneStatus();
  } catch (err) {
    if (err.name !== "AbortError") {
      m.error = err;
    } else {
      m.status = { key: "many.stopped", vars: { n: m.done } };
    }
  } finally {
    m.running = false;
    m.controller = null;
    renderMany();
  }
}

function doneStatus() {
  return { key: "many.done", vars: { n: m.done, check: m.outcomes.filter((o, i) => toReview(i)).length } };
}

// resolveRows resolves the queries of a chunk. A search the server did
// not answer within the batch's time (service_unavailable) is sent again,
// up to MANY_RETRIES times, waiting longer each time.
async function resolveRows(queries, signal) {
  const results = new Array(queries.length);
  let pending = queries.map((_, i) => i);
  for (let attempt = 0; ; attempt++) {
    const answer = await resolveChunk(pending.map((i) => queries[i]), signal);
    const again = [];
    pending.forEach((i, k) => {
      const r = answer.results[k];
      results[i] = r;
      if (r.error && r.error.code === "service_unavailable" && attempt < MANY_RETRIES) {
        again.push(i);
      }
    });
    if (again.length === 0) {
      return results;
    }
    await pause(1000 * 2 ** attempt, signal);
    pending = again;
  }
}

// resolveChunk posts one chunk, waiting out rate_limited answers.
async function resolveChunk(queries, signal) {
  for (;;) {
    try {
      return await api("POST", "/documents/companies/search/batch", { queries }, { signal });
    } catch (err) {
      if (err.code !== "rate_limited") {
        throw err;
      }
      const s = Math.min(Math.max(parseInt(err.retryAfter, 10) || 1, 1), 60);
      m.status = { key: "many.waiting", vars: { s } };
      renderManyProgress();
      await pause(s * 1000, signal);
    }
  }
}

function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new DOMException("stopped", "AbortError"));
    }, { once: true });
  });
}

function stopMany() {
  if (m.controller) {
    m.controller.abort();
  }
}

// toReview: a row that no one has reviewed yet whose best candidate is
// not exact, or that has no candidate (its notes say why).
function toReview(i) {
  const outcome = m.outcomes[i];
  return Boolean(outcome && !outcome.error && m.choices[i] === undefined &&
    (outcome.candidates.length === 0 || outcome.candidates[0].confidence_label !== "exact"));
}

// whyNone is the sentence of a search without candidates: its notes,
// said by the server in the page's language.
function whyNone(outcome) {
  const u = outcome.query_understanding || {};
  return (u.notes || []).join(" | ");
}

// chosenOf is the candidate a row stands for: the reviewer's choice
// (null for "none of these"), else the best candidate.
function chosenOf(i) {
  const outcome = m.outcomes[i];
  const choice = m.choices[i];
  if (!outcome || outcome.error) {
    return null;
  }
  if (choice !== undefined) {
    return choice < 0 ? null : outcome.candidates[choice];
  }
  return outcome.candidates[0] || null;
}

function renderMany() {
  const readOK = m.read && (m.read.key === "many.read.one" || m.read.key === "many.read.many");
  setStatus("many-read", m.read ? t(m.read.key, m.read.vars) : "", m.read && !readOK ? "error" : "");
  $("many-columns").hidden = !m.table;
  $("many-start").disabled = !m.table || m.running;
  $("many-stop").hidden = !m.running;
  $("many-file").disabled = m.running;
  $("many-text").disabled = m.running;
  for (const select of document.querySelectorAll("#many-columns select")) {
    select.disabled = m.running;
  }
  renderManyProgress();
  if (m.error) {
    $("many-status").replaceChildren(errorNode(m.error));
  }
  $("many-result").hidden = m.outcomes.length === 0;
  $("many-download").disabled = m.running;
  renderManyRows();
}

function renderManyProgress() {
  const total = m.table ? m.table.rows.length : 0;
  $("many-progress").hidden = !m.running && (m.done === 0 || m.done === total);
  $("many-bar").max = Math.max(total, 1);
  $("many-bar").value = m.done;
  $("many-progress-text").textContent = t("many.progress", { done: m.done, n: total });
  if (!m.error) {
    setStatus("many-status", m.status ? t(m.status.key, m.status.vars) : m.running ? t("many.running") : "");
  }
}

// renderManyRows draws the rows, or with the filter on only the rows to
// review (and the one being reviewed).
function renderManyRows() {
  const body = $("many-rows");
  const focused = document.activeElement && body.contains(document.activeElement) ? document.activeElement.dataset.focusKey : null;
  const only = $("many-filter").checked;
  body.replaceChildren();
  m.outcomes.forEach((outcome, i) => {
    if (only && !toReview(i) && m.reviewing !== i) {
      return;
    }
    body.append(manyRow(i, outcome));
    if (m.reviewing === i) {
      body.append(reviewRow(i, outcome));
    }
  });
  if (focused) {
    const again = body.querySelector('[data-focus-key="' + focused + '"]');
    if (again) {
      again.focus();
    }
  }
}

// cell is a table cell that names its column, for the narrow layout
// (app.css), where each row is a block and the header is not shown.
function cell(th, attrs, children) {
  return el("td", Object.assign({ "data-th": t(th) }, attrs), children);
}

function manyRow(i, outcome) {
  const row = m.table.rows[i];
  const clue = row[Number($("many-col-query").value)] || "";
  const tr = el("tr", { "data-row": String(i) }, [cell("many.th.row", { className: "row-number", text: String(i + 1) }),
    cell("many.th.clue", { className: "clue", text: clue })]);
  if (outcome.error) {
    tr.append(cell("many.th.candidate", { className: "row-error", "data-code": outcome.error.code, text: explain(outcome.error).text }));
    return tr;
  }
  const chosen = chosenOf(i);
  const reviewed = m.choices[i] !== undefined;
  tr.append(cell("many.th.candidate", { className: "candidate" }, chosen ? [el("span", { className: "cand-name", text: chosen.name }), el("br"),
    el("span", { className: "cand-facts", text: [chosen.court, chosen.registry_number, chosen.city].filter(Boolean).join(", ") })]
    : reviewed ? [t("many.noneChosen")] : noCandidate(outcome)));
  const label = chosen ? chosen.confidence_label : "";
  tr.append(cell("many.th.label", { className: "match" }, [
    label ? el("span", { className: "badge badge-" + label, "data-label": label, text: t("label." + label) }) : null,
    reviewed ? el("span", { className: "reviewed", "data-reviewed": "true", text: " " + t("many.reviewed") }) : null,
  ]));
  const actions = el("div", { className: "row-buttons" });
  if (outcome.candidates.length > 0 && (label !== "exact" || reviewed)) {
    const b = el("button", { type: "button", className: "review-button", "data-focus-key": "review-" + i,
      "aria-expanded": String(m.reviewing === i), text: t(reviewed ? "many.reviewAgain" : "many.review") });
    b.addEventListener("click", () => {
      m.reviewing = m.reviewing === i ? null : i;
      renderManyRows();
      const first = $("many-rows").querySelector(".review input");
      (first || b).focus();
    });
    actions.append(b);
  }
  const order = chosen && (label === "exact" || reviewed) ? orderAction(chosen) : null;
  if (order) {
    actions.append(order);
  }
  tr.append(cell("many.th.action", { className: "row-actions" }, [actions]));
  return tr;
}

// noCandidate says that a row found no candidate, and why.
function noCandidate(outcome) {
  const why = whyNone(outcome);
  return [t("many.noCandidate"), why ? el("br") : null, why ? el("span", { className: "why-none", text: why }) : null];
}

// reviewRow lets the reader pick the right candidate of a row, or none.
function reviewRow(i, outcome) {
  const name = "review-" + i;
  const current = m.choices[i] === undefined ? 0 : m.choices[i];
  const options = outcome.candidates.slice(0, MANY_CHOICES).map((c, k) => reviewOption(name, String(k), k === current, [
    el("span", { className: "cand-name", text: c.name }), " ",
    el("span", { className: "badge badge-" + c.confidence_label, text: t("label." + c.confidence_label) }), el("br"),
    el("span", { className: "cand-facts", text: [c.court, c.registry_number, c.city, t("confidence.value", { pct: Math.round(c.confidence * 100) })].filter(Boolean).join(", ") }),
  ]));
  options.push(reviewOption(name, "-1", current < 0, [t("many.none")]));
  const save = el("button", { type: "button", className: "primary review-save", "data-focus-key": "save-" + i, text: t("many.saveChoice") });
  save.addEventListener("click", () => {
    const picked = $("many-rows").querySelector('input[name="' + name + '"]:checked');
    m.choices[i] = Number(picked.value);
    m.reviewing = null;
    m.status = doneStatus();
    renderMany();
    const again = $("many-rows").querySelector('[data-focus-key="review-' + i + '"]');
    (again || $("many-filter")).focus();
  });
  const fieldset = el("fieldset", { className: "review" }, [el("legend", { text: t("many.reviewLegend", { n: i + 1 }) }), ...options, save]);
  return el("tr", { className: "review-row" }, [el("td", { colspan: "5" }, [fieldset])]);
}

function reviewOption(name, value, checked, label) {
  const id = name + "-" + value.replace("-", "none");
  return el("div", { className: "review-option" }, [
    el("input", { type: "radio", name, id, value, checked }),
    el("label", { for: id }, label),
  ]);
}

// downloadMany saves the table with the result columns; the reasons are
// the service's sentences in the language the rows were searched in.
function downloadMany() {
  const blob = new Blob([tableCSV(m.table, m.outcomes, m.choices)], { type: "text/csv;charset=utf-8" });
  const base = (m.fileName || "companies").replace(/\.(csv|tsv|txt)$/i, "");
  saveFile(blob, base + "-resolved.csv");
}

export function startMany() {
  $("many-file").addEventListener("change", onManyFile);
  $("many-text").addEventListener("input", onManyPaste);
  $("many-form").addEventListener("submit", runMany);
  $("many-stop").addEventListener("click", stopMany);
  $("many-download").addEventListener("click", downloadMany);
  $("many-filter").addEventListener("change", renderManyRows);
  onRedraw("language", () => {
    fillManySelects(false);
    renderMany();
  });
  onRedraw("session", renderManyRows);
  onRedraw("role", renderManyRows);
}
