package plansfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
)

const validPlan = `{"id":"ad-single","name":"AD","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":0}`

// TestLoadNamesTheFile: an invalid plans file is an error naming the
// file, the plan and the field.
func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plans.json")
	data := `{"plans":[` + validPlan + `,{"id":"x","name":"X","kind":"monthly","document_types":["AD"],"currency":"EUR","price":"1.00"}]}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil {
		t.Fatal("invalid plans file accepted")
	}
	for _, want := range []string{path, `plan 2 ("x")`, `"kind"`, `"monthly"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// TestLoadWithoutFile: a missing file or no path configures no plan, and
// is no error.
func TestLoadWithoutFile(t *testing.T) {
	absent := filepath.Join(t.TempDir(), "absent.json")
	for name, path := range map[string]string{"missing file": absent, "no path": ""} {
		p, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v, want no error", name, err)
		}
		if p.Len() != 0 || p.Source() != path {
			t.Errorf("%s: %d plans from %q, want none from %q", name, p.Len(), p.Source(), path)
		}
		var e *companydocs.Error
		if _, err := p.Plans(); !errors.As(err, &e) || e.Code != companydocs.EPLANMISSING {
			t.Errorf("%s: Plans() answers %v, want plan_configuration_missing", name, err)
		}
	}
}

// TestLoadShippedPlans: the example plans file of the repository loads.
func TestLoadShippedPlans(t *testing.T) {
	p, err := Load(filepath.Join("..", "data", "plans.json"))
	if err != nil || p.Len() == 0 {
		t.Fatalf("data/plans.json: %d plans, %v", p.Len(), err)
	}
}

// TestLoadUnreadable: a path that cannot be read (a directory) is an
// error naming it.
func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Load(directory) = %v, want an error naming it", err)
	}
}
