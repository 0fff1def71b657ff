package ingest

import (
	"strings"
	"testing"

	"companydocs"
)

func TestOversizedFieldsAreSkipped(t *testing.T) {
	long := strings.Repeat("Bau ", maxFieldBytes/4+1)
	for name, p := range map[string]*companydocs.Profile{
		"name":        {Name: long},
		"former name": {Name: "Bau GmbH", PreviousNames: []string{"Alt GmbH", long}},
		"officer":     {Name: "Bau GmbH", Officers: []companydocs.Officer{{Name: long}}},
		"address":     {Name: "Bau GmbH", Address: long},
	} {
		skip := oversizedProfile(p)
		if skip == nil || skip.Reason != ReasonFieldTooLong || !strings.HasPrefix(skip.Detail, name+" of ") {
			t.Errorf("%s over %d bytes: skip %v", name, maxFieldBytes, skip)
		}
	}
	if skip := oversizedGLEIF(&GLEIFRecord{LegalName: long}); skip == nil {
		t.Error("a GLEIF legal name over the limit was not skipped")
	}
	// No real record comes near the limit.
	if _, sum := fullRun(t); sum.Reason(KindSkipped, ReasonFieldTooLong) != 0 {
		t.Errorf("%d real records skipped for an oversized field", sum.Reason(KindSkipped, ReasonFieldTooLong))
	}
}
