// Paying online: "Pay now" under the service's next step "pay" (a link to
// the payment provider's hosted page), and an order's payment and refund
// as facts: in words for the client, with the provider's ids and the
// refund's attempts for the operator. The page names no provider of its
// own: it shows the payment the service describes.

import { el, formatMoney, formatTime, has, t } from "./core.js";
import { onNextStep } from "./order.js";
import { allows } from "./orders.js";

// A timer longer than this fires at once (setTimeout's limit, ~24 days).
const LONGEST_TIMER = 2147483647;

// payNow offers the payment page while the service allows pay_online and
// the page is open: a link to it (the provider's page opens in place of
// ours and sends the client back) and until when to pay. When that time
// comes the link goes; the service then closes the order by itself.
function payNow(o) {
  const p = (o.next_step && o.next_step.params) || {};
  const until = new Date(p.expires_at);
  if (!allows(o, "pay_online") || !String(p.payment_url || "").startsWith("https://") || !(until > Date.now())) {
    return null;
  }
  const box = el("p", { className: "pay", "data-expires-at": p.expires_at }, [
    // Several orders may await payment: the link's name says which.
    el("a", { className: "pay-now", href: p.payment_url, "aria-label": t("pay.nowFor", { id: o.id }), text: t("action.pay_online") }),
    el("span", { className: "pay-by", text: t("pay.by", { time: formatTime(p.expires_at) }) }),
  ]);
  setTimeout(() => {
    if (document.body.contains(box)) {
      box.replaceChildren(el("span", { className: "pay-closed", text: t("pay.closed") }));
    }
  }, Math.min(until - Date.now(), LONGEST_TIMER));
  return box;
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

export function startPayment() {
  onNextStep("pay", payNow);
}
