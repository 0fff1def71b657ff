package companydocs

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"companydocs/register"
)

// sampleLEIs reads the LEIs of the embedded GLEIF sample, in file order.
func sampleLEIs(t *testing.T) []register.LEI {
	t.Helper()
	f, err := os.Open(filepath.Join("data", "lei_sample.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 3 || rows[0][0] != "LEI" {
		t.Fatalf("lei_sample.csv: %d rows, %v", len(rows), err)
	}
	var out []register.LEI
	for _, r := range rows[1:] {
		out = append(out, register.LEI(r[0]))
	}
	return out
}

func TestDiscoveryIDBelongsToItsProfile(t *testing.T) {
	leis := sampleLEIs(t)
	own, linked, other := leis[0], leis[1], leis[2]
	discovery := &Profile{ID: DiscoveryID(own), Source: SourceDiscovery, LEIs: []LEILink{{LEI: own}}}
	register := &Profile{ID: "dp_x", Source: SourceRegistryCache, LEIs: []LEILink{{LEI: linked}}}
	for _, c := range []struct {
		name string
		p    *Profile
		id   string
		want bool
	}{
		{"a discovery profile's own id", discovery, DiscoveryID(own), true},
		{"another real record's id on a discovery profile", discovery, DiscoveryID(other), false},
		{"the id of the record linked to a register profile", register, DiscoveryID(linked), true},
		{"another real record's id on a register profile", register, DiscoveryID(other), false},
		{"a register profile's own id", register, "dp_x", false},
		{"empty", discovery, "", false},
	} {
		if got := c.p.HasDiscoveryID(c.id); got != c.want {
			t.Errorf("%s: HasDiscoveryID(%q) = %v, want %v", c.name, c.id, got, c.want)
		}
	}
}

func TestIsDiscoveryID(t *testing.T) {
	for _, lei := range sampleLEIs(t) {
		if id := DiscoveryID(lei); !IsDiscoveryID(id) {
			t.Fatalf("IsDiscoveryID(%q) = false for the id of %s", id, lei)
		}
	}
	id := DiscoveryID(sampleLEIs(t)[0])
	for _, bad := range []string{"", "dc_", "dc_123", id + "a", id[:len(id)-1], "DC_" + id[3:], "dc_" + "ABCDEFGHIJKLMNOPQRST",
		"dc_abcdefghijklmnopqr01", "dp_" + id[3:], "<img src=x onerror=alert(1)>", "dc_abcdefghijklmnopqrsä"} {
		if IsDiscoveryID(bad) {
			t.Errorf("IsDiscoveryID(%q) = true", bad)
		}
	}
}
