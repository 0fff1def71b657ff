// The core of the page: its state, its texts, DOM helpers and the calls
// to the JSON API of the same origin. Server data goes on the page with
// textContent, never as HTML. Every sentence the service says (reasons,
// notes, blockers, next steps, history, changes) comes said in the page's
// language in the service's answers (Accept-Language); the page builds
// none of them and keeps only its own labels (i18n.js).

import { texts } from "../i18n.js";

export const API = "/api/v1";

export const state = {
  lang: "en",
  session: null,
  limits: null, // GET /limits: what forms check before they send
  plans: null, // array, or an error object when the plans could not be read
  role: null, // "client" or "operator", learnt from the first orders list
  credits: null, // the account's balance, from GET /account/; null until read
  watchCount: null, // the account's watches and their limit, from GET /account/
  returnTo: null, // profile id of the card that asked to sign in
};

export const $ = (id) => document.getElementById(id);

export function t(key, vars) {
  let s = (texts[state.lang] && texts[state.lang][key]) || texts.en[key] || key;
  if (vars) {
    s = s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
  }
  return s;
}

export function has(key) {
  return Boolean(texts.en[key]);
}

// Parts of the page register what they redraw when the language, the
// session or the role changes; the core calls them without knowing them.
const redraws = { language: [], session: [], role: [], account: [], watches: [], plans: [] };

export function onRedraw(kind, fn) {
  redraws[kind].push(fn);
}

export function redraw(kind) {
  for (const fn of redraws[kind]) {
    fn();
  }
}

// Parts of the page register how they read their data again ("orders",
// "queue", "account"); a part that changed something asks the core to
// reload another's data instead of importing that part, so that no two
// parts import each other.
const reloads = {};

export function onReload(kind, fn) {
  reloads[kind] = fn;
}

export function reload(kind, ...args) {
  const fn = reloads[kind];
  if (!fn) {
    // Every part registers when main.js starts it, before any change.
    throw new Error("no part of the page reloads " + kind);
  }
  return fn(...args);
}

export function safeStorage(store, op, key, value) {
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

export function el(tag, attrs, children) {
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

export function setStatus(id, text, kind) {
  const node = $(id);
  node.textContent = text || "";
  node.classList.toggle("error", kind === "error");
}

export function locale() {
  return state.lang === "de" ? "de-DE" : "en-GB";
}

export function formatTime(iso) {
  const d = new Date(iso);
  if (isNaN(d)) {
    return iso;
  }
  return d.toLocaleString(locale(), { dateStyle: "medium", timeStyle: "short" });
}

export function formatMoney(amount, currency) {
  const n = Number(amount);
  if (!isFinite(n) || !currency) {
    return [amount, currency].filter(Boolean).join(" ");
  }
  try {
    return new Intl.NumberFormat(locale(), { style: "currency", currency }).format(n);
  } catch (e) {
    return amount + " " + currency;
  }
}

export function docName(type) {
  return has("doc." + type) ? t("doc." + type) : type;
}

export function newIdempotencyKey() {
  if (window.crypto && crypto.randomUUID) {
    return "web-" + crypto.randomUUID();
  }
  return "web-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
}

// saveFile hands a Blob to the browser as a download named name.
export function saveFile(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the file once the click has been handled.
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// ---- API ----

// ApiError carries the service's error code and sentence, the existing
// order of a duplicate_order, and Retry-After for rate_limited.
export class ApiError extends Error {
  constructor(code, message, extra) {
    super(message);
    this.code = code;
    Object.assign(this, extra || {});
  }
}

let onUnauthorized = () => {};

// whenUnauthorized sets what happens when the service ends the session.
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

// send makes one request to the API and returns the response once it is
// a success; an error answer becomes an ApiError with the service's code
// and sentence. opts.raw sends a Blob or File as it is (the operator's
// PDF upload), with opts.contentType.
export async function send(method, path, body, opts) {
  opts = opts || {};
  // The service says its sentences in the page's language.
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
      method, headers, body: payload, signal: opts.signal,
      credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer",
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
    onUnauthorized();
  }
  return apiErr;
}

// api is send for a JSON answer; the answer remembers the language the
// service said it in (_lang), for the lang attribute of its sentences.
export async function api(method, path, body, opts) {
  const resp = await send(method, path, body, opts);
  if (resp.status === 204) {
    return null;
  }
  try {
    const data = await resp.json();
    if (data && typeof data === "object") {
      Object.defineProperty(data, "_lang", { value: resp.headers.get("Content-Language") || state.lang });
    }
    return data;
  } catch (e) {
    if (e.name === "AbortError") {
      throw e;
    }
    return null;
  }
}

// explain turns an API error into plain words, in the page's language,
// followed by the service's own sentence when it adds something.
export function explain(err) {
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

export function errorNode(err) {
  const { text, detail } = explain(err);
  return el("div", { className: "message error", "data-code": err.code }, [
    el("p", { text }),
    detail ? el("p", { className: "detail" }, [t("error.details") + " ", el("span", { lang: err.lang, text: detail })]) : null,
  ]);
}

// guarded runs an action with its button disabled and shows its error
// (in words, with the service's own sentence) next to it.
export async function guarded(button, message, action) {
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

// loadLimits reads what the service accepts (query, note and file
// sizes), so that forms check it before they send.
export async function loadLimits() {
  try {
    state.limits = await api("GET", "/limits");
  } catch (e) {
    state.limits = null; // the service checks every request anyway
  }
  if (state.limits) {
    $("query").maxLength = state.limits.query_chars;
  }
}

// loadPlans reads the plans, labelled in the page's language.
export async function loadPlans() {
  try {
    const data = await api("GET", "/documents/plans/");
    state.plans = data.plans || [];
  } catch (err) {
    state.plans = err;
  }
}

export function planName(id) {
  const p = Array.isArray(state.plans) ? state.plans.find((x) => x.id === id) : null;
  return p ? p.label || p.name : id;
}
