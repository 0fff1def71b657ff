package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/register"
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
		if err := writeCanonical(&buf, p); err != nil {
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
	court, _ := register.LookupCourt("München")
	want := register.Ref{Court: court.Code, Type: register.HRB, Number: "6684"}
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

// ExampleDecodeCanonicalLine reads one line of the canonical format
// (docs/formats.md).
func ExampleDecodeCanonicalLine() {
	p, err := DecodeCanonicalLine([]byte(`{"format":"companydocs/v1","id":"dp_xd6fknwcheqvzkkphrvq","source":"registry_cache","court":"B1204","register_type":"HRB","register_number":"260641","name":"GeVo Zahntechnik GmbH","legal_form":"GmbH","seat":"Emmendingen","federal_state":"Baden-Württemberg","status":"removed","documents":["HD","DK","UT","VÖ"],"retrieved_at":"2018-07-28T03:16:34Z"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.ID, p.Ref, "|", p.Name, "|", p.Seat, "| removed:", p.Removed, "| documents:", p.Documents)
	// Output:
	// dp_xd6fknwcheqvzkkphrvq Freiburg HRB 260641 | GeVo Zahntechnik GmbH | Emmendingen | removed: true | documents: [HD DK UT VÖ]
}

// canonicalFromProfile converts a profile into its canonical record.
func canonicalFromProfile(p *companydocs.Profile) CanonicalRecord {
	rec := CanonicalRecord{
		Format:         CanonicalFormatVersion,
		ID:             p.ID,
		Source:         p.Source,
		Court:          p.Ref.Court,
		FormerCourt:    p.Ref.FormerCourt,
		RegisterType:   string(p.Ref.Type),
		RegisterNumber: p.Ref.Number,
		RegisterSuffix: p.Ref.Suffix,
		Name:           p.Name,
		LegalForm:      p.LegalForm,
		Seat:           p.Seat,
		Address:        p.Address,
		FederalState:   p.FederalState,
		Status:         canonicalStatusActive,
		Officers:       p.Officers,
		PreviousNames:  p.PreviousNames,
		LEIs:           p.LEIs,
	}
	if p.Removed {
		rec.Status = canonicalStatusRemoved
	}
	for _, d := range p.Documents {
		rec.Documents = append(rec.Documents, string(d))
	}
	if !p.RetrievedAt.IsZero() {
		rec.RetrievedAt = p.RetrievedAt.UTC().Format(time.RFC3339)
	}
	return rec
}

// writeCanonical writes p as one canonical JSONL line.
func writeCanonical(w io.Writer, p *companydocs.Profile) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(canonicalFromProfile(p)); err != nil {
		return fmt.Errorf("encode canonical record %s: %w", p.ID, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write canonical record %s: %w", p.ID, err)
	}
	return nil
}
