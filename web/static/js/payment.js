// Paying online: "Pay now" under the service's next step "pay" (a link to
// the payment provider's hosted page). An order's payment and refund are
// facts of every order's view (orderviews.js, paymentFacts). The page
// names no provider of its own: it shows the payment the service
// describes.

import { el, formatTime, t } from "./core.js";
import { allows, onNextStep } from "./orderviews.js";

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

export function startPayment() {
  onNextStep("pay", payNow);
}
