package web

import (
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"companydocs"
	"companydocs/messages"
	"companydocs/ordering"
)

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(Files(), name)
	if err != nil {
		t.Fatalf("read embedded %s: %v", name, err)
	}
	return string(b)
}

// languageKeys reads the keys of each language as the page has them: the
// files i18n/*.js and the message catalog merged into them.
func languageKeys(t *testing.T) map[string]map[string]bool {
	t.Helper()
	langs := map[string]map[string]bool{}
	for lang, texts := range languageTexts(t) {
		langs[lang] = map[string]bool{}
		for k := range texts {
			langs[lang][k] = true
		}
	}
	return langs
}

// TestServiceSentencesOnlyInTheCatalog checks that i18n/*.js keep none of
// the sentences the catalog holds: the page's own words stay there, every
// sentence the service says too is read from the catalog, once.
func TestServiceSentencesOnlyInTheCatalog(t *testing.T) {
	page := pageTexts(t)
	if len(page["en"]) < 100 {
		t.Fatalf("i18n/en.js: %d English texts read; the file layout changed", len(page["en"]))
	}
	for lang, texts := range page {
		for key := range texts {
			if messages.Has(key) {
				t.Errorf("i18n/%s.js repeats %s, which the message catalog holds", lang, key)
			}
		}
	}
	if js := readFile(t, "i18n.js"); !strings.Contains(js, `fetch("/static/messages.json"`) {
		t.Error("i18n.js does not read the message catalog")
	}
}

func TestGermanAndEnglishHaveTheSameTexts(t *testing.T) {
	langs := languageKeys(t)
	en, de := langs["en"], langs["de"]
	if len(en) < 100 || len(de) < 100 {
		t.Fatalf("i18n/*.js: %d English and %d German texts read; the file layout changed", len(en), len(de))
	}
	for _, pair := range [][2]map[string]bool{{en, de}, {de, en}} {
		for k := range pair[0] {
			if !pair[1][k] {
				t.Errorf("text %q exists in one language only", k)
			}
		}
	}
}

// modules reads the page's JavaScript modules (js/*.js) by name.
func modules(t *testing.T) map[string]string {
	t.Helper()
	names, err := fs.Glob(Files(), "js/*.js")
	if err != nil || len(names) < 8 {
		t.Fatalf("page modules: %v, %v", names, err)
	}
	out := map[string]string{}
	for _, name := range names {
		out[name] = readFile(t, name)
	}
	return out
}

// TestEveryUsedTextExists checks the keys the page names literally: the
// data-i18n attributes of index.html and the t("...") calls of the
// modules.
func TestEveryUsedTextExists(t *testing.T) {
	en := languageKeys(t)["en"]
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`data-i18n(?:-aria-label)?="([^"]+)"`).FindAllStringSubmatch(readFile(t, "index.html"), -1) {
		used[m[1]] = true
	}
	for _, js := range modules(t) {
		for _, m := range regexp.MustCompile(`\bt\("([^"]+)"`).FindAllStringSubmatch(js, -1) {
			if !strings.HasSuffix(m[1], ".") { // t("label." + code): a prefix, checked by TestCodesHaveWords
				used[m[1]] = true
			}
		}
	}
	if len(used) < 50 {
		t.Fatalf("only %d text keys found in index.html and the modules; the pattern no longer matches", len(used))
	}
	var missing []string
	for k := range used {
		if !en[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("texts used but not defined: %v", missing)
	}
}

// copiedLimit finds a limit of the service written into the page.
var copiedLimit = regexp.MustCompile(`maxlength|MAX_PDF_BYTES|20 \* 1024|"1000"|\b2000\b`)

// TestModulesAreSmall checks the page's shape: native modules, loaded by
// index.html as one module script, none over 500 lines, and no limit of
// the service copied into the page.
func TestModulesAreSmall(t *testing.T) {
	for name, js := range modules(t) {
		if n := strings.Count(js, "\n"); n > 500 {
			t.Errorf("%s has %d lines; split it (at most 500)", name, n)
		}
		if m := copiedLimit.FindString(js); m != "" {
			t.Errorf("%s holds %q: the service's limits come from GET /api/v1/limits", name, m)
		}
	}
	index := readFile(t, "index.html")
	if !strings.Contains(index, `<script type="module" src="/static/js/main.js"></script>`) || strings.Contains(index, "maxlength") {
		t.Error("index.html does not load the page as a module, or copies a limit of the service (maxlength)")
	}
	if _, err := fs.Stat(Files(), "app.js"); err == nil {
		t.Error("app.js is back")
	}
}

// TestPageSaysNoServiceSentence checks that the page builds none of the
// sentences the service says: no module names a key of the message
// catalog but the names of error codes and document types, and none keeps
// a rule of the service's sentences; the service's answers say reasons,
// notes, pasted lines, gaps, blockers, next steps, history, changes, plan
// labels and how a query was read in the page's language.
func TestPageSaysNoServiceSentence(t *testing.T) {
	key := regexp.MustCompile(`\bt\("([^"]+)"`)
	for name, js := range modules(t) {
		for _, m := range key.FindAllStringSubmatch(js, -1) {
			k := m[1]
			if strings.HasPrefix(k, "error.") || strings.HasPrefix(k, "doc.") {
				continue
			}
			if messages.Has(k) || strings.HasSuffix(k, ".") && catalogPrefix(k) {
				t.Errorf("%s says the service's sentence %s itself", name, k)
			}
		}
		for _, rule := range []string{"reasonWords", "gapWords", "paramWords", "positionKeys", "typedWords", "fieldChangeWords", "coded("} {
			if strings.Contains(js, rule) {
				t.Errorf("%s repeats a rule of the service: %s", name, rule)
			}
		}
	}
}

