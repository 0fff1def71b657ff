// Watched companies: watch an orderable company from its card, the list
// of watches with the last change the service saw (said by the service in
// the page's language), order a fresh printout, stop watching.

import { $, api, el, explain, formatTime, guarded, onRedraw, redraw, reload, setStatus, state, t } from "./core.js";
import { openOrderPanel } from "./order.js";

const watches = { items: [], lang: "en", seq: 0 };

// watchAction offers to watch an orderable company: signed in as a
// client only (the service lets only clients watch). A company the
// account watches already says so instead.
export function watchAction(c) {
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
    reload("account");
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
  return watches.items.find((w) => !w.ended && w.company_profile_id === profileId) || null;
}

export async function loadWatches() {
  if (!state.session || state.role === "operator") {
    return;
  }
  const seq = ++watches.seq;
  try {
    const data = await api("GET", "/watches/", undefined, { auth: true });
    if (seq === watches.seq) {
      watches.items = data.watches || [];
      watches.lang = data._lang;
      renderWatches();
      redraw("watches");
    }
  } catch (err) {
    if (seq === watches.seq && state.session) {
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
  const items = watches.items;
  let words = items.length ? t("watches.count", { n: items.filter((w) => !w.ended).length }) : t("watches.none");
  const count = state.watchCount;
  if (count) {
    words += " " + (count.limit > 0 ? t("watches.limit", { limit: count.limit }) : t("watches.noLimit"));
  }
  setStatus("watches-status", words);
  list.replaceChildren(...items.map(watchItem));
}

function watchItem(w) {
  const c = w.company || {};
  const box = el("div", { className: "actions watch-actions" });
  const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
  if (w.last_change && !w.ended) {
    const b = el("button", { type: "button", className: "order-fresh primary", text: t("watch.orderFresh") });
    b.addEventListener("click", () => openOrderPanel(candidateOfWatch(w), b));
    box.append(b);
  }
  const stop = el("button", { type: "button", className: "unwatch", text: t("watch.stop") });
  stop.addEventListener("click", () => guarded(stop, message, async () => {
    await api("DELETE", "/watches/" + encodeURIComponent(w.id), undefined, { auth: true });
    await loadWatches();
    reload("account");
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
  const lines = (change.changes || []).map((f) => el("li", { "data-field": f.field, lang: watches.lang, text: f.message || f.field }));
  return el("div", { className: "watch-change" }, [
    el("p", { className: "watch-change-time", text: t(w.ended ? "watch.ended" : "watch.changed", { time: formatTime(change.at) }) }),
    el("ul", { className: "watch-change-list" }, lines),
  ]);
}

export function startWatches() {
  $("watches-refresh").addEventListener("click", () => loadWatches());
  onRedraw("language", () => {
    renderWatches();
    loadWatches(); // the service says the changes in the new language
  });
  onRedraw("session", () => {
    watches.seq++;
    watches.items = [];
    state.watchCount = null;
    renderWatches();
    loadWatches();
  });
  onRedraw("account", renderWatches);
  onRedraw("role", loadWatches);
}
