package register

import (
	"strings"
	"testing"
)

// registerForms are the ways people write a register line, in German and
// in the English of imprints, for each register type: {court} and
// {number} stand for the entry's court and number.
var registerForms = []struct {
	typ   Type
	forms []string
}{
	{HRB, []string{
		"Registered in the commercial register of the Local Court of {court} under HRB {number}",
		"Register court: Local Court {court} / Registration number: HRB {number}",
		"Registry court: {court}, Commercial register: HRB {number}",
		"Registration number: HRB {number}, District Court {court}",
		"Handelsregister B {number}, Amtsgericht {court}",
		"Handelsregister Abteilung B {number}, Amtsgericht {court}",
		"HR B {number}, Amtsgericht {court}",
		"HRB-Nr. {number}, Amtsgericht {court}",
		"HRB Nr. {number}, Local Court {court}",
		"AG {court} HRB {number}",
		"HRB {number} AG {court}",
	}},
	{HRA, []string{
		"Register court: Local Court {court} / Registration number: HRA {number}",
		"Handelsregister A {number}, Amtsgericht {court}",
		"Handelsregister Abteilung A {number}, District Court {court}",
		"HR A {number}, AG {court}",
		"HRA-Nr. {number}, Amtsgericht {court}",
		"HRA Nr. {number} AG {court}",
	}},
	{VR, []string{
		"Registry court: {court}, Registration number: VR {number}",
		"Vereinsregister {number}, Amtsgericht {court}",
		"VR-Nr. {number}, AG {court}",
		"VR Nr. {number}, Local Court {court}",
	}},
	{GnR, []string{
		"Genossenschaftsregister {number}, Amtsgericht {court}",
		"GnR-Nr. {number}, AG {court}",
		"GnR Nr. {number}, District Court of {court}",
	}},
	{PR, []string{
		"Partnerschaftsregister {number}, Amtsgericht {court}",
		"PR-Nr. {number}, AG {court}",
		"PR Nr. {number}, Register court: {court}",
	}},
}

// TestRegisterFormsBeforeAndAfterTheName reads every register form of
// registerForms before and after a company's name (real entries of the
// embedded sample): the reference with its court, and the name as what
// remains, legal form and all.
func TestRegisterFormsBeforeAndAfterTheName(t *testing.T) {
	entries := map[Type]struct{ name, court, number string }{
		HRB: {"Nutzfahrzeugtechnik Dufner GmbH", "Freiburg", "260632"},
		HRA: {"Wissenschaftliches Antiquariat Thomas Haker e. K.", "Freiburg", "703494"},
		VR:  {"Heimat- und Verkehrsverein Stadt Blankenberg e.V.", "Siegburg", "205"},
		GnR: {"Volksbank Karlsruhe eG", "Mannheim", "100002"},
		PR:  {"Architekturbüro Erne, Vogel, Hug, Partnerschaft", "Freiburg", "700005"},
	}
	for _, group := range registerForms {
		e := entries[group.typ]
		court, _ := LookupCourt(e.court)
		for _, form := range group.forms {
			line := strings.NewReplacer("{court}", e.court, "{number}", e.number).Replace(form)
			for _, text := range []string{e.name + ", " + line, line + ", " + e.name, e.name + " " + line, line + " " + e.name} {
				ref, rest, ok := FindRef(text)
				if !ok || ref.Type != group.typ || ref.Number != e.number || ref.Court != court.Code {
					t.Errorf("FindRef(%q) = %v, %v; want %s %s at %s", text, ref, ok, group.typ, e.number, e.court)
					continue
				}
				if NameKey(rest) != NameKey(e.name) {
					t.Errorf("FindRef(%q) leaves %q, want the name %q", text, rest, e.name)
				}
			}
		}
	}
}

