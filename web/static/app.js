// The companydocs page: search, sign in, preview, order, list orders with
// their timeline, cancel and download; for operator accounts, the order
// queue with payment, request, delivery of the PDF, failure and cancel.
//
// It talks only to the JSON API of the same origin. Server data is put on
// the page with textContent, never as HTML. The session token lives in
// sessionStorage (gone when the tab closes), never in a cookie or the URL.
"use strict";

(function () {
  const API = "/api/v1";
  const SESSION_KEY = "companydocs.session";
  const LANG_KEY = "companydocs.lang";
  const MIN_QUERY = 2;
  const QUOTED_CLUE_CHARS = 80; // a pasted block is quoted in the status line up to this length
  const TYPING_DELAY_MS = 300;

  const texts = window.companydocsTexts;
  const $ = (id) => document.getElementById(id);

  const state = {
    lang: "en",
    session: null,
    plans: null, // array, or an error object when the plans could not be read
    search: { seq: 0, controller: null, timer: 0, query: "", result: null },
    order: null, // {candidate, opener, idemKey, previewSeq, controller}
    returnTo: null, // profile id of the card that asked to sign in
    orders: { cursor: null, items: [] },
    ordersSeq: 0, // the newest request for the client's list; older answers are dropped
    role: null, // "client" or "operator", learnt from the first orders list
    credits: null, // the account's balance, from GET /account/; null until read
    watches: { items: [], count: null, limit: null, seq: 0 }, // the client's watched companies
    queue: { status: "PREVIEW_READY", cursor: null, items: [], seq: 0 }, // the operator's view
    // many companies: the table read, each row's batch answer and the
    // reviewer's choice (candidate index, -1 none, undefined not reviewed)
    many: { table: null, fileName: "", outcomes: [], choices: [], done: 0, running: false, controller: null,
      reviewing: null, error: null, read: null, status: null },
  };

  // ---- language ----

  function pickLanguage() {
    const saved = safeStorage(localStorage, "get", LANG_KEY);
    if (saved === "de" || saved === "en") {
      return saved;
    }
    const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
    return String(langs[0]).toLowerCase().startsWith("de") ? "de" : "en";
  }

  function t(key, vars) {
    let s = (texts[state.lang] && texts[state.lang][key]) || texts.en[key] || key;
    if (vars) {
      s = s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
    }
    return s;
  }

  function has(key) {
    return Boolean(texts.en[key]);
  }

  function applyLanguage() {
    document.documentElement.lang = state.lang;
    document.title = t("page.title");
    for (const el of document.querySelectorAll("[data-i18n]")) {
      el.textContent = t(el.dataset.i18n);
    }
    for (const el of document.querySelectorAll("[data-i18n-aria-label]")) {
      el.setAttribute("aria-label", t(el.dataset.i18nAriaLabel));
    }
    $("lang-switch").lang = state.lang === "de" ? "en" : "de";
    renderSession();
    renderSearchResult();
    renderOrderPanelTexts();
    renderOrders();
    renderWatches();
    fillQueueSelect();
    renderQueue();
    fillManySelects(false);
    renderMany();
  }

  function switchLanguage() {
    state.lang = state.lang === "de" ? "en" : "de";
    safeStorage(localStorage, "set", LANG_KEY, state.lang);
    applyLanguage();
  }

  // ---- small helpers ----

  function safeStorage(store, op, key, value) {
    try {
      if (op === "get") {
        return store.getItem(key);
      } else if (op === "set") {
        store.setItem(key, value);
      } else {
        store.removeItem(key);
      }
    } catch (e) {
      // Storage can be switched off; the page then simply forgets.
    }
    return null;
  }

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) {
        continue;
      }
      if (k === "text") {
        node.textContent = v;
      } else if (k === "className") {
        node.className = v;
      } else {
        node.setAttribute(k, v === true ? "" : v);
      }
    }
    for (const c of children || []) {
      if (c !== null && c !== undefined) {
        node.append(c);
      }
    }
    return node;
  }

  function setStatus(id, text, kind) {
    const node = $(id);
    node.textContent = text || "";
    node.classList.toggle("error", kind === "error");
  }

  function formatTime(iso) {
    const d = new Date(iso);
    if (isNaN(d)) {
      return iso;
    }
    return d.toLocaleString(state.lang === "de" ? "de-DE" : "en-GB", { dateStyle: "medium", timeStyle: "short" });
  }

  function formatMoney(amount, currency) {
    const n = Number(amount);
    if (!isFinite(n) || !currency) {
      return [amount, currency].filter(Boolean).join(" ");
    }
    try {
      return new Intl.NumberFormat(state.lang === "de" ? "de-DE" : "en-GB", { style: "currency", currency }).format(n);
    } catch (e) {
      return amount + " " + currency;
    }
  }

  function docName(type) {
    return has("doc." + type) ? t("doc." + type) : type;
  }

  function newIdempotencyKey() {
    if (window.crypto && crypto.randomUUID) {
      return "web-" + crypto.randomUUID();
    }
    return "web-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }

  // ---- API ----

  // ApiError carries the service's error code and sentence, the existing
  // order of a duplicate_order, and Retry-After for rate_limited.
  class ApiError extends Error {
    constructor(code, message, extra) {
      super(message);
      this.code = code;
      Object.assign(this, extra || {});
    }
  }

  // send makes one request to the API and returns the response once it is
  // a success; an error answer becomes an ApiError with the service's code
  // and sentence. opts.raw sends a Blob or File as it is (the operator's
  // PDF upload), with opts.contentType.
  async function send(method, path, body, opts) {
    opts = opts || {};
    // The service says its refusals in the page's language.
    const headers = { Accept: "application/json", "Accept-Language": state.lang };
    let payload;
    if (opts.raw) {
      headers["Content-Type"] = opts.contentType;
      payload = opts.raw;
    } else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    if (opts.auth) {
      if (!state.session) {
        throw new ApiError("unauthorized", "");
      }
      headers.Authorization = "Bearer " + state.session.token;
    }
    Object.assign(headers, opts.headers || {});
    let resp;
    try {
      resp = await fetch(API + path, {
        method,
        headers,
        body: payload,
        signal: opts.signal,
        credentials: "omit",
        cache: "no-store",
        referrerPolicy: "no-referrer",
      });
    } catch (e) {
      if (e.name === "AbortError") {
        throw e;
      }
      throw new ApiError("network", e.message);
    }
    if (!resp.ok) {
      throw await errorOf(resp, opts);
    }
    return resp;
  }

  async function errorOf(resp, opts) {
    let data = null;
    try {
      data = await resp.json();
    } catch (e) {
      if (e.name === "AbortError") {
        throw e;
      }
    }
    const err = (data && data.error) || {};
    const code = err.code || (resp.status === 429 ? "rate_limited" : "unknown");
    const apiErr = new ApiError(code, err.message || "", {
      lang: resp.headers.get("Content-Language") || "en",
      status: resp.status,
      order: data && data.order,
      retryAfter: resp.headers.get("Retry-After"),
    });
    if (code === "unauthorized" && opts.auth) {
      endSession(t("account.expired"));
    }
    return apiErr;
  }

  async function api(method, path, body, opts) {
    const resp = await send(method, path, body, opts);
    if (resp.status === 204) {
      return null;
    }
    try {
      return await resp.json();
    } catch (e) {
      if (e.name === "AbortError") {
        throw e;
      }
      return null;
    }
  }

  // explain turns an API error into plain words, in the page's language,
  // followed by the service's own sentence when it adds something.
  function explain(err) {
    let text;
    if (err.code === "rate_limited") {
      const s = parseInt(err.retryAfter, 10);
      text = s > 0 ? t("error.rate_limited", { s }) : t("error.rate_limited_now");
    } else if (has("error." + err.code)) {
      text = t("error." + err.code);
    } else {
      text = t("error.unknown");
    }
    // The service's own sentence only when it is in the page's language.
    const detail = err.code === "network" || err.lang !== state.lang ? "" : err.message;
    return { text, detail };
  }

  function errorNode(err) {
    const { text, detail } = explain(err);
    return el("div", { className: "message error", "data-code": err.code }, [
      el("p", { text }),
      detail ? el("p", { className: "detail" }, [t("error.details") + " ", el("span", { lang: err.lang, text: detail })]) : null,
    ]);
  }

  // ---- session ----

  function loadSession() {
    const raw = safeStorage(sessionStorage, "get", SESSION_KEY);
    if (!raw) {
      return null;
    }
    try {
      const s = JSON.parse(raw);
      if (s && s.token && new Date(s.expires_at) > new Date()) {
        return s;
      }
    } catch (e) {
      // A damaged entry is dropped below.
    }
    safeStorage(sessionStorage, "remove", SESSION_KEY);
    return null;
  }

  async function signIn(event) {
    event.preventDefault();
    const input = $("api-key");
    const key = input.value.trim();
    if (!key) {
      setStatus("account-status", t("account.keyMissing"), "error");
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    input.removeAttribute("aria-invalid");
    $("signin-button").disabled = true;
    setStatus("account-status", t("account.signingIn"));
    try {
      const s = await api("POST", "/auth/sessions/", { api_key: key });
      state.session = { token: s.token, expires_at: s.expires_at };
      safeStorage(sessionStorage, "set", SESSION_KEY, JSON.stringify(state.session));
      input.value = "";
      setStatus("account-status", "");
      renderSession();
      renderSearchResult();
      renderManyRows();
      loadOrders(false);
      loadAccount();
      loadWatches();
      focusAfterSignIn();
    } catch (err) {
      const words = err.code === "unauthorized" ? t("account.badKey") : explain(err).text;
      setStatus("account-status", words, "error");
      input.setAttribute("aria-invalid", "true");
      input.focus();
    } finally {
      $("signin-button").disabled = false;
    }
  }

  // focusAfterSignIn returns to the card whose "Sign in to order" led
  // here, now offering "Order a document"; otherwise it stays in the
  // account section.
  function focusAfterSignIn() {
    const id = state.returnTo;
    state.returnTo = null;
    for (const card of $("results").children) {
      if (id && card.dataset.profileId === id && card.querySelector(".order-button")) {
        card.querySelector(".order-button").focus();
        return;
      }
    }
    $("signout-button").focus();
  }

  async function signOut() {
    const had = state.session;
    if (had) {
      try {
        await api("DELETE", "/auth/sessions/current", undefined, { auth: true });
      } catch (e) {
        // The session ends on this page whatever the server said.
      }
    }
    endSession(t("account.signedOut"));
    $("api-key").focus();
  }

  function endSession(message) {
    state.session = null;
    safeStorage(sessionStorage, "remove", SESSION_KEY);
    state.orders = { cursor: null, items: [] };
    state.ordersSeq++;
    state.role = null;
    state.credits = null;
    state.watches = { items: [], count: null, limit: null, seq: state.watches.seq + 1 };
    state.queue = { status: "PREVIEW_READY", cursor: null, items: [], seq: state.queue.seq + 1 };
    $("queue-status").value = state.queue.status;
    closeOrderPanel(false);
    renderSession();
    renderSearchResult();
    renderManyRows();
    renderOrders();
    renderWatches();
    renderQueue();
    setStatus("account-status", message || "");
  }

  function renderSession() {
    const signedIn = Boolean(state.session);
    $("signin-form").hidden = signedIn;
    $("signed-in").hidden = !signedIn;
    $("orders-refresh").hidden = !signedIn;
    const operator = signedIn && state.role === "operator";
    $("orders").hidden = operator;
    $("watches").hidden = operator;
    $("watches-refresh").hidden = !signedIn;
    $("queue").hidden = !operator;
    let words = signedIn ? t("account.signedIn", { time: formatTime(state.session.expires_at) }) : "";
    if (operator) {
      words += " " + t("account.operator");
    }
    $("session-text").textContent = words;
    const credits = $("account-credits");
    credits.hidden = !signedIn || state.credits === null;
    credits.textContent = credits.hidden ? "" : t("account.credits", { n: state.credits });
  }

  // loadAccount reads the account's balance, after sign-in and after each
  // order created or cancelled; the page shows it as the server last said
  // it and computes none.
  async function loadAccount() {
    const session = state.session;
    try {
      const a = await api("GET", "/account/", undefined, { auth: true });
      if (state.session === session) {
        state.credits = a.credits;
        if (a.watches) {
          state.watches.count = a.watches.count;
          state.watches.limit = a.watches.limit;
        }
        renderSession();
        renderWatches();
      }
    } catch (e) {
      // A 401 has ended the session already; after any other failure the
      // line keeps the balance last read, or stays hidden.
    }
  }

  // ---- search ----

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
    state.search.timer = setTimeout(() => runSearch(q), TYPING_DELAY_MS);
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
    clearTimeout(state.search.timer);
    state.search.timer = 0;
    if (state.search.controller) {
      state.search.controller.abort();
      state.search.controller = null;
    }
    // Any answer still on its way is now outdated.
    state.search.seq++;
  }

  function clearResults() {
    state.search.result = null;
    state.search.query = "";
    $("results").replaceChildren();
    $("understanding").hidden = true;
    $("understanding").replaceChildren();
    renderPastedLines(null);
    setStatus("search-status", "");
  }

  async function runSearch(q) {
    const seq = ++state.search.seq;
    const controller = new AbortController();
    state.search.controller = controller;
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
      if (seq !== state.search.seq) {
        return; // an older answer arriving late: a newer search owns the screen
      }
      state.search.result = result;
      state.search.query = q;
      renderSearchResult();
    } catch (err) {
      if (err.name === "AbortError" || seq !== state.search.seq) {
        return;
      }
      clearResults();
      setStatus("search-status", explain(err).text, "error");
    } finally {
      if (seq === state.search.seq) {
        state.search.controller = null;
        $("results").setAttribute("aria-busy", "false");
      }
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

  function renderSearchResult() {
    const result = state.search.result;
    if (!result) {
      return;
    }
    const q = quotedClue(state.search.query);
    const candidates = result.candidates || [];
    if (candidates.length === 0) {
      setStatus("search-status", t("search.none", { q }));
    } else if (candidates.length === 1) {
      setStatus("search-status", t("search.results.one", { q }));
    } else {
      setStatus("search-status", t("search.results.many", { n: candidates.length, q }));
    }
    renderUnderstanding(result.query_understanding, state.search.query);
    $("results").replaceChildren(...candidates.map((c, i) => candidateCard(c, i)));
    renderPastedLines(result.query_understanding);
  }

  // renderPastedLines lists, under the results, the lines of a pasted
  // block the service used and those it set aside (line_* and aside_*
  // codes): each said from its code and params (line_details) in the
  // page's language, or the service's English sentence where the page
  // does not know the code. The pasted line goes on the page as text.
  function renderPastedLines(u) {
    const sentences = (u && u.lines) || [];
    const details = (u && u.line_details) || [];
    const used = [];
    const aside = [];
    sentences.forEach((sentence, i) => {
      const d = details.length === sentences.length ? details[i] : {};
      const words = coded("line.", { code: d.code, params: d.params, message: sentence }, reasonWords);
      const item = el("li", { lang: words.lang, "data-code": d.code || "", text: words.text });
      (String(d.code || "").startsWith("aside_") ? aside : used).push(item);
    });
    $("lines-used").replaceChildren(...used);
    $("lines-aside").replaceChildren(...aside);
    $("lines-used").parentElement.hidden = used.length === 0;
    $("lines-aside").parentElement.hidden = aside.length === 0;
    $("pasted-lines").hidden = sentences.length === 0;
  }

  // foldWord folds one word as the service folds name tokens (fold.go):
  // lower case, ä -> ae, ö -> oe, ü -> ue, ß -> ss, other marks dropped.
  function foldWord(w) {
    return w.toLowerCase().replace(/ä/g, "ae").replace(/ö/g, "oe").replace(/ü/g, "ue").replace(/ß/g, "ss")
      .normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/['’]/g, "");
  }

  // typedWords gives each folded name token back in the spelling the
  // reader typed ("rheinbahn" -> "Rheinbahn"); a token that no typed word
  // folds to stays as it is.
  function typedWords(tokens, query) {
    const typed = new Map();
    for (const w of (query || "").split(/[^\p{L}\p{N}'’]+/u)) {
      if (w && !typed.has(foldWord(w))) {
        typed.set(foldWord(w), w);
      }
    }
    return tokens.map((tok) => typed.get(tok) || tok).join(" ");
  }

  // describeUnderstanding says in words how the service read the query.
  function describeUnderstanding(u, query) {
    const parts = [];
    if (u.kind === "lei" && u.lei) {
      parts.push(t("understood.lei", { lei: u.lei }));
    } else if (u.lei_valid === false) {
      parts.push(t("understood.leiInvalid"));
    }
    const r = u.register_reference;
    if (r) {
      let s = t("understood.register", { ref: [r.type, r.number, r.suffix].filter(Boolean).join(" ") });
      s += " " + (r.court ? t("understood.court", { court: r.court }) : t("understood.noCourt"));
      if (r.former_court) {
        s += " " + t("understood.formerCourt", { court: r.former_court });
      }
      parts.push(s);
    }
    if (u.name_tokens && u.name_tokens.length) {
      parts.push(t("understood.name", { tokens: typedWords(u.name_tokens, query) }));
    }
    if (u.legal_form) {
      parts.push(t("understood.form", { form: u.legal_form }));
    }
    if (u.city) {
      parts.push(t("understood.city", { city: u.city }));
    }
    if (parts.length === 0) {
      parts.push(t("understood.text"));
    }
    if (u.short_query) {
      parts.push(t("understood.short"));
    }
    return parts.join("; ");
  }

  function renderUnderstanding(u, query) {
    const node = $("understanding");
    if (!u) {
      node.hidden = true;
      return;
    }
    const children = [el("strong", { text: t("understood.prefix") }), " " + describeUnderstanding(u, query) + "."];
    const notes = u.notes || [];
    const details = u.note_details || [];
    notes.forEach((note, i) => {
      const d = details.length === notes.length ? details[i] : {};
      const words = coded("note.", { code: d.code, params: d.params, message: note }, reasonWords);
      children.push(el("span", { className: "note", lang: words.lang, "data-code": d.code || "", text: words.text + "." }));
    });
    node.replaceChildren(...children);
    node.hidden = false;
  }

  function notOrderableReason(c) {
    if (c.status === "removed") {
      return t("notOrderable.removed");
    }
    if (c.status === "unverified") {
      return t("notOrderable.unverified");
    }
    if (!(c.documents || []).some((d) => d === "AD" || d === "CD")) {
      return t("notOrderable.noDocuments");
    }
    return t("notOrderable.other");
  }

  function candidateCard(c, index) {
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
    const reasons = reasonsNode(c);
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

  // reasonsNode says why a candidate was found, in the page's language:
  // each reason from its code and params (reason_details), or the
  // service's English sentence where the page does not know the code.
  function reasonsNode(c) {
    const sentences = c.confidence_reasons || [];
    const details = c.reason_details || [];
    return el("ul", { className: "reasons" }, sentences.map((sentence, i) => {
      const d = details.length === sentences.length ? details[i] : {};
      const words = coded("reason.", { code: d.code, params: d.params, message: sentence }, reasonWords);
      return el("li", { lang: words.lang, "data-code": d.code || "", text: words.text });
    }));
  }

  // reasonWords turns the params of a reason, or of a note or a pasted
  // line of the understanding, into the words its sentence uses.
  function reasonWords(p) {
    const vars = {};
    for (const [name, value] of Object.entries(p)) {
      if (typeof value === "string" || typeof value === "number") {
        vars[name] = value;
      }
    }
    if (p.register_number !== undefined) {
      vars.number = p.register_number;
    }
    if (p.entries !== undefined) {
      vars.times = p.entries === 1 ? t("reason.times.one") : t("reason.times.many", { n: p.entries });
    }
    vars.entry_suffix = p.suffix ? t("reason.suffix", { suffix: p.suffix }) : t("reason.noSuffix");
    vars.query_suffix = p.query_suffix ? t("reason.suffix", { suffix: p.query_suffix }) : t("reason.noSuffix");
    vars.former_court = p.former_court || t("reason.noFormerCourt");
    vars.entry_register_number = p.register_number || t("reason.noRegisterNumber");
    vars.at_court = p.court ? t("note.atCourt", { court: p.court }) : "";
    const missing = gapsWords(p.gaps || []);
    if (missing !== null) {
      vars.missing = missing;
    }
    vars.position = positionWords(p.position);
    return vars;
  }

  // gapsWords says what keeps a discovery record unverified (the gaps of
  // discovery_unverified), each gap from its code and params; null when
  // the page cannot say one of them (an unknown code, or a gap an older
  // ingest wrote down in English only), so that the reason falls back to
  // the service's English sentence.
  function gapsWords(gaps) {
    if (gaps.length === 0) {
      return t("reason.notConfirmed");
    }
    const said = gaps.map((g) => coded("gap.", { code: g.code, params: g.params || {} }, gapWords));
    return said.every((w) => w.text !== "") ? said.map((w) => w.text).join("; ") : null;
  }

  // gapWords turns the params of a verification gap into the words its
  // sentence uses: GLEIF's status values in the page's language, a
  // similarity as a decimal.
  function gapWords(p) {
    const vars = {};
    for (const [name, value] of Object.entries(p)) {
      if (typeof value === "string" || typeof value === "number") {
        vars[name] = value;
      }
    }
    vars.authority = p.ra_code || t("gap.notStated");
    vars.validation = gleifWord("validation", p.validation_sources);
    vars.registration = gleifWord("registration", p.status);
    vars.entity = gleifWord("entity", p.status);
    vars.live = p.live || 0;
    const more = (p.entries || 0) - (p.listed || []).length;
    const listed = (p.listed || []).concat(p.listed && more > 0 ? [t("gap.more", { n: more })] : []);
    vars.listed = listed.length ? ": " + listed.join(", ") : "";
    vars.similarity = ((p.percent || 0) / 100).toLocaleString(state.lang === "de" ? "de-DE" : "en-GB", { minimumFractionDigits: 2 });
    return vars;
  }

  // gleifWord names a GLEIF status value in the page's language, or as
  // GLEIF writes it when the page does not know it.
  function gleifWord(kind, value) {
    if (!value) {
      return t("gap.notStated");
    }
    const key = "gleif." + kind + "." + value;
    return has(key) ? t(key) : value;
  }

  // positionWords names an officer's position: the common ones in the
  // page's language (German says the register's own word, which is
  // gendered), others as the register writes them.
  function positionWords(position) {
    if (!position) {
      return t("reason.officer");
    }
    const key = positionKeys[position.toLowerCase()];
    return t(key ? "position." + key : "reason.officerAs", { position });
  }

  const positionKeys = {
    "geschäftsführer": "managing_director", "geschäftsführerin": "managing_director",
    "vorstand": "board_member", "vorstandsmitglied": "board_member", "vorstandsvorsitzender": "board_member",
    "prokurist": "prokurist", "prokuristin": "prokurist",
    "inhaber": "owner", "inhaberin": "owner",
    "persönlich haftender gesellschafter": "general_partner", "persönlich haftende gesellschafterin": "general_partner",
    "liquidator": "liquidator", "liquidatorin": "liquidator",
  };

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

  function orderableMark(c) {
    if (c.ordering_eligible) {
      return el("p", { className: "orderable yes", "data-orderable": "true" }, [el("span", { "aria-hidden": "true", text: "✓ " }), t("orderable")]);
    }
    return el("p", { className: "orderable no", "data-orderable": "false" }, [
      el("span", { "aria-hidden": "true", text: "✗ " }), t("notOrderable") + " (" + notOrderableReason(c) + ")",
    ]);
  }

  function orderAction(c) {
    if (!c.ordering_eligible || state.role === "operator") {
      return null; // operators run the queue; the service does not let them order
    }
    if (!state.session) {
      const b = el("button", { type: "button", className: "order-signin", text: t("action.signInToOrder") });
      b.addEventListener("click", () => {
        state.returnTo = c.profile_id; // come back to this card after signing in
        $("api-key").focus();
      });
      return b;
    }
    const b = el("button", { type: "button", className: "order-button primary", text: t("action.order") });
    b.addEventListener("click", () => openOrderPanel(c, b));
    return b;
  }

  // ---- watches ----

  // watchAction offers to watch an orderable company: signed in as a
  // client only (the service lets only clients watch). A company the
  // account watches already says so instead.
  function watchAction(c) {
    if (!c.ordering_eligible || !state.session || state.role === "operator") {
      return null;
    }
    if (watchOf(c.profile_id)) {
      return el("p", { className: "watching", text: "✓ " + t("watch.watching") });
    }
    const message = el("span", { className: "action-message", role: "status", "aria-live": "polite" });
    const b = el("button", { type: "button", className: "watch-button", text: t("watch.action") });
    b.addEventListener("click", () => guarded(b, message, async () => {
      await api("POST", "/watches/", { company_profile_id: c.profile_id }, { auth: true });
      await loadWatches();
      loadAccount();
      renderSearchResult();
      const card = [...$("results").children].find((x) => x.dataset.profileId === c.profile_id);
      const done = card && card.querySelector(".watching");
      if (done) {
        done.tabIndex = -1;
        done.focus();
      }
    }));
    return el("span", { className: "watch-action" }, [b, message]);
  }

  function watchOf(profileId) {
    return state.watches.items.find((w) => !w.ended && w.company_profile_id === profileId) || null;
  }

  async function loadWatches() {
    if (!state.session || state.role === "operator") {
      return;
    }
    const seq = ++state.watches.seq;
    try {
      const data = await api("GET", "/watches/", undefined, { auth: true });
      if (seq === state.watches.seq) {
        state.watches.items = data.watches || [];
        renderWatches();
      }
    } catch (err) {
      if (seq === state.watches.seq && state.session) {
        setStatus("watches-status", explain(err).text, "error");
      }
    }
  }

  function renderWatches() {
    const list = $("watches-list");
    if (!state.session) {
      list.replaceChildren();
      setStatus("watches-status", t("watches.signIn"));
      return;
    }
    const items = state.watches.items;
    let words = items.length ? t("watches.count", { n: items.filter((w) => !w.ended).length }) : t("watches.none");
    if (state.watches.limit !== null) {
      words += " " + (state.watches.limit > 0 ? t("watches.limit", { limit: state.watches.limit }) : t("watches.noLimit"));
    }
    setStatus("watches-status", words);
    list.replaceChildren(...items.map(watchItem));
  }

  function watchItem(w) {
    const c = w.company || {};
    const change = w.last_change;
    const box = el("div", { className: "actions watch-actions" });
    const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
    if (change && !w.ended) {
      const b = el("button", { type: "button", className: "order-fresh primary", text: t("watch.orderFresh") });
      b.addEventListener("click", () => openOrderPanel(candidateOfWatch(w), b));
      box.append(b);
    }
    const stop = el("button", { type: "button", className: "unwatch", text: t("watch.stop") });
    stop.addEventListener("click", () => guarded(stop, message, async () => {
      await api("DELETE", "/watches/" + encodeURIComponent(w.id), undefined, { auth: true });
      await loadWatches();
      loadAccount();
      renderSearchResult();
      setStatus("watches-status", t("watch.stopped", { name: c.name || w.company_profile_id }));
    }));
    box.append(stop);
    return el("li", { className: "order-item watch-item", "data-watch-id": w.id, "data-profile-id": w.company_profile_id }, [
      el("h3", { className: "card-title", text: c.name || w.company_profile_id }),
      el("p", { className: "hint", text: [c.court, c.registry_number, c.city].filter(Boolean).join(" · ") }),
      changeNode(w),
      el("div", { role: "group", "aria-label": t("watch.actionsFor", { name: c.name || w.id }) }, [box, message]),
    ]);
  }

  // candidateOfWatch is the watched company as the order panel reads a
  // search result.
  function candidateOfWatch(w) {
    const c = w.company || {};
    return { profile_id: w.company_profile_id, name: c.name, court: c.court, registry_number: c.registry_number,
      city: c.city, legal_form: c.legal_form, source: c.source, ordering_eligible: true, documents: ["AD", "CD"] };
  }

  function changeNode(w) {
    const change = w.last_change;
    if (!change) {
      return el("p", { className: "watch-change none", text: t("watch.noChange", { time: formatTime(w.created_at) }) });
    }
    const lines = (change.changes || []).map((f) => el("li", { "data-field": f.field, text: fieldChangeWords(f) }));
    return el("div", { className: "watch-change" }, [
      el("p", { className: "watch-change-time", text: t(w.ended ? "watch.ended" : "watch.changed", { time: formatTime(change.at) }) }),
      el("ul", { className: "watch-change-list" }, lines),
    ]);
  }

  // fieldChangeWords says one changed field in the page's language.
  function fieldChangeWords(f) {
    const b = f.before, a = f.after;
    switch (f.field) {
      case "name":
      case "seat":
      case "address":
      case "legal_form":
        return t("change." + f.field, { before: b || "–", after: a || "–" });
      case "status":
        return t("change.status", { before: t("companyStatus." + b), after: t("companyStatus." + a) });
      case "register":
        return t("change.register", { before: (b && b.text) || "–", after: (a && a.text) || "–" });
      case "officers":
        return t("change.officers", { left: officerNames(b), joined: officerNames(a) });
      case "removed":
        return t("change.removed");
      default:
        return has("change." + f.field) ? t("change." + f.field) : f.field;
    }
  }

  function officerNames(list) {
    if (!Array.isArray(list) || list.length === 0) {
      return t("none");
    }
    return list.map((o) => (o.role ? o.name + " (" + o.role + ")" : o.name)).join(", ");
  }

  // ---- plans, preview and order ----

  async function loadPlans() {
    try {
      const data = await api("GET", "/documents/plans/");
      state.plans = data.plans || [];
    } catch (err) {
      state.plans = err;
    }
  }

  function openOrderPanel(candidate, opener) {
    abortPreview();
    state.order = { candidate, opener, idemKey: newIdempotencyKey(), previewSeq: 0, controller: null };
    $("order-result").replaceChildren();
    $("order-form").hidden = false;
    $("order-company").textContent = [candidate.name, candidate.court, candidate.registry_number].filter(Boolean).join(", ");
    fillPlanSelect();
    const panel = $("order-panel");
    panel.hidden = false;
    $("order-heading").focus();
    preview();
  }

  function closeOrderPanel(returnFocus) {
    abortPreview();
    const opener = state.order && state.order.opener;
    state.order = null;
    $("order-panel").hidden = true;
    if (returnFocus && opener && document.body.contains(opener)) {
      opener.focus();
    } else if (returnFocus) {
      $("query").focus();
    }
  }

  function fillPlanSelect() {
    const select = $("order-plan");
    const previous = select.value;
    select.replaceChildren();
    if (!Array.isArray(state.plans) || state.plans.length === 0) {
      select.disabled = true;
      $("order-document").disabled = true;
      $("order-document").replaceChildren();
      return;
    }
    select.disabled = false;
    for (const p of state.plans) {
      select.append(el("option", { value: p.id, text: planLabel(p) }));
    }
    const held = state.order ? state.order.candidate.documents || [] : [];
    const fitting = state.plans.find((p) => p.id === previous) ||
      state.plans.find((p) => (p.document_types || []).some((d) => held.includes(d))) || state.plans[0];
    select.value = fitting.id;
    fillDocumentSelect();
  }

  function planLabel(p) {
    const price = p.credit_cost > 0 && Number(p.price) === 0 ? creditsText(p.credit_cost) : formatMoney(p.price, p.currency);
    return t("plan.option", { name: planWords(p), price });
  }

  // creditsText says a number of credits, one in the singular.
  function creditsText(n) {
    return n === 1 ? t("plan.credits.one") : t("plan.credits", { n });
  }

  // planWords names a plan in the page's language: on the English page the
  // operator's name from the plan file, which is English; in German from
  // what the plan is, its documents and kind.
  function planWords(p) {
    if (state.lang === "en" && p.name) {
      return p.name;
    }
    const documents = (p.document_types || []).map(docName).join(t("plan.and"));
    const kind = has("plan." + p.kind) ? t("plan." + p.kind) : p.kind;
    return documents ? t("plan.name", { documents, kind }) : p.name;
  }

  function fillDocumentSelect() {
    const select = $("order-document");
    const previous = select.value;
    const plan = currentPlan();
    select.replaceChildren();
    if (!plan) {
      select.disabled = true;
      return;
    }
    select.disabled = false;
    const held = state.order ? state.order.candidate.documents || [] : [];
    for (const d of plan.document_types || []) {
      const label = held.includes(d) ? docName(d) : t("doc.notHeld", { doc: docName(d) });
      select.append(el("option", { value: d, text: label }));
    }
    const types = plan.document_types || [];
    select.value = types.includes(previous) ? previous : types.find((d) => held.includes(d)) || types[0] || "";
  }

  function currentPlan() {
    if (!Array.isArray(state.plans)) {
      return null;
    }
    return state.plans.find((p) => p.id === $("order-plan").value) || null;
  }

  function onPlanChange() {
    fillDocumentSelect();
    onChoiceChange();
  }

  function onChoiceChange() {
    if (state.order) {
      // A different choice is a different order: it gets its own key.
      state.order.idemKey = newIdempotencyKey();
    }
    $("order-result").replaceChildren();
    preview();
  }

  function abortPreview() {
    if (state.order && state.order.controller) {
      state.order.controller.abort();
      state.order.controller = null;
    }
  }

  function orderRequest() {
    const c = state.order.candidate;
    const req = { company_profile_id: c.profile_id, document_type: $("order-document").value, plan_id: $("order-plan").value };
    if (c.discovery_candidate_id) {
      req.discovery_candidate_id = c.discovery_candidate_id;
    }
    return req;
  }

  async function preview() {
    const box = $("preview");
    const confirm = $("order-confirm");
    confirm.disabled = true;
    confirm.textContent = t("order.confirm");
    if (!state.order) {
      return;
    }
    if (!Array.isArray(state.plans) || state.plans.length === 0) {
      box.replaceChildren(Array.isArray(state.plans) ? el("p", { className: "message error", text: t("error.plan_configuration_missing") }) : errorNode(state.plans));
      return;
    }
    abortPreview();
    const order = state.order;
    const seq = ++order.previewSeq;
    const controller = new AbortController();
    order.controller = controller;
    box.replaceChildren(el("p", { className: "status", text: t("order.previewing") }));
    try {
      const p = await api("POST", "/documents/orders/preview/", orderRequest(), { auth: true, signal: controller.signal });
      if (state.order !== order || seq !== order.previewSeq) {
        return;
      }
      order.preview = p;
      renderPreview(p);
    } catch (err) {
      if (err.name === "AbortError" || state.order !== order || seq !== order.previewSeq) {
        return;
      }
      box.replaceChildren(errorNode(err));
    }
  }

  // onlyOpenOrder reports a preview whose one obstacle is an open order of
  // the same kind: the page then offers to show that order. Sending the
  // request cannot make a second order; the service answers duplicate_order
  // with the existing one.
  function onlyOpenOrder(p) {
    const blockers = p.blockers || [];
    return !p.ordering_eligible && blockers.length > 0 && blockers.every((b) => b.code === "duplicate_order");
  }

  function renderPreview(p) {
    const confirm = $("order-confirm");
    confirm.disabled = !(p.ordering_eligible || onlyOpenOrder(p));
    confirm.textContent = onlyOpenOrder(p) ? t("order.showExisting") : t("order.confirm");
    const rows = el("dl", { className: "facts" }, [
      el("div", {}, [el("dt", { text: t("order.estimatedTotal") }), el("dd", { className: "total", text: formatMoney(p.estimated_total, p.currency) })]),
      p.credit_cost ? el("div", {}, [el("dt", { text: t("order.credits") }), el("dd", { text: String(p.credit_cost) })]) : null,
    ]);
    const children = [el("h3", { text: t("order.previewHeading") }), rows];
    if (p.ordering_eligible) {
      children.push(el("p", { className: "message ok", text: t("order.ready") }));
    } else {
      const list = el("ul", { className: "blockers" });
      for (const b of p.blockers || []) {
        const words = coded("blocker.", b);
        list.append(el("li", { "data-code": b.code }, [el("span", { lang: words.lang, text: words.text })]));
      }
      children.push(el("div", { className: "message error" }, [el("p", { text: t("order.blocked") }), list]));
    }
    $("preview").replaceChildren(...children);
  }

  async function placeOrder(event) {
    event.preventDefault();
    const order = state.order;
    const confirm = $("order-confirm");
    if (!order || confirm.disabled) {
      return;
    }
    confirm.disabled = true;
    const result = $("order-result");
    result.replaceChildren(el("p", { className: "status", text: t("order.placing") }));
    try {
      const o = await api("POST", "/documents/orders/", orderRequest(), { auth: true, headers: { "Idempotency-Key": order.idemKey } });
      showOrder(o, t("order.created"), "ok");
    } catch (err) {
      if (state.order !== order) {
        return;
      }
      if (err.code === "duplicate_order" && err.order) {
        showOrder(err.order, t("order.duplicate"), "duplicate");
        return;
      }
      result.replaceChildren(errorNode(err));
      confirm.disabled = false;
    }
  }

  function showOrder(o, headline, kind) {
    $("order-form").hidden = true;
    const box = el("div", { className: "message " + (kind === "ok" ? "ok" : "info"), "data-kind": kind }, [
      el("p", { className: "headline", text: headline }),
      orderDetails(o),
    ]);
    const again = el("button", { type: "button", text: t("order.back") });
    again.addEventListener("click", () => closeOrderPanel(true));
    $("order-result").replaceChildren(box, again);
    $("order-heading").focus();
    loadOrders(false);
    loadAccount();
  }

  // ---- one order: facts, status in words, timeline, next step ----

  // Each status has a sign besides its colour, so that it does not rest on
  // colour alone; the words carry the meaning, the sign is decoration.
  const STATUS_SIGNS = { PREVIEW_READY: "○", PAID: "◐", REQUESTED: "◑", DELIVERED: "✓", FAILED: "✗", CANCELLED: "⊘" };
  const STATUSES = Object.keys(STATUS_SIGNS);

  function statusWords(status) {
    return has("orderStatus." + status) ? t("orderStatus." + status) : status;
  }

  function actorWords(actor) {
    return has("actor." + actor) ? t("actor." + actor) : actor;
  }

  function statusBadge(status) {
    return el("span", { className: "status-badge status-" + status, "data-status": status }, [
      el("span", { "aria-hidden": "true", text: (STATUS_SIGNS[status] || "•") + " " }),
      el("span", { className: "status-words", text: statusWords(status) }),
    ]);
  }

  // orderDetails shows an order; step, when given, in place of the
  // service's next step (the operator's queue says the operator's).
  function orderDetails(o, step) {
    const company = o.company || {};
    const rows = [
      ["order.id", o.id],
      ["order.account", o.account],
      ["order.for", [company.name, company.court, company.registry_number].filter(Boolean).join(", ")],
      ["order.document", docName(o.document_type)],
      ["order.plan", planName(o.plan_id)],
      ["order.total", formatMoney(o.total, o.currency)],
      ["order.workflow", has("workflow." + o.workflow_status) ? t("workflow." + o.workflow_status) : o.workflow_status],
      ["order.createdAt", o.created_at ? formatTime(o.created_at) : ""],
      ["order.refunded", o.credits_refunded ? creditsText(o.credits_refunded) : ""],
      ["order.file", o.document ? t("order.fileSize", { kb: Math.max(1, Math.round(o.document.size / 1024)) }) : ""],
    ].filter(([, v]) => v);
    const dl = el("dl", { className: "facts order-facts" });
    for (const [key, value] of rows) {
      dl.append(el("div", {}, [el("dt", { text: t(key) }), el("dd", { className: "order-" + key.split(".")[1], text: value })]));
      if (key === "order.id") {
        dl.append(el("div", {}, [el("dt", { text: t("order.status") }), el("dd", { className: "order-status", "data-status": o.status }, [statusBadge(o.status)])]));
      }
    }
    return el("div", { className: "order-details", "data-order-id": o.id, "data-status": o.status }, [dl, step || nextStepNode(o), historyNode(o)]);
  }

  // nextStepNode shows the service's next step: its kind in words and its
  // sentence in the page's language, made from its code and params.
  function nextStepNode(o) {
    const step = o.next_step || {};
    const stepKind = has("nextStep." + step.kind) ? t("nextStep." + step.kind) : step.kind;
    const words = coded("step.", step);
    return el("p", { className: "next-step", "data-kind": step.kind || "", "data-code": step.code || "" }, [
      el("strong", { text: t("order.nextStep") + ": " + (stepKind || "") }),
      words.text ? el("span", { lang: words.lang, text: " " + words.text }) : null,
    ]);
  }

  // coded says a blocker, a next step or a reason in the page's language
  // from its code and params (turned into words by words, paramWords when
  // not given). An unknown code, or params without a value the sentence
  // needs, fall back to the service's sentence, which is English.
  function coded(prefix, item, words) {
    const fallback = { text: item.message || "", lang: "en" };
    if (!item.code || !has(prefix + item.code) || !item.params) {
      return fallback;
    }
    const vars = (words || paramWords)(item.params);
    const needed = [...t(prefix + item.code).matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    if (needed.some((name) => !(name in vars))) {
      return fallback;
    }
    return { text: t(prefix + item.code, vars), lang: state.lang };
  }

  // paramWords turns the params of a blocker or next step into the words
  // its sentence uses: names of documents and plans, money, credits.
  function paramWords(p) {
    const vars = {};
    const put = (name, value) => {
      if (value !== undefined && value !== null) {
        vars[name] = value;
      }
    };
    put("company", p.company_name);
    put("profile_id", p.profile_id);
    put("order", p.order_id);
    put("plan_id", p.plan_id);
    put("plan", p.plan_id === undefined ? undefined : planName(p.plan_id));
    put("document", p.document_type && docName(p.document_type));
    const documents = (p.document_types || []).map(docName).join(", ");
    put("documents", documents || t("none"));
    put("held", documents ? t("blocker.held", { documents }) : "");
    put("amount", p.amount === undefined ? undefined : formatMoney(p.amount, p.currency));
    put("credits", p.credits === undefined ? undefined : creditWords(p.credits));
    put("balance", p.balance === undefined ? undefined : creditWords(p.balance));
    // a person's words, quoted, never spliced into the sentence
    put("note", p.note ? t("note.quoted", { text: p.note }) + (/[.!?]$/.test(p.note) ? "" : ".") : "");
    put("refund", refundWords(p));
    return vars;
  }

  function creditWords(n) {
    return n === 1 ? t("credits.one") : t("credits.many", { n });
  }

  function refundWords(p) {
    if (p.refunded_credits) {
      return " " + t("refund.credits", { credits: creditWords(p.refunded_credits) });
    }
    if (p.refunded_amount) {
      return " " + t("refund.payment", { amount: formatMoney(p.refunded_amount, p.currency) });
    }
    return "";
  }

  function historyNode(o) {
    const history = o.history || [];
    if (history.length === 0) {
      return null;
    }
    const titleId = "history-" + o.id + "-" + Math.random().toString(36).slice(2, 8);
    const list = el("ol", { className: "timeline", "aria-labelledby": titleId });
    for (const h of history) {
      list.append(el("li", { className: "timeline-entry", "data-status": h.status, "data-actor": h.actor }, [
        el("time", { datetime: h.at, text: formatTime(h.at) }),
        el("span", { className: "timeline-what" }, [
          statusBadge(h.status),
          el("span", { className: "timeline-actor", text: " " + t("history.by", { actor: actorWords(h.actor) }) }),
        ]),
        historyNote(h),
      ]));
    }
    return el("div", { className: "history" }, [el("p", { id: titleId, className: "history-title", text: t("order.history") }), list]);
  }

  // historyNote says a history entry's note in the page's language from
  // its code and params; a note a person wrote stays as written.
  function historyNote(h) {
    if (!h.note) {
      return null;
    }
    const words = coded("history.", h.code ? { code: h.code, params: h.params, message: h.note } : { message: h.note });
    return el("span", { className: "timeline-note", lang: words.lang, "data-code": h.code || "", text: words.text.trim() });
  }

  function planName(id) {
    const p = Array.isArray(state.plans) ? state.plans.find((x) => x.id === id) : null;
    return p ? planWords(p) : id;
  }

  function renderOrderPanelTexts() {
    if (!state.order) {
      return;
    }
    fillPlanSelect();
    if (state.order.preview) {
      renderPreview(state.order.preview);
    }
  }

  // ---- the client's orders ----

  // loadOrders also learns the role of the signed-in account. The service
  // checks the role on every call and answers an operator on the client
  // list with 403 "forbidden" (its documented code, not a message text),
  // so the first list a page needs anyway decides which view to show:
  // no extra request for clients, no role field the API does not have, and
  // a role can never change for an account.
  async function loadOrders(more) {
    if (!state.session) {
      renderOrders();
      return;
    }
    if (state.role === "operator") {
      loadQueue(more);
      return;
    }
    setStatus("orders-status", t("orders.loading"));
    const cursor = more ? state.orders.cursor : null;
    const seq = ++state.ordersSeq;
    try {
      const data = await api("GET", "/documents/orders/?limit=20" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""), undefined, { auth: true });
      if (seq !== state.ordersSeq) {
        return; // a newer load (or a sign-out) owns the list
      }
      const items = data.orders || [];
      state.orders = { cursor: data.next_cursor || null, items: more ? state.orders.items.concat(items) : items };
      setRole("client");
      renderOrders();
    } catch (err) {
      if (!state.session || seq !== state.ordersSeq) {
        return;
      }
      if (err.code === "forbidden") {
        setRole("operator");
        loadQueue(false);
        return;
      }
      setStatus("orders-status", explain(err).text, "error");
    }
  }

  function setRole(role) {
    if (state.role === role) {
      return;
    }
    state.role = role;
    renderSession();
    if (role === "operator") {
      // Cards drawn before the role was known offer to order; take that
      // away. A client's cards stay as they are, and so does the focus.
      renderSearchResult();
      renderManyRows();
    }
  }

  function renderOrders() {
    const list = $("orders-list");
    $("orders-more").hidden = !(state.session && state.orders.cursor);
    if (!state.session) {
      list.replaceChildren();
      setStatus("orders-status", t("orders.signIn"));
      return;
    }
    const items = state.orders.items;
    if (items.length === 0) {
      list.replaceChildren();
      setStatus("orders-status", t("orders.none"));
      return;
    }
    setStatus("orders-status", items.length === 1 ? t("orders.count.one") : t("orders.count.many", { n: items.length }));
    list.replaceChildren(...items.map((o) => el("li", { className: "order-item", "data-order-id": o.id }, [orderDetails(o), clientActions(o)])));
  }

  // replaceOrder puts the answer of an action in place of the order it
  // changed, in the list it came from, and renders that list again.
  function replaceOrder(items, o) {
    const i = items.findIndex((x) => x.id === o.id);
    if (i >= 0) {
      items[i] = o;
    }
  }

  // focusOrder puts the focus back on the card of an order after its list
  // was drawn again, so that keyboard users stay where they were.
  function focusOrder(listId, id, selector) {
    for (const li of $(listId).children) {
      if (li.dataset.orderId === id) {
        const target = (selector && li.querySelector(selector)) || li;
        if (target === li) {
          li.tabIndex = -1;
        }
        target.focus();
        return;
      }
    }
  }

  // allows reports whether the service lists action among what the
  // signed-in account may do with the order now (allowed_actions): the
  // page offers exactly those and keeps no rule of the lifecycle itself.
  function allows(o, action) {
    return (o.allowed_actions || []).indexOf(action) >= 0;
  }

  function clientActions(o) {
    const box = el("div", { className: "actions order-actions" });
    const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
    if (allows(o, "cancel")) {
      box.append(confirmingButton(t("action.cancel"), t("action.cancelQuestion"), t("action.cancelYes"), t("action.cancelNo"), "cancel-order", async () => {
        const changed = await api("POST", "/documents/orders/" + encodeURIComponent(o.id) + "/cancel", {}, { auth: true });
        replaceOrder(state.orders.items, changed);
        renderOrders();
        loadAccount();
        focusOrder("orders-list", o.id);
        setStatus("orders-status", t("action.cancelled", { id: o.id }));
      }, message));
    }
    if (allows(o, "download")) {
      const b = el("button", { type: "button", className: "download-order primary", text: t("action.download") });
      b.addEventListener("click", () => guarded(b, message, () => downloadDocument(o, message)));
      box.append(b);
    }
    return actionGroup(o, box, message);
  }

  // actionGroup names the order the buttons act on, so that a screen
  // reader user who meets "Cancel order" in a long list knows which.
  function actionGroup(o, box, message) {
    if (!box.children.length) {
      return null;
    }
    return el("div", { role: "group", "aria-label": t("order.actionsFor", { id: o.id }) }, [box, message]);
  }

  // guarded runs an action with its button disabled and shows its error
  // (in words, with the service's own sentence) next to it.
  async function guarded(button, message, action) {
    button.disabled = true;
    message.replaceChildren();
    try {
      await action();
    } catch (err) {
      if (err.name !== "AbortError") {
        message.replaceChildren(errorNode(err));
      }
    } finally {
      button.disabled = false;
    }
  }

  // confirmingButton asks before an action that cannot be undone: the
  // first press shows the question and two labelled answers in the page
  // (no window.confirm, which blocks the page and cannot be styled).
  function confirmingButton(label, question, yes, no, className, action, message, extra) {
    const wrap = el("div", { className: "confirming" });
    const start = el("button", { type: "button", className, text: label });
    const yesButton = el("button", { type: "button", className: className + "-yes danger", text: yes });
    const noButton = el("button", { type: "button", className: className + "-no", text: no });
    const ask = el("div", { className: "confirm-box", role: "group", "aria-label": question, hidden: true }, [
      el("p", { className: "confirm-question", text: question }), extra || null, el("div", { className: "actions" }, [yesButton, noButton]),
    ]);
    start.addEventListener("click", () => {
      start.hidden = true;
      ask.hidden = false;
      yesButton.focus();
    });
    noButton.addEventListener("click", () => {
      ask.hidden = true;
      start.hidden = false;
      start.focus();
    });
    yesButton.addEventListener("click", () => guarded(yesButton, message, action));
    wrap.append(start, ask);
    return wrap;
  }

  // downloadDocument fetches the PDF with the session token (a plain link
  // cannot send the Authorization header) and hands it to the browser as
  // a file under the name the service gives it.
  async function downloadDocument(o, message) {
    message.replaceChildren(el("p", { className: "status", text: t("action.downloading") }));
    const resp = await send("GET", "/documents/orders/" + encodeURIComponent(o.id) + "/document", undefined, { auth: true, headers: { Accept: "application/pdf" } });
    const blob = await resp.blob();
    const url = URL.createObjectURL(blob);
    const name = fileNameOf(resp.headers.get("Content-Disposition")) || o.id + ".pdf";
    const link = el("a", { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    // The browser has taken the file once the click has been handled.
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    message.replaceChildren(el("p", { className: "status", text: t("action.downloaded", { name, size: blob.size }) }));
  }

  function fileNameOf(disposition) {
    const m = /filename="?([^";]+)"?/.exec(disposition || "");
    return m ? m[1] : "";
  }

  // ---- the operator's queue ----

  function fillQueueSelect() {
    const select = $("queue-status");
    select.replaceChildren(el("option", { value: "", text: t("queue.all") }),
      ...STATUSES.map((s) => el("option", { value: s, text: statusWords(s) })));
    select.value = state.queue.status;
  }

  async function loadQueue(more) {
    if (!state.session || state.role !== "operator") {
      return;
    }
    const status = $("queue-status").value;
    state.queue.status = status;
    const seq = ++state.queue.seq;
    setStatus("queue-status-text", t("orders.loading"));
    const cursor = more ? state.queue.cursor : null;
    let path = "/operator/orders/?limit=20";
    if (status) {
      path += "&status=" + encodeURIComponent(status);
    }
    if (cursor) {
      path += "&cursor=" + encodeURIComponent(cursor);
    }
    try {
      const data = await api("GET", path, undefined, { auth: true });
      if (seq !== state.queue.seq) {
        return; // the operator chose another status meanwhile
      }
      const items = data.orders || [];
      state.queue = { ...state.queue, status, cursor: data.next_cursor || null, items: more ? state.queue.items.concat(items) : items };
      renderQueue();
    } catch (err) {
      if (state.session && seq === state.queue.seq) {
        setStatus("queue-status-text", explain(err).text, "error");
      }
    }
  }

  function renderQueue() {
    const list = $("queue-list");
    $("queue-more").hidden = !(state.session && state.queue.cursor);
    if (!state.session || state.role !== "operator") {
      list.replaceChildren();
      return;
    }
    const items = state.queue.items;
    const status = state.queue.status ? statusWords(state.queue.status) : t("queue.all");
    setStatus("queue-status-text", items.length === 0 ? t("queue.none", { status }) : t("queue.count", { n: items.length, status }));
    list.replaceChildren(...items.map((o) => el("li", { className: "order-item", "data-order-id": o.id }, [orderDetails(o, operatorStepNode(o)), operatorActions(o)])));
  }

  // operatorStepNode says the operator's next step, from the first action
  // the service lists for the operator, in place of the client's next
  // step (the client pays, downloads; the operator confirms, delivers).
  function operatorStepNode(o) {
    const action = (o.allowed_actions || [])[0] || "none";
    const company = o.company || {};
    const words = t("queue.step." + action, {
      amount: formatMoney(o.total, o.currency), document: docName(o.document_type),
      company: company.name || "", status: statusWords(o.status),
    });
    return el("p", { className: "next-step operator-step", "data-kind": "operator", "data-action": action }, [
      el("strong", { text: t("queue.nextStep") + ":" }), el("span", { text: " " + words }),
    ]);
  }

  // operatorActions offers what the service lists for the operator
  // (allowed_actions): confirm payment, mark requested, deliver the PDF,
  // fail with a reason, cancel. The service checks every action again.
  function operatorActions(o) {
    const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
    const box = el("div", { className: "actions order-actions" });
    const path = "/operator/orders/" + encodeURIComponent(o.id) + "/";
    const done = (changed, words, selector) => {
      replaceOrder(state.queue.items, changed);
      renderQueue();
      setStatus("queue-status-text", words);
      focusOrder("queue-list", o.id, selector);
    };
    if (allows(o, "pay")) {
      box.append(actionButton(t("queue.pay"), "pay-order", message, async () =>
        done(await api("POST", path + "pay", {}, { auth: true }), t("queue.paid", { id: o.id }), ".request-order")));
    }
    if (allows(o, "request")) {
      box.append(actionButton(t("queue.request"), "request-order", message, async () =>
        done(await api("POST", path + "request", {}, { auth: true }), t("queue.requested", { id: o.id }), ".deliver-file")));
    }
    if (allows(o, "deliver")) {
      box.append(deliverForm(o, path, message, done));
    }
    if (allows(o, "fail")) {
      box.append(failForm(o, path, message, done));
    }
    if (allows(o, "cancel")) {
      const noteId = "cancel-note-" + o.id;
      const note = el("input", { id: noteId, type: "text", className: "cancel-note", maxlength: "1000", autocomplete: "off" });
      const noteField = el("div", { className: "field" }, [el("label", { for: noteId, text: t("queue.cancelNote") }), note]);
      box.append(confirmingButton(t("action.cancel"), t("queue.cancelQuestion"), t("action.cancelYes"), t("action.cancelNo"), "cancel-order", async () =>
        done(await api("POST", path + "cancel", note.value.trim() ? { note: note.value.trim() } : {}, { auth: true }), t("action.cancelled", { id: o.id })), message, noteField));
    }
    return actionGroup(o, box, message);
  }

  function actionButton(label, className, message, action) {
    const b = el("button", { type: "button", className: className + " primary", text: label });
    b.addEventListener("click", () => guarded(b, message, action));
    return b;
  }

  // The service takes at most 20 MiB; a larger file is refused here
  // before it is sent.
  const MAX_PDF_BYTES = 20 * 1024 * 1024;

  function deliverForm(o, path, message, done) {
    const inputId = "deliver-" + o.id;
    const input = el("input", { id: inputId, type: "file", className: "deliver-file", accept: "application/pdf,.pdf" });
    const button = el("button", { type: "button", className: "deliver-order primary", text: t("queue.deliver") });
    button.addEventListener("click", () => guarded(button, message, async () => {
      const file = input.files && input.files[0];
      if (!file) {
        throw new ApiError("no_file", "");
      }
      if (file.size > MAX_PDF_BYTES) {
        throw new ApiError("payload_too_large", "");
      }
      const changed = await api("PUT", path + "document", undefined, { auth: true, raw: file, contentType: "application/pdf" });
      done(changed, t("queue.delivered", { id: o.id }));
    }));
    return el("div", { className: "field deliver" }, [el("label", { for: inputId, text: t("queue.file") }), input, button]);
  }

  function failForm(o, path, message, done) {
    const inputId = "fail-" + o.id;
    const reason = el("input", { id: inputId, type: "text", className: "fail-reason", maxlength: "1000", autocomplete: "off" });
    const button = el("button", { type: "button", className: "fail-order danger", text: t("queue.fail") });
    button.addEventListener("click", () => guarded(button, message, async () => {
      if (!reason.value.trim()) {
        reason.setAttribute("aria-invalid", "true");
        reason.focus();
        throw new ApiError("no_reason", "");
      }
      reason.removeAttribute("aria-invalid");
      done(await api("POST", path + "fail", { reason: reason.value.trim() }, { auth: true }), t("queue.failed", { id: o.id }));
    }));
    return el("div", { className: "field fail" }, [el("label", { for: inputId, text: t("queue.reason") }), reason, button]);
  }

  // ---- many companies ----
  //
  // A table of clues (CSV or TSV with a header line) resolves through the
  // batch endpoint, MANY_CHUNK rows a request, one request at a time; a
  // 429 is waited out as Retry-After says. The download has the columns of
  // "companydocs resolve": the input's cells, then RESULT_COLUMNS.

  const MANY_CHUNK = 100;
  const MANY_MAX_ROWS = 5000; // more rows: the command line (companydocs resolve)
  const MANY_CHOICES = 5; // candidates offered when a row is reviewed
  const MANY_PROPS = ["city", "postal_code", "address", "court", "register_number", "lei", "officer", "legal_form"];
  const RESULT_COLUMNS = ["profile_id", "name", "court", "registry_number", "confidence", "confidence_label", "ordering_eligible", "reasons"];
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

  // detectComma picks the delimiter of a header line as the command line
  // does: the most frequent of comma, semicolon and tab outside quotes.
  function detectComma(line) {
    const counts = { ",": 0, ";": 0, "\t": 0 };
    let quoted = false;
    for (const c of line) {
      if (c === '"') {
        quoted = !quoted;
      } else if (!quoted && c in counts) {
        counts[c]++;
      }
    }
    let best = ",";
    for (const c of [";", "\t"]) {
      if (counts[c] > counts[best]) {
        best = c;
      }
    }
    return best;
  }

  // parseTable reads CSV text as Go's encoding/csv does with lazy quotes:
  // "\r\n" is "\n", an empty line is skipped, "" in a quoted cell is ".
  function parseTable(text, comma) {
    const rows = [];
    let row = [];
    let cell = "";
    let quoted = false;
    let started = false; // the line has a character
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') {
          cell += '"';
          i++;
        } else if (c === '"' && (i + 1 === text.length || text[i + 1] === comma || text[i + 1] === "\n")) {
          quoted = false;
        } else {
          cell += c;
        }
      } else if (c === '"' && cell === "") {
        quoted = true;
        started = true;
      } else if (c === comma) {
        row.push(cell);
        cell = "";
        started = true;
      } else if (c === "\n") {
        if (started || cell !== "") {
          row.push(cell);
          rows.push(row);
        }
        row = [];
        cell = "";
        started = false;
      } else {
        cell += c;
        started = true;
      }
    }
    if (started || cell !== "") {
      row.push(cell);
      rows.push(row);
    }
    return rows;
  }

  // readTable turns the text of a file or a paste into a header and rows
  // as wide as the header.
  function readTable(text) {
    const bom = text.startsWith("\ufeff");
    text = (bom ? text.slice(1) : text).replace(/\r\n/g, "\n");
    const comma = detectComma(text.split("\n", 1)[0]);
    const all = parseTable(text, comma);
    if (all.length === 0) {
      return null;
    }
    const header = all[0].map((h) => h.trim());
    const rows = all.slice(1).map((r) => {
      r = r.slice();
      while (r.length > header.length && r[r.length - 1].trim() === "") {
        r.pop();
      }
      while (r.length < header.length) {
        r.push("");
      }
      return r;
    });
    return { header, rows, comma, bom };
  }

  async function onManyFile() {
    const file = $("many-file").files[0];
    if (!file) {
      return;
    }
    $("many-text").value = "";
    state.many.fileName = file.name;
    // file.text() would drop a BOM; the download keeps the upload's.
    loadTable(new TextDecoder("utf-8", { ignoreBOM: true }).decode(await file.arrayBuffer()));
  }

  function onManyPaste() {
    $("many-file").value = "";
    state.many.fileName = "";
    loadTable($("many-text").value);
  }

  function loadTable(text) {
    stopMany();
    const m = state.many;
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
    const m = state.many;
    const selects = document.querySelectorAll("#many-columns select");
    for (const select of selects) {
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

  async function startMany(event) {
    event.preventDefault();
    const m = state.many;
    if (!m.table || m.running) {
      return;
    }
    const controller = new AbortController();
    Object.assign(m, { outcomes: [], choices: [], done: 0, reviewing: null, error: null, running: true, controller });
    m.status = null;
    renderMany();
    try {
      while (m.done < m.table.rows.length) {
        const chunk = m.table.rows.slice(m.done, m.done + MANY_CHUNK);
        m.outcomes.push(...(await resolveRows(chunk.map(manyQuery), controller.signal)));
        m.done += chunk.length;
        m.status = null;
        renderMany();
      }
      m.status = { key: "many.done", vars: { n: m.done, check: m.outcomes.filter(needsReview).length } };
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

  // resolveRows resolves the queries of a chunk. A search the server did
  // not answer within the batch's time (service_unavailable) is sent again,
  // up to MANY_RETRIES times, waiting longer each time.
  const MANY_RETRIES = 5;
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
        state.many.status = { key: "many.waiting", vars: { s } };
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
    if (state.many.controller) {
      state.many.controller.abort();
    }
  }

  // needsReview: a row whose best candidate is not exact and was not
  // reviewed yet.
  function needsReview(outcome, i) {
    return outcome && !outcome.error && outcome.candidates.length > 0 && outcome.candidates[0].confidence_label !== "exact" &&
      (i === undefined || state.many.choices[i] === undefined);
  }

  // chosenOf is the candidate a row stands for: the reviewer's choice
  // (null for "none of these"), else the best candidate.
  function chosenOf(i) {
    const outcome = state.many.outcomes[i];
    const choice = state.many.choices[i];
    if (!outcome || outcome.error) {
      return null;
    }
    if (choice !== undefined) {
      return choice < 0 ? null : outcome.candidates[choice];
    }
    return outcome.candidates[0] || null;
  }

  function renderMany() {
    const m = state.many;
    setStatus("many-read", m.read ? t(m.read.key, m.read.vars) : "", m.read && m.read.key !== "many.read.one" && m.read.key !== "many.read.many" ? "error" : "");
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
    const m = state.many;
    const total = m.table ? m.table.rows.length : 0;
    $("many-progress").hidden = !m.running && (m.done === 0 || m.done === total);
    $("many-bar").max = Math.max(total, 1);
    $("many-bar").value = m.done;
    $("many-progress-text").textContent = t("many.progress", { done: m.done, n: total });
    if (!m.error) {
      setStatus("many-status", m.status ? t(m.status.key, m.status.vars) : m.running ? t("many.running") : "");
    }
  }

  function renderManyRows() {
    const m = state.many;
    const body = $("many-rows");
    const focused = document.activeElement && body.contains(document.activeElement) ? document.activeElement.dataset.focusKey : null;
    body.replaceChildren();
    m.outcomes.forEach((outcome, i) => {
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

  function manyRow(i, outcome) {
    const row = state.many.table.rows[i];
    const clue = row[Number($("many-col-query").value)] || "";
    const tr = el("tr", { "data-row": String(i) }, [el("td", { text: String(i + 1) }), el("td", { className: "clue", text: clue })]);
    if (outcome.error) {
      tr.append(el("td", { className: "row-error", "data-code": outcome.error.code, text: explain(outcome.error).text }), el("td"), el("td"));
      return tr;
    }
    const chosen = chosenOf(i);
    const reviewed = state.many.choices[i] !== undefined;
    tr.append(el("td", {}, chosen ? [el("span", { className: "cand-name", text: chosen.name }), el("br"),
      el("span", { className: "cand-facts", text: [chosen.court, chosen.registry_number, chosen.city].filter(Boolean).join(", ") })]
      : [t(reviewed ? "many.noneChosen" : "many.noCandidate")]));
    const label = chosen ? chosen.confidence_label : "";
    tr.append(el("td", {}, [
      label ? el("span", { className: "badge badge-" + label, "data-label": label, text: t("label." + label) }) : null,
      reviewed ? el("span", { className: "reviewed", "data-reviewed": "true", text: " " + t("many.reviewed") }) : null,
    ]));
    const actions = el("div", { className: "row-buttons" });
    if (outcome.candidates.length > 0 && (label !== "exact" || reviewed)) {
      const b = el("button", { type: "button", className: "review-button", "data-focus-key": "review-" + i,
        "aria-expanded": String(state.many.reviewing === i), text: t(reviewed ? "many.reviewAgain" : "many.review") });
      b.addEventListener("click", () => {
        state.many.reviewing = state.many.reviewing === i ? null : i;
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
    tr.append(el("td", { className: "row-actions" }, [actions]));
    return tr;
  }

  // reviewRow lets the reader pick the right candidate of a row, or none.
  function reviewRow(i, outcome) {
    const name = "review-" + i;
    const current = state.many.choices[i] === undefined ? 0 : state.many.choices[i];
    const options = outcome.candidates.slice(0, MANY_CHOICES).map((c, k) => reviewOption(name, String(k), k === current, [
      el("span", { className: "cand-name", text: c.name }), " ",
      el("span", { className: "badge badge-" + c.confidence_label, text: t("label." + c.confidence_label) }), el("br"),
      el("span", { className: "cand-facts", text: [c.court, c.registry_number, c.city, t("confidence.value", { pct: Math.round(c.confidence * 100) })].filter(Boolean).join(", ") }),
    ]));
    options.push(reviewOption(name, "-1", current < 0, [t("many.none")]));
    const save = el("button", { type: "button", className: "primary review-save", "data-focus-key": "save-" + i, text: t("many.saveChoice") });
    save.addEventListener("click", () => {
      const picked = $("many-rows").querySelector('input[name="' + name + '"]:checked');
      state.many.choices[i] = Number(picked.value);
      state.many.reviewing = null;
      state.many.status = { key: "many.done", vars: { n: state.many.done, check: state.many.outcomes.filter(needsReview).length } };
      renderMany();
      const again = $("many-rows").querySelector('[data-focus-key="review-' + i + '"]');
      if (again) {
        again.focus();
      }
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

  // ---- the download: the columns of companydocs resolve ----

  function resultCells(i) {
    const outcome = state.many.outcomes[i];
    if (outcome.error) {
      return ["", "", "", "", "", "", "", oneLine(outcome.error.code + ": " + outcome.error.message)];
    }
    const c = chosenOf(i);
    if (!c) {
      return ["", "", "", "", "", "", "", ""];
    }
    return [c.profile_id, c.name, c.court, c.registry_number, String(c.confidence), c.confidence_label, String(c.ordering_eligible),
      oneLine((c.confidence_reasons || []).join(" | "))];
  }

  function oneLine(s) {
    return s.split(/[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/).filter(Boolean).join(" ");
  }

  // csvCell quotes a cell as Go's encoding/csv writer does.
  function csvCell(s, comma) {
    const quote = s !== "" && (s === "\\." || s.includes(comma) || /["\r\n]/.test(s) ||
      /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/.test(s));
    return quote ? '"' + s.replace(/"/g, '""') + '"' : s;
  }

  function manyCSV() {
    const m = state.many;
    const line = (cells) => cells.map((c) => csvCell(c, m.table.comma)).join(m.table.comma) + "\n";
    let out = (m.table.bom ? "\ufeff" : "") + line(m.table.header.concat(RESULT_COLUMNS));
    m.outcomes.forEach((_, i) => {
      out += line(m.table.rows[i].concat(resultCells(i)));
    });
    return out;
  }

  function downloadMany() {
    const blob = new Blob([manyCSV()], { type: "text/csv;charset=utf-8" });
    const url = URL.createObjectURL(blob);
    const base = (state.many.fileName || "companies").replace(/\.(csv|tsv|txt)$/i, "");
    const link = el("a", { href: url, download: base + "-resolved.csv", hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }

  // ---- start ----

  function start() {
    state.lang = pickLanguage();
    state.session = loadSession();
    $("lang-switch").addEventListener("click", switchLanguage);
    $("signin-form").addEventListener("submit", signIn);
    $("signout-button").addEventListener("click", signOut);
    $("search-form").addEventListener("submit", onSearchSubmit);
    $("query").addEventListener("input", onQueryInput);
    $("query").addEventListener("keydown", onQueryKey);
    window.addEventListener("resize", fitQuery);
    $("opt-deep").addEventListener("change", onOptionChange);
    $("opt-discover").addEventListener("change", onOptionChange);
    document.querySelector(".examples").addEventListener("click", onExample);
    $("order-plan").addEventListener("change", onPlanChange);
    $("order-document").addEventListener("change", onChoiceChange);
    $("order-form").addEventListener("submit", placeOrder);
    $("order-back").addEventListener("click", () => closeOrderPanel(true));
    $("order-panel").addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        closeOrderPanel(true);
      }
    });
    $("orders-refresh").addEventListener("click", () => loadOrders(false));
    $("watches-refresh").addEventListener("click", () => loadWatches());
    $("orders-more").addEventListener("click", () => loadOrders(true));
    $("queue-status").addEventListener("change", () => loadQueue(false));
    $("queue-refresh").addEventListener("click", () => loadQueue(false));
    $("queue-more").addEventListener("click", () => loadQueue(true));
    $("many-file").addEventListener("change", onManyFile);
    $("many-text").addEventListener("input", onManyPaste);
    $("many-form").addEventListener("submit", startMany);
    $("many-stop").addEventListener("click", stopMany);
    $("many-download").addEventListener("click", downloadMany);
    applyLanguage();
    fitQuery(); // a clue the browser kept from before a reload
    loadPlans().then(() => {
      if (state.order) {
        fillPlanSelect();
        preview();
      }
    });
    if (state.session) {
      loadOrders(false);
      loadAccount();
      loadWatches();
    }
    window.addEventListener("hashchange", showProfile);
    showProfile();
    document.body.dataset.ready = "true";
  }

  window.companydocsTextsReady.then(start);
})();
