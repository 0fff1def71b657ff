// The search: a clue typed or pasted, its results as cards with their
// reasons, how the service read the clue, and the lines of a pasted block
// it used or set aside, all said by the service in the page's language.

import { $, api, el, explain, has, onRedraw, setStatus, state, t } from "./core.js";
import { orderAction } from "./order.js";
import { watchAction } from "./watches.js";

const MIN_QUERY = 2;
const QUOTED_CLUE_CHARS = 80; // a pasted block is quoted in the status line up to this length
const TYPING_DELAY_MS = 300;

const search = { seq: 0, controller: null, timer: 0, query: "", result: null };

// fitQuery makes the search box as high as its text: one line while a
// clue is typed, more when a block is pasted or lines are added, up to
// the max-height of app.css, beyond which the box scrolls.
function fitQuery() {
  const q = $("query");
  q.style.height = "auto";
  q.style.height = q.scrollHeight + (q.offsetHeight - q.clientHeight) + "px";
}

// onQueryKey: Enter searches, as in a one-line box; Shift+Enter adds a
// line. An Enter that ends an input method's composition is left alone.
function onQueryKey(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    onSearchSubmit(event);
  }
}

// quotedClue is the clue as the status line quotes it: the lines of a
// pasted block on one line, separated by " / ", cut after
// QUOTED_CLUE_CHARS characters.
function quotedClue(q) {
  const s = q.split(/[\r\n\t]+/).map((line) => line.trim()).filter(Boolean).join(" / ");
  return s.length > QUOTED_CLUE_CHARS ? s.slice(0, QUOTED_CLUE_CHARS - 1) + "…" : s;
}

function onQueryInput() {
  fitQuery();
  // The results on screen belong to the previous clue: take them away at
  // once, and stop the search that is still running for it.
  cancelSearch();
  clearResults();
  const q = $("query").value.trim();
  if (q.length < MIN_QUERY) {
    setStatus("search-status", q ? t("search.tooShort") : "");
    return;
  }
  search.timer = setTimeout(() => runSearch(q), TYPING_DELAY_MS);
}

function onSearchSubmit(event) {
  event.preventDefault();
  const q = $("query").value.trim();
  cancelSearch();
  if (q.length < MIN_QUERY) {
    clearResults();
    setStatus("search-status", t("search.tooShort"), "error");
    $("query").focus();
    return;
  }
  runSearch(q);
}

function onOptionChange() {
  const q = $("query").value.trim();
  cancelSearch();
  clearResults();
  if (q.length >= MIN_QUERY) {
    runSearch(q);
  }
}

function onExample(event) {
  const button = event.target.closest("button.example");
  if (!button) {
    return;
  }
  $("query").value = button.dataset.example;
  fitQuery();
  if (button.dataset.exampleDeep === "true") {
    $("opt-deep").checked = true;
  }
  cancelSearch();
  clearResults();
  runSearch(button.dataset.example);
  $("query").focus();
}

function cancelSearch() {
  clearTimeout(search.timer);
  search.timer = 0;
  if (search.controller) {
    search.controller.abort();
    search.controller = null;
  }
  // Any answer still on its way is now outdated.
  search.seq++;
}

function clearResults() {
  search.result = null;
  search.query = "";
  $("results").replaceChildren();
  $("understanding").hidden = true;
  $("understanding").replaceChildren();
  renderPastedLines(null, "");
  setStatus("search-status", "");
}

async function runSearch(q) {
  const seq = ++search.seq;
  const controller = new AbortController();
  search.controller = controller;
  const body = { query: q, limit: 10 };
  if ($("opt-deep").checked) {
    body.mode = "deep";
  }
  if ($("opt-discover").checked) {
    body.discover = true;
  }
  $("results").setAttribute("aria-busy", "true");
  setStatus("search-status", t("search.searching", { q: quotedClue(q) }));
  try {
    const result = await api("POST", "/documents/companies/search/", body, { signal: controller.signal });
    if (seq !== search.seq) {
      return; // an older answer arriving late: a newer search owns the screen
    }
    search.result = result;
    search.query = q;
    renderSearchResult();
  } catch (err) {
    if (err.name === "AbortError" || seq !== search.seq) {
      return;
    }
    clearResults();
    setStatus("search-status", explain(err).text, "error");
  } finally {
    if (seq === search.seq) {
      search.controller = null;
      $("results").setAttribute("aria-busy", "false");
    }
  }
}

