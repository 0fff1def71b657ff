package ordering

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs"
)

const validPlan = `{"id":"ad-single","name":"AD","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":0}`

func TestParsePlansRejectsInvalidPlans(t *testing.T) {
	for _, tc := range []struct {
		name, plan string
		want       []string // fragments the message must contain besides the file name
	}{
		{"unknown kind", `{"id":"x","name":"X","kind":"monthly","document_types":["AD"],"currency":"EUR","price":"1.00"}`, []string{`plan 2 ("x")`, `"kind"`, `"monthly"`}},
		{"empty id", `{"id":"","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"1.00"}`, []string{"plan 2:", `"id"`, "empty"}},
		{"duplicate id", strings.Replace(validPlan, `"name":"AD"`, `"name":"again"`, 1), []string{`plan 2 ("ad-single")`, `"id"`, "earlier plan"}},
		{"unknown document type", `{"id":"x","name":"X","kind":"one_off","document_types":["AD","XX"],"currency":"EUR","price":"1.00"}`, []string{`plan 2 ("x")`, `"document_types"`, `"XX"`}},
		{"document type not sold", `{"id":"x","name":"X","kind":"one_off","document_types":["HD"],"currency":"EUR","price":"1.00"}`, []string{`plan 2 ("x")`, `"document_types"`, `"HD"`}},
		{"no document type", `{"id":"x","name":"X","kind":"one_off","document_types":[],"currency":"EUR","price":"1.00"}`, []string{`plan 2 ("x")`, `"document_types"`}},
		{"price with one fraction digit", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.5"}`, []string{`plan 2 ("x")`, `"price"`, `"4.5"`}},
		{"price without fraction", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4"}`, []string{`plan 2 ("x")`, `"price"`}},
		{"negative price", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"-4.50"}`, []string{`plan 2 ("x")`, `"price"`}},
		{"price with comma", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4,50"}`, []string{`plan 2 ("x")`, `"price"`}},
		{"negative credit cost", `{"id":"x","name":"X","kind":"subscription","document_types":["AD"],"currency":"EUR","price":"0.00","credit_cost":-1}`, []string{`plan 2 ("x")`, `"credit_cost"`}},
		{"lower-case currency", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"eur","price":"1.00"}`, []string{`plan 2 ("x")`, `"currency"`, `"eur"`}},
		{"currency symbol", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"€","price":"1.00"}`, []string{`plan 2 ("x")`, `"currency"`}},
		{"unknown field", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"1.00","credits_cost":1}`, []string{"plan 2", `"credits_cost"`}},
		{"negative search rate", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"1.00","search_rate":-1}`, []string{`plan 2 ("x")`, `"search_rate"`, "0 to 10000"}},
		{"search rate past the bound", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"1.00","search_rate":1e6}`, []string{`plan 2 ("x")`, `"search_rate"`, "1e+06"}},
		{"price as number", `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":4.50}`, []string{"plan 2", "price"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plans.json")
			data := `{"plans":[` + validPlan + `,` + tc.plan + `]}`
			_, err := ParsePlans(path, []byte(data))
			if err == nil {
				t.Fatal("invalid plans file accepted")
			}
			for _, want := range append(tc.want, path) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestParsePlansReportsEveryInvalidPlan(t *testing.T) {
	data := `{"plans":[{"id":"a","name":"A","kind":"x","document_types":["AD"],"currency":"EUR","price":"1.00"},{"id":"b","name":"B","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"1"}]}`
	_, err := ParsePlans("p.json", []byte(data))
	if err == nil || !strings.Contains(err.Error(), `plan 1 ("a")`) || !strings.Contains(err.Error(), `plan 2 ("b")`) {
		t.Fatalf("error = %v, want both plans named", err)
	}
}

func TestParsePlansRejectsNonObject(t *testing.T) {
	for _, data := range []string{``, `[]`, `{"plans":{}}`, `{"plan":[]}`, `not json`} {
		if _, err := ParsePlans("p.json", []byte(data)); err == nil || !strings.Contains(err.Error(), `"p.json"`) {
			t.Errorf("ParsePlans(%q) error = %v, want one naming the file", data, err)
		}
	}
}

