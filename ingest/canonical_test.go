package ingest

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"companydocs"
)

func TestCanonicalRoundTrip(t *testing.T) {
	from, _ := fullRun(t)
	var buf bytes.Buffer
	registry := 0
	for _, id := range from.ids() {
		p := from.mustGet(t, id)
		if p.Source != companydocs.SourceRegistryCache {
			continue
		}
		registry++
		if err := WriteCanonical(&buf, p); err != nil {
			t.Fatal(err)
		}
	}
	path := writeTemp(t, "canonical.jsonl", buf.Bytes())
	to := newMemSink()
	sum := mustRun(t, to, Options{}, path)
	if sum.Files[0].Format != FormatCanonical || sum.Registry.Indexed != registry || registry != 4205 {
		t.Fatalf("canonical read: %+v, %d registry profiles written", sum.Registry, registry)
	}
	for _, id := range to.ids() {
		want, got := from.mustGet(t, id), to.mustGet(t, id)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("round trip changed %s:\nwant %+v\ngot  %+v", id, want, got)
		}
	}
}

func TestCanonicalLineByHand(t *testing.T) {
	line := `{"format":"companydocs/v1","court":"München","register_type":"HRB","register_number":"6684","name":"  Beispiel   GmbH ","status":"active","documents":["AD","CD","XX","AD"],"retrieved_at":"2024-05-01T10:00:00Z"}`
	p, err := DecodeCanonicalLine([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	court, _ := companydocs.LookupCourt("München")
	want := companydocs.RegisterRef{Court: court.Code, Type: companydocs.HRB, Number: "6684"}
	if p.Ref != want || p.ID != companydocs.ProfileID(want) || p.Name != "Beispiel GmbH" || p.LegalForm != "GmbH" || !p.Verified || !p.OrderingEligible() {
		t.Errorf("profile = %+v", p)
	}
	if !reflect.DeepEqual(p.Documents, []companydocs.DocumentType{"AD", "CD"}) {
		t.Errorf("documents = %v", p.Documents)
	}
	for _, bad := range []struct{ line, reason string }{
		{`{"format":"companydocs/v1","court":"Atlantis","register_type":"HRB","register_number":"1","name":"X"}`, ReasonUnknownCourt},
		{`{"format":"companydocs/v1","court":"München","register_type":"ABC","register_number":"1","name":"X"}`, ReasonNoRegisterRef},
		{`{"format":"companydocs/v1","court":"München","register_type":"HRB","register_number":"1","name":" "}`, ReasonNoName},
		{`{"format":"companydocs/v1","source":"discovery","court":"München","register_type":"HRB","register_number":"1","name":"X"}`, ReasonUnsupportedSource},
		{`{"format":"companydocs/v9","court":"München","register_type":"HRB","register_number":"1","name":"X"}`, ReasonUnsupportedFormat},
	} {
		if _, err := DecodeCanonicalLine([]byte(bad.line)); err == nil || !strings.HasPrefix(err.Error(), bad.reason) {
			t.Errorf("%s: err = %v, want reason %q", bad.line, err, bad.reason)
		}
	}
}

// ExampleWriteCanonical shows the canonical line of a register entry.
func ExampleWriteCanonical() {
	p, err := DecodeOffeneRegisterLine([]byte(`{"all_attributes": {"_registerArt": "HRB", "_registerNummer": "260641", "additional_data": {"AD": false, "CD": false, "DK": true, "HD": true, "SI": false, "UT": true, "VÖ": true}, "federal_state": "Baden-Württemberg", "native_company_number": "Freiburg HRB 260641", "registered_office": "Emmendingen", "registrar": "Freiburg"}, "company_number": "B1204_HRB260641", "current_status": "removed", "jurisdiction_code": "de", "name": "GeVo Zahntechnik GmbH", "retrieved_at": "2018-07-28T03:16:34Z", "_line": 100001}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	WriteCanonical(&buf, p)
	fmt.Print(buf.String())
	// Output:
	// {"format":"companydocs/v1","id":"dp_xd6fknwcheqvzkkphrvq","source":"registry_cache","court":"B1204","register_type":"HRB","register_number":"260641","name":"GeVo Zahntechnik GmbH","legal_form":"GmbH","seat":"Emmendingen","federal_state":"Baden-Württemberg","status":"removed","documents":["HD","DK","UT","VÖ"],"retrieved_at":"2018-07-28T03:16:34Z"}
}
