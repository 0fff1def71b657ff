// Ordering: the order panel (plan, document, the service's preview with
// its blockers, confirm) and the order it placed, shown as orderviews.js
// shows an order anywhere.

import { $, api, docName, el, errorNode, formatMoney, newIdempotencyKey, onRedraw, reload, state, t } from "./core.js";
import { orderDetails } from "./orderviews.js";

let order = null; // {candidate, opener, idemKey, previewSeq, controller, preview}
let planChosen = false; // the person picked a plan: it stays picked across orders

// orderAction offers to order an orderable company: to a signed-in
// client, or a way to sign in first. Operators run the queue; the service
// does not let them order.
export function orderAction(c) {
  if (!c.ordering_eligible || state.role === "operator") {
    return null;
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

export function openOrderPanel(candidate, opener) {
  abortPreview();
  order = { candidate, opener, idemKey: newIdempotencyKey(), previewSeq: 0, controller: null };
  $("order-result").replaceChildren();
  $("order-form").hidden = false;
  $("order-company").textContent = [candidate.name, candidate.court, candidate.registry_number].filter(Boolean).join(", ");
  fillPlanSelect();
  $("order-panel").hidden = false;
  $("order-heading").focus();
  preview();
}

export function closeOrderPanel(returnFocus) {
  abortPreview();
  const opener = order && order.opener;
  order = null;
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
    select.append(el("option", { value: p.id, text: p.label || p.name }));
  }
  select.value = defaultPlan(previous).id;
  fillDocumentSelect();
}

// defaultPlan is the plan the panel offers first: the one the person
// chose, else one for a document the company holds that the account can
// pay with its credits now (an order that waits for nobody), else any one
// for such a document (an operator's or a payment page's), else the first.
function defaultPlan(previous) {
  const held = order ? order.candidate.documents || [] : [];
  const fits = (p) => (p.document_types || []).some((d) => held.includes(d));
  const payable = (p) => p.payment === "credits" && state.credits !== null && state.credits >= (p.credit_cost || 0);
  return (planChosen && state.plans.find((p) => p.id === previous)) ||
    state.plans.find((p) => fits(p) && payable(p)) ||
    state.plans.find(fits) || state.plans[0];
}

function fillDocumentSelect() {
  const select = $("order-document");
  const previous = select.value;
  const plan = Array.isArray(state.plans) ? state.plans.find((p) => p.id === $("order-plan").value) : null;
  select.replaceChildren();
  if (!plan) {
    select.disabled = true;
    return;
  }
  select.disabled = false;
  const held = order ? order.candidate.documents || [] : [];
  for (const d of plan.document_types || []) {
    const label = held.includes(d) ? docName(d) : t("doc.notHeld", { doc: docName(d) });
    select.append(el("option", { value: d, text: label }));
  }
  const types = plan.document_types || [];
  select.value = types.includes(previous) ? previous : types.find((d) => held.includes(d)) || types[0] || "";
}

function onPlanChange() {
  planChosen = true;
  fillDocumentSelect();
  onChoiceChange();
}

function onChoiceChange() {
  if (order) {
    // A different choice is a different order: it gets its own key.
    order.idemKey = newIdempotencyKey();
  }
  $("order-result").replaceChildren();
  preview();
}

function abortPreview() {
  if (order && order.controller) {
    order.controller.abort();
    order.controller = null;
  }
}

function orderRequest() {
  const c = order.candidate;
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
  if (!order) {
    return;
  }
  if (!Array.isArray(state.plans) || state.plans.length === 0) {
    box.replaceChildren(Array.isArray(state.plans) ? el("p", { className: "message error", text: t("error.plan_configuration_missing") }) : errorNode(state.plans));
    return;
  }
  abortPreview();
  const current = order;
  const seq = ++current.previewSeq;
  const controller = new AbortController();
  current.controller = controller;
  box.replaceChildren(el("p", { className: "status", text: t("order.previewing") }));
  try {
    const p = await api("POST", "/documents/orders/preview/", orderRequest(), { auth: true, signal: controller.signal });
    if (order !== current || seq !== current.previewSeq) {
      return;
    }
    current.preview = p;
    renderPreview(p);
  } catch (err) {
    if (err.name === "AbortError" || order !== current || seq !== current.previewSeq) {
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
    const list = el("ul", { className: "blockers" }, (p.blockers || []).map((b) =>
      el("li", { "data-code": b.code }, [el("span", { lang: p._lang, text: b.message })])));
    children.push(el("div", { className: "message error" }, [el("p", { text: t("order.blocked") }), list]));
  }
  $("preview").replaceChildren(...children);
}

async function placeOrder(event) {
  event.preventDefault();
  const current = order;
  const confirm = $("order-confirm");
  if (!current || confirm.disabled) {
    return;
  }
  confirm.disabled = true;
  const result = $("order-result");
  result.replaceChildren(el("p", { className: "status", text: t("order.placing") }));
  try {
    const o = await api("POST", "/documents/orders/", orderRequest(), { auth: true, headers: { "Idempotency-Key": current.idemKey } });
    showOrder(o, t("order.created"), "ok");
  } catch (err) {
    if (order !== current) {
      return;
    }
    if (err.code === "duplicate_order" && err.order) {
      showOrder(Object.defineProperty(err.order, "_lang", { value: err.lang }), t("order.duplicate"), "duplicate");
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
  reload("orders", false);
  reload("account");
}

function renderOrderPanelTexts() {
  if (order) {
    fillPlanSelect();
    preview(); // the service says the blockers in the new language
  }
}

export function startOrder() {
  $("order-plan").addEventListener("change", onPlanChange);
  $("order-document").addEventListener("change", onChoiceChange);
  $("order-form").addEventListener("submit", placeOrder);
  $("order-back").addEventListener("click", () => closeOrderPanel(true));
  $("order-panel").addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      closeOrderPanel(true);
    }
  });
  onRedraw("language", renderOrderPanelTexts);
  onRedraw("session", () => {
    if (!state.session) {
      closeOrderPanel(false);
    }
  });
  onRedraw("plans", renderOrderPanelTexts);
}
