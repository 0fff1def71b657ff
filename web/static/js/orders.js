// The client's orders: the list with each order's status, history and
// next step, and what the service allows now (cancel, download).

import { $, api, el, explain, guarded, onRedraw, onReload, reload, saveFile, send, setStatus, state, t } from "./core.js";
import { setRole } from "./account.js";
import { actionGroup, allows, askAgain, confirmingButton, focusOrder, namePlansAgain, orderDetails, replaceOrder, saySentencesAgain } from "./orderviews.js";

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
    reload("queue", more);
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

function clientActions(o) {
  const box = el("div", { className: "actions order-actions" });
  const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
  if (allows(o, "cancel")) {
    box.append(confirmingButton(t("action.cancel"), t("action.cancelQuestion"), t("action.cancelYes"), t("action.cancelNo"), "cancel-order", async () => {
      const changed = await api("POST", "/documents/orders/" + encodeURIComponent(o.id) + "/cancel", {}, { auth: true });
      replaceOrder(orders.items, changed);
      renderOrders();
      reload("account");
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
  onReload("orders", loadOrders);
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
