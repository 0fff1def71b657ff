package ingest

import (
	"bufio"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"companydocs"
	"companydocs/register"
)

// withBidi hides bidirectional controls in s: a right-to-left override
// before it, isolates and marks inside, a pop and the Arabic letter mark
// after it, as a "Trojan Source" name would.
func withBidi(s string) string {
	r := []rune(s)
	mid := len(r) / 2
	return "\u202E" + string(r[:mid]) + "\u2066\u200F\u202B" + string(r[mid:]) + "\u2069\u200E\u202C\u061C"
}

// bidiInTextFields puts bidirectional controls into every string value of
// a decoded JSON record whose key is a text field.
func bidiInTextFields(v any, text map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && text[k] && s != "" {
				x[k] = withBidi(s)
			} else if names, ok := val.([]any); ok && k == "previous_names" {
				for i, n := range names {
					if s, ok := n.(string); ok {
						names[i] = withBidi(s)
					}
				}
			} else {
				x[k] = bidiInTextFields(val, text)
			}
		}
	case []any:
		for i, val := range x {
			x[i] = bidiInTextFields(val, text)
		}
	}
	return v
}

func rewriteJSON(t *testing.T, line []byte, text map[string]bool) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(bidiInTextFields(v, text))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// realSampleLine returns the sample's line of an OffeneRegister company number.
func realSampleLine(t *testing.T, companyNumber string) []byte {
	t.Helper()
	f, err := Open(sampleFile, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f.content)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"company_number": "`+companyNumber+`"`) || strings.Contains(sc.Text(), `"company_number":"`+companyNumber+`"`) {
			return []byte(sc.Text())
		}
	}
	t.Fatalf("%s is not in %s (%v)", companyNumber, sampleFile, sc.Err())
	return nil
}

// TestBidiControlsAreDroppedAtIngest hides bidirectional controls in the
// text fields of real records, one per format (an OffeneRegister line with
// an officer, a former name, seat and address; the same entry as a
// canonical line; a golden-copy row and a GLEIF API line): the record read
// is the one read without them, and no field holds a control. Before the
// fix the controls reached the profile (and the page) as they came.
func TestBidiControlsAreDroppedAtIngest(t *testing.T) {
	orLine := realSampleLine(t, "B1204_HRB260632") // Nutzfahrzeugtechnik Dufner GmbH, formerly DITTON GmbH
	clean, err := DecodeOffeneRegisterLine(orLine)
	if err != nil {
		t.Fatal(err)
	}
	var canonical strings.Builder
	if err := writeCanonical(&canonical, clean); err != nil {
		t.Fatal(err)
	}
	orText := map[string]bool{"name": true, "company_name": true, "registered_address": true, "registered_office": true, "federal_state": true,
		"position": true, "firstname": true, "lastname": true, "city": true}
	canonicalText := map[string]bool{"name": true, "seat": true, "address": true, "federal_state": true, "first_name": true, "last_name": true,
		"position": true, "city": true, "legal_name": true}
	profiles := []struct {
		format string
		decode func([]byte) (*companydocs.Profile, error)
		line   []byte
	}{
		{"OffeneRegister", DecodeOffeneRegisterLine, rewriteJSON(t, orLine, orText)},
		{"canonical", DecodeCanonicalLine, rewriteJSON(t, []byte(canonical.String()), canonicalText)},
	}
	for _, c := range profiles {
		t.Run(c.format, func(t *testing.T) {
			if !strings.Contains(string(c.line), "\u202E") {
				t.Fatal("no control was hidden in the line")
			}
			got, err := c.decode(c.line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, clean) {
				t.Errorf("with controls:\n%+v\nwithout:\n%+v", got, clean)
			}
		})
	}
	t.Run("GLEIF golden copy", func(t *testing.T) {
		row := realGoldenRow(t, "39120012QMNN2NSCP866") // Deutsche Factoring Bank GmbH & Co. KG, Bremen
		hidden := respelled(row, row[colLEI], map[string]string{colLegalName: withBidi(row[colLegalName]), colCity: withBidi(row[colCity]),
			colRAEntityID: withBidi(row[colRAEntityID])})
		sink := newMemSink()
		mustRun(t, sink, Options{}, writeGoldenCopy(t, hidden))
		p := sink.mustGet(t, companydocs.DiscoveryID(register.LEI(row[colLEI])))
		if p.Name != row[colLegalName] || p.Seat != row[colCity] || p.Ref.Number != "15633" || !p.Verified {
			t.Errorf("profile %q in %q, %+v, verified %v; want %q in %q", p.Name, p.Seat, p.Ref, p.Verified, row[colLegalName], row[colCity])
		}
	})
	t.Run("GLEIF API", func(t *testing.T) {
		line := `{"lei":"39120012QMNN2NSCP866","entity_legal_name_name":"` + withBidi("Deutsche Factoring Bank GmbH & Co. KG") +
			`","entity_legal_address_city":"` + withBidi("Bremen") + `","entity_legal_address_country":"DE"}`
		rec, err := DecodeGLEIFJSONLine([]byte(line))
		if err != nil || rec.LegalName != "Deutsche Factoring Bank GmbH & Co. KG" || rec.City != "Bremen" {
			t.Errorf("record %q in %q, %v", rec.LegalName, rec.City, err)
		}
	})
}

func TestCleanText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Nutzfahrzeugtechnik Dufner GmbH", "Nutzfahrzeugtechnik Dufner GmbH"},
		{"  Beispiel \t  GmbH ", "Beispiel GmbH"},
		{withBidi("Müller & Söhne GmbH"), "Müller & Söhne GmbH"},
		{"Bau\u202EStein", "BauStein"},
		{"\u202E \u2066", ""},
		{"a\u00a0b", "a b"},
	} {
		got := cleanText(c.in)
		if got != c.want || strings.ContainsFunc(got, func(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }) {
			t.Errorf("cleanText(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}
