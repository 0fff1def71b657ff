// The companydocs page: search, many companies, sign in, preview, order,
// orders with their timeline, watches; for operator accounts, the order
// queue. This module picks the language and starts the parts.

import { textsReady } from "../i18n.js";
import { $, loadLimits, loadPlans, redraw, safeStorage, state, t } from "./core.js";
import { loadAccount, renderSession, startAccount } from "./account.js";
import { startMany } from "./many.js";
import { startOrder } from "./order.js";
import { loadOrders, startOrders } from "./orders.js";
import { startPayment } from "./payment.js";
import { startQueue } from "./queue.js";
import { startSearch } from "./search.js";
import { loadWatches, startWatches } from "./watches.js";

const LANG_KEY = "companydocs.lang";

function pickLanguage() {
  const saved = safeStorage(localStorage, "get", LANG_KEY);
  if (saved === "de" || saved === "en") {
    return saved;
  }
  const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
  return String(langs[0]).toLowerCase().startsWith("de") ? "de" : "en";
}

// applyLanguage puts the page's own labels in its language.
function applyLanguage() {
  document.documentElement.lang = state.lang;
  document.title = t("page.title");
  for (const node of document.querySelectorAll("[data-i18n]")) {
    node.textContent = t(node.dataset.i18n);
  }
  for (const node of document.querySelectorAll("[data-i18n-aria-label]")) {
    node.setAttribute("aria-label", t(node.dataset.i18nAriaLabel));
  }
  $("lang-switch").lang = state.lang === "de" ? "en" : "de";
}

// switchLanguage shows the page in the other language: its labels at
// once; the service's sentences as it answers again in that language.
async function switchLanguage() {
  state.lang = state.lang === "de" ? "en" : "de";
  safeStorage(localStorage, "set", LANG_KEY, state.lang);
  applyLanguage();
  redraw("language");
  await loadPlans();
  redraw("plans");
}

async function start() {
  await textsReady;
  state.lang = pickLanguage();
  startAccount();
  startSearch();
  startOrder();
  startOrders();
  startPayment();
  startWatches();
  startQueue();
  startMany();
  $("lang-switch").addEventListener("click", switchLanguage);
  applyLanguage();
  redraw("language");
  await Promise.all([loadLimits(), loadPlans()]);
  redraw("plans");
  renderSession();
  if (state.session) {
    loadOrders(false);
    loadAccount();
    loadWatches();
  }
  document.body.dataset.ready = "true";
}

start();
