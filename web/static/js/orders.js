// The client's orders: the list with each order's status, history and
// next step, and what the service allows now (cancel, download).

import { $, api, el, explain, guarded, onRedraw, saveFile, send, setStatus, state, t } from "./core.js";
import { loadAccount, setRole } from "./account.js";
import { namePlansAgain, orderDetails, saySentencesAgain } from "./order.js";
import { loadQueue } from "./queue.js";

const orders = { cursor: null, items: [], seq: 0 }; // seq: the newest request; older answers are dropped

// loadOrders also learns the role of the signed-in account. The service
// checks the role on every call and answers an operator on the client
// list with 403 "forbidden" (its documented code, not a message text),
// so the first list a page needs anyway decides which view to show:
// no extra request for clients, no role field the API does not have, and
// a role can never change for an account.
export async function loadOrders(more) {
  if (!state.session) {
    renderOrders();
    return;
  }
  if (state.role === "operator") {
    loadQueue(more);
    return;
  }
  setStatus("orders-status", t("orders.loading"));
  const cursor = more ? orders.cursor : null;
  const seq = ++orders.seq;
  try {
    const data = await api("GET", "/documents/orders/?limit=20" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""), undefined, { auth: true });
    if (seq !== orders.seq) {
      return; // a newer load (or a sign-out) owns the list
    }
    const items = (data.orders || []).map((o) => Object.defineProperty(o, "_lang", { value: data._lang }));
    orders.cursor = data.next_cursor || null;
    orders.items = more ? orders.items.concat(items) : items;
    setRole("client");
    renderOrders();
  } catch (err) {
    if (!state.session || seq !== orders.seq) {
      return;
    }
    if (err.code === "forbidden") {
      setRole("operator"); // which loads the queue
      return;
    }
    setStatus("orders-status", explain(err).text, "error");
  }
}

function renderOrders() {
  const list = $("orders-list");
  $("orders-more").hidden = !(state.session && orders.cursor);
  if (!state.session) {
    list.replaceChildren();
    setStatus("orders-status", t("orders.signIn"));
    return;
  }
  const items = orders.items;
  if (items.length === 0) {
    list.replaceChildren();
    setStatus("orders-status", t("orders.none"));
    return;
  }
  setStatus("orders-status", items.length === 1 ? t("orders.count.one") : t("orders.count.many", { n: items.length }));
  list.replaceChildren(...items.map((o) => el("li", { className: "order-item", "data-order-id": o.id }, [orderDetails(o), clientActions(o)])));
}

// askAgain reads the orders shown once more, each by its id, so that the
// service says their sentences in the page's new language; the list keeps
// its orders (an operator's acted-on ones, older pages) as they are shown.
export async function askAgain(items, path) {
  const again = await Promise.all(items.map((o) => api("GET", path + encodeURIComponent(o.id) + "/", undefined, { auth: true }).catch(() => o)));
  return again;
}

// replaceOrder puts the answer of an action in place of the order it
// changed, in the list it came from.
export function replaceOrder(items, o) {
  const i = items.findIndex((x) => x.id === o.id);
  if (i >= 0) {
    items[i] = o;
  }
}

// focusOrder puts the focus back on the card of an order after its list
// was drawn again, so that keyboard users stay where they were.
export function focusOrder(listId, id, selector) {
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
export function allows(o, action) {
  return (o.allowed_actions || []).indexOf(action) >= 0;
}

function clientActions(o) {
  const box = el("div", { className: "actions order-actions" });
  const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
  if (allows(o, "cancel")) {
    box.append(confirmingButton(t("action.cancel"), t("action.cancelQuestion"), t("action.cancelYes"), t("action.cancelNo"), "cancel-order", async () => {
      const changed = await api("POST", "/documents/orders/" + encodeURIComponent(o.id) + "/cancel", {}, { auth: true });
      replaceOrder(orders.items, changed);
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
export function actionGroup(o, box, message) {
  if (!box.children.length) {
    return null;
  }
  return el("div", { role: "group", "aria-label": t("order.actionsFor", { id: o.id }) }, [box, message]);
}

// confirmingButton asks before an action that cannot be undone: the
// first press shows the question and two labelled answers in the page
// (no window.confirm, which blocks the page and cannot be styled).
export function confirmingButton(label, question, yes, no, className, action, message, extra) {
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
  const m = /filename="?([^";]+)"?/.exec(resp.headers.get("Content-Disposition") || "");
  const name = m ? m[1] : o.id + ".pdf";
  saveFile(blob, name);
  message.replaceChildren(el("p", { className: "status", text: t("action.downloaded", { name, size: blob.size }) }));
}

export function startOrders() {
  $("orders-refresh").addEventListener("click", () => loadOrders(false));
  $("orders-more").addEventListener("click", () => loadOrders(true));
  onRedraw("session", () => {
    orders.seq++;
    orders.cursor = null;
    orders.items = [];
    renderOrders();
    loadOrders(false);
  });
  onRedraw("language", async () => {
    renderOrders(); // the page's labels at once
    if (state.session && state.role !== "operator" && orders.items.length > 0) {
      const seq = orders.seq;
      const again = await askAgain(orders.items, "/documents/orders/");
      if (seq === orders.seq) {
        orders.items = again;
        saySentencesAgain("orders-list", again);
      }
    }
  });
  onRedraw("plans", () => namePlansAgain("orders-list"));
}