// searchAgain asks again in the page's new language: the reasons and
// notes on screen are the service's sentences in the old one.
function searchAgain() {
  if (search.result && search.query) {
    const q = search.query;
    renderSearchResult(); // the page's labels at once
    cancelSearch();
    runSearch(q);
  }
}

// showProfile opens the page on one company profile, as
// #profile=<profile_id> (the reconciliation service's view of an
// entity): its register number and court, read by data extension, are
// searched, which shows its card with its reasons and its order button.
async function showProfile() {
  const m = /^#profile=(.+)$/.exec(window.location.hash);
  if (!m) {
    return;
  }
  let id;
  try {
    id = decodeURIComponent(m[1]);
  } catch (e) {
    id = m[1];
  }
  const extend = JSON.stringify({ ids: [id], properties: [{ id: "register_number" }, { id: "court" }] });
  cancelSearch();
  clearResults();
  try {
    const data = await api("GET", "/reconcile?extend=" + encodeURIComponent(extend));
    const row = (data && data.rows && data.rows[id]) || {};
    const number = (row.register_number || [])[0];
    const court = (row.court || [])[0];
    if (!number) {
      setStatus("search-status", t("profile.unknown"), "error");
      return;
    }
    const q = (number.str + " " + (court ? court.str : "")).trim();
    $("query").value = q;
    fitQuery();
    runSearch(q);
  } catch (err) {
    setStatus("search-status", explain(err).text, "error");
  }
}

export function renderSearchResult() {
  const result = search.result;
  if (!result) {
    return;
  }
  const q = quotedClue(search.query);
  const candidates = result.candidates || [];
  if (candidates.length === 0) {
    setStatus("search-status", t("search.none", { q }));
  } else if (candidates.length === 1) {
    setStatus("search-status", t("search.results.one", { q }));
  } else {
    setStatus("search-status", t("search.results.many", { n: candidates.length, q }));
  }
  renderUnderstanding(result.query_understanding, result._lang);
  // Cards drawn again (a watch made, a role learnt) keep the focus where
  // it was: on the same button of the same company's card.
  const active = document.activeElement;
  const card = active && active.closest ? active.closest("#results > li") : null;
  const kept = card && active.className ? { id: card.dataset.profileId, cls: active.className.split(" ")[0] } : null;
  $("results").replaceChildren(...candidates.map((c, i) => candidateCard(c, i, result._lang)));
  if (kept) {
    const again = [...$("results").children].find((li) => li.dataset.profileId === kept.id);
    const target = again && again.querySelector("." + kept.cls);
    if (target) {
      target.focus();
    }
  }
  renderPastedLines(result.query_understanding, result._lang);
}

// renderPastedLines lists, under the results, the lines of a pasted
// block the service used and those it set aside (aside_* codes), each
// in the service's words. The pasted line goes on the page as text.
function renderPastedLines(u, lang) {
  const sentences = (u && u.lines) || [];
  const details = (u && u.line_details) || [];
  const used = [];
  const aside = [];
  sentences.forEach((sentence, i) => {
    const code = (details[i] && details[i].code) || "";
    const item = el("li", { lang, "data-code": code, text: sentence });
    (code.startsWith("aside_") ? aside : used).push(item);
  });
  $("lines-used").replaceChildren(...used);
  $("lines-aside").replaceChildren(...aside);
  $("lines-used").parentElement.hidden = used.length === 0;
  $("lines-aside").parentElement.hidden = aside.length === 0;
  $("pasted-lines").hidden = sentences.length === 0;
}

function renderUnderstanding(u, lang) {
  const node = $("understanding");
  if (!u) {
    node.hidden = true;
    return;
  }
  const children = [el("strong", { text: t("understood.prefix") }), " ", el("span", { lang, text: (u.summary || "") + "." })];
  const notes = u.notes || [];
  const details = u.note_details || [];
  notes.forEach((note, i) => {
    const code = (details[i] && details[i].code) || "";
    children.push(el("span", { className: "note", lang, "data-code": code, text: " " + note + "." }));
  });
  node.replaceChildren(...children);
  node.hidden = false;
}

