// The account: sign in with an API key (exchanged for a session whose
// token lives in sessionStorage, gone when the tab closes, never in a
// cookie or the URL), sign out, the balance, and the account's role.

import { $, api, explain, formatTime, onRedraw, onReload, redraw, safeStorage, setStatus, state, t, whenUnauthorized } from "./core.js";

const SESSION_KEY = "companydocs.session";

export function loadSession() {
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
    redraw("session");
    loadAccount();
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
  if (state.session) {
    try {
      await api("DELETE", "/auth/sessions/current", undefined, { auth: true });
    } catch (e) {
      // The session ends on this page whatever the server said.
    }
  }
  endSession(t("account.signedOut"));
  $("api-key").focus();
}

export function endSession(message) {
  state.session = null;
  safeStorage(sessionStorage, "remove", SESSION_KEY);
  state.role = null;
  state.credits = null;
  renderSession();
  redraw("session");
  setStatus("account-status", message || "");
}

export function renderSession() {
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

// loadAccount reads the account's balance and watch count, after sign-in
// and after each order or watch made or ended; the page shows them as the
// server last said them and computes none.
export async function loadAccount() {
  const session = state.session;
  try {
    const a = await api("GET", "/account/", undefined, { auth: true });
    if (state.session === session) {
      state.credits = a.credits;
      state.watchCount = a.watches || null;
      renderSession();
      redraw("account");
    }
  } catch (e) {
    // A 401 has ended the session already; after any other failure the
    // line keeps the balance last read, or stays hidden.
  }
}

// setRole learns the account's role (see orders.js loadOrders): an
// operator sees the queue instead of orders and watches.
export function setRole(role) {
  if (state.role === role) {
    return;
  }
  state.role = role;
  renderSession();
  redraw("role");
}

export function startAccount() {
  onReload("account", loadAccount);
  state.session = loadSession();
  whenUnauthorized(() => endSession(t("account.expired")));
  $("signin-form").addEventListener("submit", signIn);
  $("signout-button").addEventListener("click", signOut);
  onRedraw("language", renderSession);
}