// catalogPrefix reports whether a key prefix ("reason.") names sentences
// of the catalog.
func catalogPrefix(prefix string) bool {
	for _, k := range messages.Keys() {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// TestCodesHaveWords checks that every error and blocker code, order
// status, workflow status, actor, next-step kind and history code of the
// service, every operator action, the client's payment online and the
// states of a payment and its refund have plain words on the page.
func TestCodesHaveWords(t *testing.T) {
	en := languageKeys(t)["en"]
	codes := []string{
		"error.invalid_query", "error.rate_limited", "error.validation_error", "error.verified_company_required",
		"error.duplicate_order", "error.plan_configuration_missing", "error.unauthorized", "error.insufficient_credits",
		"error.not_found", "error.payload_too_large", "error.service_unavailable", "error.internal", "error.network",
		"blocker.company_profile_id_missing", "blocker.company_not_found", "blocker.company_not_verified",
		"blocker.company_removed", "blocker.document_not_available", "blocker.document_type_not_orderable",
		"blocker.plan_not_found", "blocker.document_not_in_plan", "blocker.plan_configuration_missing",
		"blocker.insufficient_credits", "blocker.duplicate_order",
		"label.exact", "label.possible", "label.needs_verification",
		"error.forbidden", "error.invalid_transition", "error.request_timeout", "error.method_not_allowed",
		"orderStatus.PREVIEW_READY", "orderStatus.PAID", "orderStatus.REQUESTED", "orderStatus.DELIVERED",
		"orderStatus.FAILED", "orderStatus.CANCELLED",
		"workflow.started", "workflow.in_progress", "workflow.completed", "workflow.failed", "workflow.cancelled",
		"actor.client", "actor.operator", "actor.system",
		"nextStep.payment", "nextStep.delivery", "nextStep.download", "nextStep.none",
		"history.order_created", "history.paid_at_creation", "history.payment_confirmed", "history.requested_from_register",
		"history.delivered", "history.cancelled_by_client", "history.cancelled_by_operator", "history.note",
		// the operator's next step in the queue: its first allowed action, or none
		"operatorStep.pay", "operatorStep.request", "operatorStep.deliver", "operatorStep.fail", "operatorStep.cancel", "operatorStep.none",
		"operatorStep.awaiting_payment",
		// paying through a provider: the client's action and next step,
		// the payment's and the refund's states, the provider, the history
		"action." + ordering.ActionPayOnline, "nextStep." + ordering.NextStepPay,
		"paymentStatus." + companydocs.PaymentOpen, "paymentStatus." + companydocs.PaymentPaid, "paymentStatus." + companydocs.PaymentExpired,
		"refundStatus." + companydocs.RefundPending, "refundStatus." + companydocs.RefundRefunded, "provider." + companydocs.PaymentStripe,
		"history." + ordering.HistoryPaidOnline, "history." + ordering.HistoryCheckoutExpired,
		"history." + ordering.HistoryPaidAfterCancel, "history." + ordering.HistoryRefunded,
	}
	for _, k := range codes {
		if !en[k] {
			t.Errorf("no words for %s", k)
		}
	}
}

func TestContentType(t *testing.T) {
	for name, want := range map[string]string{
		"index.html": "text/html; charset=utf-8", "js/main.js": "text/javascript; charset=utf-8",
		"app.css": "text/css; charset=utf-8", "x.unknownext": "application/octet-stream",
	} {
		if got := ContentType(name); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", name, got, want)
		}
	}
}

// languageTexts reads each language as the page has it: its file
// i18n/<lang>.js with the message catalog merged in.
func languageTexts(t *testing.T) map[string]map[string]string {
	t.Helper()
	langs := pageTexts(t)
	for _, lang := range messages.Languages {
		for _, key := range messages.Keys() {
			langs[lang][key], _ = messages.Sentence(lang, key)
		}
	}
	return langs
}

// pageTexts reads each language file of the page's own words,
// i18n/<lang>.js, as key -> text: it starts with `export const en = {`,
// its entries are `  "key": "text",` lines, and i18n.js imports it.
func pageTexts(t *testing.T) map[string]map[string]string {
	t.Helper()
	names, err := fs.Glob(Files(), "i18n/*.js")
	if err != nil || len(names) == 0 {
		t.Fatalf("page texts i18n/*.js: %v, %v", names, err)
	}
	joined := readFile(t, "i18n.js")
	entry := regexp.MustCompile(`^  "([^"]+)": "((?:[^"\\]|\\.)*)",?$`)
	langs := map[string]map[string]string{}
	for _, name := range names {
		lang := strings.TrimSuffix(path.Base(name), ".js")
		js := readFile(t, name)
		if !strings.Contains(js, "\nexport const "+lang+" = {\n") {
			t.Fatalf("%s does not export the texts %s; the file layout changed", name, lang)
		}
		if !strings.Contains(joined, `import { `+lang+` } from "./`+name+`";`) {
			t.Fatalf("i18n.js does not import %s", name)
		}
		texts := map[string]string{}
		for _, line := range strings.Split(js, "\n") {
			if m := entry.FindStringSubmatch(line); m != nil {
				texts[m[1]] = m[2]
			}
		}
		langs[lang] = texts
	}
	return langs
}