func TestNoPlanConfigured(t *testing.T) {
	empty, err := ParsePlans("p.json", []byte(`{"plans":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	missing := NoPlans(filepath.Join(t.TempDir(), "absent.json"))
	for name, p := range map[string]*Plans{"empty file": empty, "missing file": missing, "no path": nil} {
		_, err := p.Plans()
		wantCode(t, err, companydocs.EPLANMISSING)
		if _, _, ok := p.Plan("ad-single"); ok {
			t.Errorf("%s: Plan found a plan", name)
		}
	}
}

func TestShippedPlans(t *testing.T) {
	plans, err := shippedPlans(t).Plans()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range plans {
		kinds[p.Kind]++
	}
	if kinds[companydocs.PlanOneOff] == 0 || kinds[companydocs.PlanSubscription] == 0 {
		t.Errorf("shipped plans by kind = %v, want one-off and subscription plans", kinds)
	}
	// Plans returns copies: changing one must not change the configuration.
	plans[0].DocumentTypes[0] = "XX"
	again, _ := shippedPlans(t).Plans()
	if again[0].DocumentTypes[0] == "XX" {
		t.Error("Plans exposes its internal slices")
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		in    string
		cents int64
		ok    bool
	}{
		{"4.50", 450, true}, {"0.00", 0, true}, {"0.05", 5, true}, {"1234.99", 123499, true},
		{"4.5", 0, false}, {"4.500", 0, false}, {"04.50", 0, false}, {".50", 0, false}, {"4.", 0, false},
		{"-1.00", 0, false}, {"+1.00", 0, false}, {"1e3.00", 0, false}, {"4,50", 0, false}, {"", 0, false},
		{"99999999999999999999.00", 0, false},
	} {
		got, err := parseCents(tc.in)
		if (err == nil) != tc.ok || got != tc.cents {
			t.Errorf("parseCents(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.cents, tc.ok)
		}
		if tc.ok && formatCents(got) != tc.in {
			t.Errorf("formatCents(%d) = %q, want %q", got, formatCents(got), tc.in)
		}
	}
}

func FuzzParseCents(f *testing.F) {
	for _, s := range []string{"4.50", "0.00", "4.5", "-1.00", "1e3", "0001.00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCents(s)
		if err != nil {
			return
		}
		if c < 0 || formatCents(c) != s {
			t.Errorf("parseCents(%q) = %d, formats back as %q", s, c, formatCents(c))
		}
	})
}

// TestPlanPayment: a plan says how it is paid, or the file's kind and
// price say it as before plans named it; only a priced one-off plan in EUR
// without a credit cost can be paid through Stripe.
func TestPlanPayment(t *testing.T) {
	plans, err := ParsePlans("plans.json", []byte(`{"plans":[`+validPlan+`,
		{"id":"sub","name":"S","kind":"subscription","document_types":["AD"],"currency":"EUR","price":"0.00","credit_cost":1},
		{"id":"free","name":"F","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"0.00","credit_cost":0},
		{"id":"card","name":"C","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":0,"payment":"stripe"},
		{"id":"by-hand","name":"H","kind":"subscription","document_types":["AD"],"currency":"EUR","price":"0.00","credit_cost":0,"payment":"operator"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ad-single": "operator", "sub": "credits", "free": "credits", "card": "stripe", "by-hand": "operator"}
	for id, payment := range want {
		if p, _, _ := plans.Plan(id); p.Payment != payment {
			t.Errorf("plan %s is paid by %q, want %q", id, p.Payment, payment)
		}
	}
	if got := plans.PaidThrough(companydocs.PaymentStripe); len(got) != 1 || got[0] != "card" {
		t.Errorf("plans paid through Stripe: %v, want [card]", got)
	}
	for name, plan := range map[string]string{
		"subscription":  `{"id":"x","name":"X","kind":"subscription","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":0,"payment":"stripe"}`,
		"free":          `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"0.00","credit_cost":0,"payment":"stripe"}`,
		"credit cost":   `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":1,"payment":"stripe"}`,
		"in dollars":    `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"USD","price":"4.50","credit_cost":0,"payment":"stripe"}`,
		"unknown means": `{"id":"x","name":"X","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":0,"payment":"paypal"}`,
	} {
		if _, err := ParsePlans("plans.json", []byte(`{"plans":[`+plan+`]}`)); err == nil || !strings.Contains(err.Error(), `field "payment"`) {
			t.Errorf("%s: %v, want the payment field refused", name, err)
		}
	}
}

// TestRefundBackoff: the wait after each failed refund doubles from the
// base up to six hours, and stays there.
func TestRefundBackoff(t *testing.T) {
	base := 30 * time.Second
	for n, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 10: 256 * time.Minute, 11: 6 * time.Hour, 100: 6 * time.Hour} {
		if got := refundBackoff(base, n); got != want {
			t.Errorf("after %d failed attempts: wait %s, want %s", n, got, want)
		}
	}
}
