// One order as the page shows it anywhere (its facts, its payment and
// refund, its status in words, the service's next step, its history) and
// what the client's orders and the operator's queue share: the actions
// the service allows, buttons grouped by order, a confirming button, and
// asking the shown orders again in another language. The parts above it
// (order, orders, queue, payment) import it; it imports only the core.

import { $, api, docName, el, formatMoney, formatTime, guarded, has, planName, t } from "./core.js";

// Each status has a sign besides its colour, so that it does not rest on
// colour alone; the words carry the meaning, the sign is decoration.
const STATUS_SIGNS = { PREVIEW_READY: "○", PAID: "◐", REQUESTED: "◑", DELIVERED: "✓", FAILED: "✗", CANCELLED: "⊘" };
export const STATUSES = Object.keys(STATUS_SIGNS);

export function statusWords(status) {
  return has("orderStatus." + status) ? t("orderStatus." + status) : status;
}

function statusBadge(status) {
  return el("span", { className: "status-badge status-" + status, "data-status": status }, [
    el("span", { "aria-hidden": "true", text: (STATUS_SIGNS[status] || "•") + " " }),
    el("span", { className: "status-words", text: statusWords(status) }),
  ]);
}

// orderDetails shows an order; step, when given, in place of the
// service's next step (the operator's queue says the operator's), and
// then with the payment as the operator sees it.
export function orderDetails(o, step) {
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
    ["order.refunded", o.credits_refunded ? String(o.credits_refunded) : ""],
    ["order.file", o.document ? t("order.fileSize", { kb: Math.max(1, Math.round(o.document.size / 1024)) }) : ""],
  ].filter(([, v]) => v);
  const dl = el("dl", { className: "facts order-facts" });
  for (const [key, value] of rows) {
    const plan = key === "order.plan" ? o.plan_id : undefined;
    dl.append(el("div", {}, [el("dt", { text: t(key) }), el("dd", { className: "order-" + key.split(".")[1], "data-plan-id": plan, text: value })]));
    if (key === "order.id") {
      dl.append(el("div", {}, [el("dt", { text: t("order.status") }), el("dd", { className: "order-status", "data-status": o.status }, [statusBadge(o.status)])]));
    }
  }
  return el("div", { className: "order-details", "data-order-id": o.id, "data-status": o.status }, [dl, paymentFacts(o, Boolean(step)), step || nextStepNode(o), historyNode(o)]);
}

// stepActions holds, by next-step kind, what a part of the page adds
// under the service's next step (a button that pays, for instance):
// onNextStep("payment", (order) => node).
const stepActions = {};

export function onNextStep(kind, fn) {
  stepActions[kind] = fn;
}

// nextStepNode shows the service's next step, whatever it is: its kind in
// words, the service's sentence, and what a part of the page offers for
// that kind.
function nextStepNode(o) {
  const step = o.next_step || {};
  const kind = has("nextStep." + step.kind) ? t("nextStep." + step.kind) : step.kind || "";
  const extra = stepActions[step.kind] ? stepActions[step.kind](o) : null;
  return el("div", { className: "next-step", "data-kind": step.kind || "", "data-code": step.code || "" }, [
    el("p", {}, [
      el("strong", { text: t("order.nextStep") + ": " + kind }),
      step.message ? el("span", { className: "next-step-text", lang: o._lang, text: " " + step.message }) : null,
    ]),
    extra,
  ]);
}

function historyNode(o) {
  const history = o.history || [];
  if (history.length === 0) {
    return null;
  }
  const titleId = "history-" + o.id + "-" + Math.random().toString(36).slice(2, 8);
  const list = el("ol", { className: "timeline", "aria-labelledby": titleId });
  for (const h of history) {
    const actor = has("actor." + h.actor) ? t("actor." + h.actor) : h.actor;
    list.append(el("li", { className: "timeline-entry", "data-status": h.status, "data-actor": h.actor }, [
      el("time", { datetime: h.at, text: formatTime(h.at) }),
      el("span", { className: "timeline-what" }, [
        statusBadge(h.status),
        el("span", { className: "timeline-actor", text: " " + t("history.by", { actor }) }),
      ]),
      h.note ? el("span", { className: "timeline-note", lang: o._lang, "data-code": h.code || "", "data-at": h.at, text: h.note.trim() }) : null,
    ]));
  }
  return el("div", { className: "history" }, [el("p", { id: titleId, className: "history-title", text: t("order.history") }), list]);
}