// TestAGBeforeACourtIsTheCourt: "AG" before a court's name is the
// Amtsgericht, after a name's word the legal form (Aktiengesellschaft),
// with a register number and without one.
func TestAGBeforeACourtIsTheCourt(t *testing.T) {
	freiburg, _ := LookupCourt("Freiburg")
	for _, tc := range []struct {
		text, rest, form string
	}{
		{"LRP ASSET MANAGEMENT AG Freiburg HRB 541829", "LRP ASSET MANAGEMENT AG", "AG"},
		{"LRP ASSET MANAGEMENT AG HRB 541829 Freiburg", "LRP ASSET MANAGEMENT AG", "AG"},
		{"LRP ASSET MANAGEMENT AG, AG Freiburg HRB 541829", "LRP ASSET MANAGEMENT AG", "AG"},
		{"LRP ASSET MANAGEMENT AG HRB 541829 AG Freiburg", "LRP ASSET MANAGEMENT AG", "AG"},
		{"AG Freiburg HRB 541829, LRP ASSET MANAGEMENT AG", "LRP ASSET MANAGEMENT AG", "AG"},
		{"Nutzfahrzeugtechnik Dufner GmbH AG Freiburg HRB 260632", "Nutzfahrzeugtechnik Dufner GmbH", "GmbH"},
		{"AG Freiburg HRB 260632 Nutzfahrzeugtechnik Dufner GmbH", "Nutzfahrzeugtechnik Dufner GmbH", "GmbH"},
	} {
		ref, rest, ok := FindRef(tc.text)
		if !ok || ref.Court != freiburg.Code {
			t.Errorf("FindRef(%q) = %v, %v; want the court Freiburg", tc.text, ref, ok)
		}
		if _, form, _ := SplitLegalForm(rest); rest != tc.rest || form.Code != tc.form {
			t.Errorf("FindRef(%q) leaves %q (form %q), want %q (form %s)", tc.text, rest, form.Code, tc.rest, tc.form)
		}
	}
	for _, tc := range []struct {
		text, court, rest, form string
	}{
		{"Nutzfahrzeugtechnik Dufner GmbH AG Freiburg", "Freiburg", "Nutzfahrzeugtechnik Dufner GmbH", "GmbH"},
		{"AG Freiburg Nutzfahrzeugtechnik Dufner GmbH", "Freiburg", "Nutzfahrzeugtechnik Dufner GmbH", "GmbH"},
		{"AG Freiburg", "Freiburg", "", ""},
		{"Nutzfahrzeugtechnik Dufner GmbH, Local Court of Freiburg", "Freiburg", "Nutzfahrzeugtechnik Dufner GmbH", "GmbH"},
		{"Register court: Local Court Stuttgart", "Stuttgart", "", ""},
		{"LRP ASSET MANAGEMENT AG Freiburg", "", "LRP ASSET MANAGEMENT AG Freiburg", "AG"},
		{"LRP ASSET MANAGEMENT AG, AG Freiburg", "Freiburg", "LRP ASSET MANAGEMENT AG", "AG"},
	} {
		c, rest, ok := FindCourt(tc.text)
		if ok != (tc.court != "") || ok && c.Name != tc.court && !strings.HasPrefix(c.Name, tc.court) {
			t.Errorf("FindCourt(%q) = %q, %v; want %q", tc.text, c.Name, ok, tc.court)
		}
		if _, form, _ := SplitLegalForm(rest); rest != tc.rest || form.Code != tc.form {
			t.Errorf("FindCourt(%q) leaves %q (form %q), want %q (form %s)", tc.text, rest, form.Code, tc.rest, tc.form)
		}
	}
	if _, form, _ := SplitLegalForm("Nutzfahrzeugtechnik Dufner GmbH AG Freiburg"); form.Code != "GmbH" {
		t.Errorf("the form of a name with a court after it is %q, want GmbH", form.Code)
	}
}

func FuzzFindCourt(f *testing.F) {
	for _, s := range append(registerSeeds, "Müller GmbH AG Marburg", "Register court: Local Court Stuttgart", "Siemens AG München") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, rest, ok := FindCourt(s)
		if !ok {
			if rest != s {
				t.Fatalf("no court in %q but rest %q", s, rest)
			}
			return
		}
		if _, known := CourtByCode(c.Code); !known || c.Former {
			t.Fatalf("court %+v found in %q is not a current court", c, s)
		}
		if len(rest) >= len(s) {
			t.Fatalf("court %s found in %q but rest %q is not shorter", c.Name, s, rest)
		}
	})
}