function candidateCard(c, index, lang) {
  const headingId = "cand-" + index + "-name";
  const label = c.confidence_label || "needs_verification";
  const pct = Math.round(Math.max(0, Math.min(1, Number(c.confidence) || 0)) * 100);
  const facts = [
    ["field.court", c.court],
    ["field.number", c.registry_number],
    ["field.seat", c.city],
    ["field.legalForm", c.legal_form],
    ["field.source", has("source." + c.source) ? t("source." + c.source) : c.source],
    ["field.status", has("status." + c.status) ? t("status." + c.status) : c.status],
    ["field.lei", c.lei],
    ["field.documents", (c.documents || []).length ? c.documents.join(", ") : t("none")],
  ].filter(([, v]) => v);
  const dl = el("dl", { className: "facts" });
  for (const [key, value] of facts) {
    dl.append(el("div", {}, [el("dt", { text: t(key) }), el("dd", { text: value })]));
  }
  const details = c.reason_details || [];
  const reasons = el("ul", { className: "reasons" }, (c.confidence_reasons || []).map((sentence, i) =>
    el("li", { lang, "data-code": (details[i] && details[i].code) || "", text: sentence })));
  const card = el("li", { className: "card label-" + label }, [
    el("article", { "aria-labelledby": headingId }, [
      el("div", { className: "card-head" }, [
        el("h3", { id: headingId, className: "card-title", text: c.name || c.profile_id }),
        el("span", { className: "badge badge-" + label, "data-label": label, text: t("label." + label) }),
      ]),
      dl,
      confidenceBar(pct, headingId),
      el("details", { className: "why", open: true }, [el("summary", { text: t("reasons") }), reasons]),
      orderableMark(c),
      el("div", { className: "actions card-actions" }, [orderAction(c), watchAction(c)]),
    ]),
  ]);
  card.dataset.profileId = c.profile_id;
  return card;
}

function confidenceBar(pct, headingId) {
  const labelId = headingId + "-conf";
  const fill = el("span", { className: "bar-fill bar-" + (pct >= 90 ? "high" : pct >= 60 ? "mid" : "low") });
  // CSSOM, not a style attribute: the Content-Security-Policy allows no inline styles.
  fill.style.width = pct + "%";
  return el("div", { className: "confidence" }, [
    el("span", { id: labelId, className: "confidence-label", text: t("confidence") }),
    el("div", {
      className: "bar", role: "meter", "aria-labelledby": labelId, "aria-valuemin": "0",
      "aria-valuemax": "100", "aria-valuenow": String(pct), "aria-valuetext": pct + " %",
    }, [fill]),
    el("span", { className: "confidence-value", text: t("confidence.value", { pct }) }),
  ]);
}

// orderableMark says whether the company can be ordered; why not, the
// reasons above say.
function orderableMark(c) {
  const yes = Boolean(c.ordering_eligible);
  return el("p", { className: "orderable " + (yes ? "yes" : "no"), "data-orderable": String(yes) }, [
    el("span", { "aria-hidden": "true", text: yes ? "✓ " : "✗ " }), t(yes ? "orderable" : "notOrderable"),
  ]);
}

export function startSearch() {
  $("search-form").addEventListener("submit", onSearchSubmit);
  $("query").addEventListener("input", onQueryInput);
  $("query").addEventListener("keydown", onQueryKey);
  window.addEventListener("resize", fitQuery);
  $("opt-deep").addEventListener("change", onOptionChange);
  $("opt-discover").addEventListener("change", onOptionChange);
  document.querySelector(".examples").addEventListener("click", onExample);
  onRedraw("language", searchAgain);
  onRedraw("session", renderSearchResult);
  onRedraw("role", () => {
    if (state.role === "operator") {
      renderSearchResult(); // cards drawn before the role was known offer to order
    }
  });
  onRedraw("watches", renderSearchResult);
  fitQuery(); // a clue the browser kept from before a reload
  window.addEventListener("hashchange", showProfile);
  showProfile();
}
