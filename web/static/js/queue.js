// The operator's order queue: orders of every account by status, and what
// the service lets the operator do with each (confirm payment, mark
// requested, deliver the PDF, fail with a reason, cancel).

import { $, ApiError, api, el, explain, guarded, onRedraw, onReload, setStatus, state, t } from "./core.js";
import { STATUSES, actionGroup, allows, askAgain, confirmingButton, focusOrder, namePlansAgain, orderDetails, replaceOrder, saySentencesAgain, statusWords } from "./orderviews.js";

const queue = { status: "PREVIEW_READY", cursor: null, items: [], seq: 0 };

function fillQueueSelect() {
  const select = $("queue-status");
  select.replaceChildren(el("option", { value: "", text: t("queue.all") }),
    ...STATUSES.map((s) => el("option", { value: s, text: statusWords(s) })));
  select.value = queue.status;
}

export async function loadQueue(more) {
  if (!state.session || state.role !== "operator") {
    return;
  }
  const status = $("queue-status").value;
  queue.status = status;
  const seq = ++queue.seq;
  setStatus("queue-status-text", t("orders.loading"));
  const cursor = more ? queue.cursor : null;
  let path = "/operator/orders/?limit=20";
  if (status) {
    path += "&status=" + encodeURIComponent(status);
  }
  if (cursor) {
    path += "&cursor=" + encodeURIComponent(cursor);
  }
  try {
    const data = await api("GET", path, undefined, { auth: true });
    if (seq !== queue.seq) {
      return; // the operator chose another status meanwhile
    }
    const items = (data.orders || []).map((o) => Object.defineProperty(o, "_lang", { value: data._lang }));
    queue.cursor = data.next_cursor || null;
    queue.items = more ? queue.items.concat(items) : items;
    renderQueue();
  } catch (err) {
    if (state.session && seq === queue.seq) {
      setStatus("queue-status-text", explain(err).text, "error");
    }
  }
}

function renderQueue() {
  const list = $("queue-list");
  $("queue-more").hidden = !(state.session && queue.cursor);
  if (!state.session || state.role !== "operator") {
    list.replaceChildren();
    return;
  }
  const items = queue.items;
  const status = queue.status ? statusWords(queue.status) : t("queue.all");
  setStatus("queue-status-text", items.length === 0 ? t("queue.none", { status }) : t("queue.count", { n: items.length, status }));
  list.replaceChildren(...items.map((o) => el("li", { className: "order-item", "data-order-id": o.id }, [orderDetails(o, operatorStepNode(o)), operatorActions(o)])));
}

// operatorStepNode shows the operator's next step as the service says it
// (operator_step: the first action it allows the operator), in place of
// the client's next step (the client pays, downloads; the operator
// confirms, delivers).
function operatorStepNode(o) {
  const step = o.operator_step || { action: "none", message: "" };
  return el("p", { className: "next-step operator-step", "data-kind": "operator", "data-action": step.action }, [
    el("strong", { text: t("queue.nextStep") + ":" }), el("span", { className: "next-step-text", lang: o._lang, text: " " + step.message }),
  ]);
}

function operatorActions(o) {
  const message = el("div", { className: "action-message", role: "status", "aria-live": "polite" });
  const box = el("div", { className: "actions order-actions" });
  const path = "/operator/orders/" + encodeURIComponent(o.id) + "/";
  const done = (changed, words, selector) => {
    replaceOrder(queue.items, changed);
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
    const note = noteInput(noteId, "cancel-note");
    const noteField = el("div", { className: "field" }, [el("label", { for: noteId, text: t("queue.cancelNote") }), note]);
    // A payment through a provider goes back by itself; any other, by hand.
    const question = o.payment ? t("queue.cancelQuestionOnline") : t("queue.cancelQuestion");
    box.append(confirmingButton(t("action.cancel"), question, t("action.cancelYes"), t("action.cancelNo"), "cancel-order", async () =>
      done(await api("POST", path + "cancel", note.value.trim() ? { note: note.value.trim() } : {}, { auth: true }), t("action.cancelled", { id: o.id })), message, noteField));
  }
  return actionGroup(o, box, message);
}

// noteInput is a one-line text field as long as the service takes a note.
function noteInput(id, className) {
  const input = el("input", { id, type: "text", className, autocomplete: "off" });
  if (state.limits) {
    input.maxLength = state.limits.note_chars;
  }
  return input;
}

function actionButton(label, className, message, action) {
  const b = el("button", { type: "button", className: className + " primary", text: label });
  b.addEventListener("click", () => guarded(b, message, action));
  return b;
}

function deliverForm(o, path, message, done) {
  const inputId = "deliver-" + o.id;
  const input = el("input", { id: inputId, type: "file", className: "deliver-file", accept: "application/pdf,.pdf" });
  const button = el("button", { type: "button", className: "deliver-order primary", text: t("queue.deliver") });
  button.addEventListener("click", () => guarded(button, message, async () => {
    const file = input.files && input.files[0];
    if (!file) {
      throw new ApiError("no_file", "");
    }
    // A file larger than the service takes is refused here, before it is sent.
    if (state.limits && file.size > state.limits.document_bytes) {
      throw new ApiError("payload_too_large", "");
    }
    const changed = await api("PUT", path + "document", undefined, { auth: true, raw: file, contentType: "application/pdf" });
    done(changed, t("queue.delivered", { id: o.id }));
  }));
  const mb = state.limits ? Math.floor(state.limits.document_bytes / (1 << 20)) : null;
  const label = mb ? t("queue.file", { mb }) : t("queue.fileNoSize");
  return el("div", { className: "field deliver" }, [el("label", { for: inputId, text: label }), input, button]);
}

function failForm(o, path, message, done) {
  const inputId = "fail-" + o.id;
  const reason = noteInput(inputId, "fail-reason");
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

export function startQueue() {
  onReload("queue", loadQueue);
  $("queue-status").addEventListener("change", () => loadQueue(false));
  $("queue-refresh").addEventListener("click", () => loadQueue(false));
  $("queue-more").addEventListener("click", () => loadQueue(true));
  onRedraw("language", async () => {
    fillQueueSelect();
    renderQueue();
    if (state.session && state.role === "operator" && queue.items.length > 0) {
      const seq = queue.seq;
      const again = await askAgain(queue.items, "/operator/orders/");
      if (seq === queue.seq) {
        queue.items = again;
        saySentencesAgain("queue-list", again);
      }
    }
  });
  onRedraw("session", () => {
    queue.seq++;
    queue.status = "PREVIEW_READY";
    queue.cursor = null;
    queue.items = [];
    fillQueueSelect();
    renderQueue();
  });
  onRedraw("role", () => loadQueue(false));
  onRedraw("plans", () => namePlansAgain("queue-list"));
}
