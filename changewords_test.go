package companydocs

import (
	"encoding/json"
	"testing"
)

// TestChangeSaidInBothLanguages says changes as the watch list shows them:
// as built and as read back from a stored watch (JSON), in English and
// German; an officer change names only the side that has someone, so no
// "left none" is ever said.
func TestChangeSaidInBothLanguages(t *testing.T) {
	joined := FieldChange{Field: FieldOfficers, Before: []OfficerValue{}, After: []OfficerValue{{Name: "Anna Schmidt", Role: "Geschäftsführerin"}}}
	status := FieldChange{Field: FieldStatus, Before: ProfileStatusRegistered, After: ProfileStatusInLiquidation}
	register := FieldChange{Field: FieldRegister, Before: RegisterValue{Text: "Kiel HRB 1"}, After: RegisterValue{Text: "Lübeck HRB 2"}}
	for _, tc := range []struct {
		change   FieldChange
		lang, in string
	}{
		{joined, "en", "Joined the management or representation: Anna Schmidt (Geschäftsführerin)"},
		{joined, "de", "In Geschäftsführung oder Vertretung eingetreten: Anna Schmidt (Geschäftsführerin)"},
		{status, "en", "Status: registered → in liquidation"},
		{status, "de", "Status: eingetragen → in Liquidation"},
		{register, "de", "Registergericht gewechselt: Kiel HRB 1 → Lübeck HRB 2"},
		{FieldChange{Field: FieldName, Before: "A GmbH", After: ""}, "en", "Renamed: A GmbH → –"},
	} {
		stored := tc.change
		b, _ := json.Marshal(tc.change)
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
		for _, c := range []FieldChange{tc.change, stored} {
			if got := c.In(tc.lang); got != tc.in {
				t.Errorf("%s %s (%T): %q, want %q", tc.lang, c.Field, c.After, got, tc.in)
			}
		}
	}
	w := WatchIn("de", Watch{LastChange: &WatchChange{Changes: []FieldChange{status}}})
	if w.LastChange.Changes[0].Message != "Status: eingetragen → in Liquidation" {
		t.Errorf("WatchIn: %+v", w.LastChange.Changes)
	}
}