// saySentencesAgain puts the service's sentences of orders, asked again
// in another language, into their cards in list in place, without
// drawing the cards again (a file chosen or a note typed stays).
export function saySentencesAgain(listId, items) {
  for (const li of $(listId).children) {
    const o = items.find((x) => x.id === li.dataset.orderId);
    if (!o) {
      continue;
    }
    const step = li.querySelector(".next-step-text");
    const said = o.operator_step || o.next_step;
    if (step && said && said.message) {
      step.textContent = " " + said.message;
      step.lang = o._lang;
    }
    for (const note of li.querySelectorAll(".timeline-note")) {
      const h = (o.history || []).find((x) => x.at === note.dataset.at && x.note);
      if (h) {
        note.textContent = h.note.trim();
        note.lang = o._lang;
      }
    }
  }
}

// namePlansAgain names the plans of the orders shown as the service
// labelled them last (in the page's language), in place: the cards keep
// what they show besides (a message, a file chosen).
export function namePlansAgain(listId) {
  for (const dd of $(listId).querySelectorAll("dd[data-plan-id]")) {
    dd.textContent = planName(dd.dataset.planId);
  }
}

function words(prefix, code) {
  return has(prefix + code) ? t(prefix + code) : code;
}

// paymentFacts shows an order's payment through a provider, if it has
// one: its state and its refund for the client; for the operator also
// the amount asked, the provider's checkout session and payment ids, and
// how the refund is getting on (attempts, next attempt, the provider's
// last answer).
export function paymentFacts(o, operator) {
  const p = o.payment;
  if (!p) {
    return null;
  }
  const r = p.refund;
  const ids = operator ? "id" : "";
  const provider = { provider: words("provider.", p.provider) };
  const rows = [
    ["status", t("pay.status"), words("paymentStatus.", p.status)],
    ["amount", operator && t("pay.amount"), formatMoney(p.amount, p.currency)],
    ["open-until", operator && p.status === "open" && t("pay.openUntil"), formatTime(p.expires_at)],
    ["paid-at", p.paid_at && t("pay.paidAt"), formatTime(p.paid_at)],
    ["session", operator && t("pay.session", provider), p.session_id, ids],
    ["payment-id", operator && p.payment_id && t("pay.paymentId", provider), p.payment_id, ids],
  ];
  if (r) {
    rows.push(
      ["refund", t("pay.refund"), words("refundStatus.", r.status) + ": " + formatMoney(r.amount, r.currency)],
      ["refunded-at", r.refunded_at && t("pay.refundedAt"), formatTime(r.refunded_at)],
      ["attempts", operator && t("pay.attempts"), String(r.attempts)],
      ["next-attempt", operator && r.next_attempt_at && t("pay.nextAttempt"), formatTime(r.next_attempt_at)],
      ["last-error", operator && r.last_error && t("pay.lastError", provider), r.last_error],
      ["refund-id", operator && r.refund_id && t("pay.refundId", provider), r.refund_id, ids],
    );
  }
  const dl = el("dl", { className: "facts payment-facts" });
  for (const [name, label, value, kind] of rows) {
    if (label) {
      dl.append(el("div", {}, [el("dt", { text: label }), el("dd", { className: ["pay-" + name, kind].filter(Boolean).join(" "), text: value })]));
    }
  }
  return el("div", { className: "payment", "data-payment-status": p.status, "data-refund-status": r ? r.status : "" }, [
    el("p", { className: "payment-title", text: t("pay.title", provider) }), dl,
  ]);
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
