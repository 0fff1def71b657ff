package resolver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"companydocs/resolver"
)

// TestDiscoveryGapsAreCodes checks that the reason of a real unverified
// GLEIF record of the embedded sample names what is missing as codes with
// params, as a client receives them (JSON), so that the page can say them
// in German; and that the English sentence stays as it was.
func TestDiscoveryGapsAreCodes(t *testing.T) {
	idx := mustSample(t)
	for _, tc := range []struct {
		lei      string // a real record of data/lei_sample.csv
		gaps     []string
		sentence string
	}{
		{"1595OF0DUL28A4QDJ487", []string{"not_fully_corroborated", "register_name_differs"},
			`LEI register record not verified: GLEIF's validation: partly corroborated, not fully corroborated; GLEIF's name “Berufsbildungsakademie "Altmark" GmbH” differs from that of register entry Stendal HRB 573, “Schweißausbildungsstätte "Altmark" GmbH” (similarity 0.58)`},
		{"159559AIRJTK5Q44LO95", []string{"court_unknown", "no_register_reference", "not_fully_corroborated"},
			"LEI register record not verified: GLEIF's registration authority RA000737 is not a German register court; GLEIF gives no register number; GLEIF's validation: partly corroborated, not fully corroborated"},
		{"529900IH9V4I3VHQVO92", []string{"court_unknown", "register_reference_unparsed"},
			"LEI register record not verified: GLEIF's registration authority RA000192 is not a German register court; GLEIF's register number “310 327 481” cannot be read"},
	} {
		res := mustResolve(t, idx, resolver.Request{Query: tc.lei})
		if len(res.Candidates) != 1 || len(res.Candidates[0].ConfidenceReasons) == 0 {
			t.Fatalf("%s: candidates %+v", tc.lei, res.Candidates)
		}
		c := res.Candidates[0]
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Reasons []string `json:"confidence_reasons"`
			Details []struct {
				Code   string `json:"code"`
				Params struct {
					Gaps []struct {
						Code   string         `json:"code"`
						Params map[string]any `json:"params"`
					} `json:"gaps"`
				} `json:"params"`
			} `json:"reason_details"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		i := indexOf(got.Reasons, tc.sentence)
		if i < 0 || i >= len(got.Details) || got.Details[i].Code != resolver.ReasonDiscoveryUnverified {
			t.Errorf("%s: reasons %q, details %s; want %q said by %s", tc.lei, got.Reasons, raw, tc.sentence, resolver.ReasonDiscoveryUnverified)
			continue
		}
		var codes []string
		for _, g := range got.Details[i].Params.Gaps {
			codes = append(codes, g.Code)
			for name, v := range g.Params {
				if s, ok := v.(string); ok && strings.Contains(s, " is not ") {
					t.Errorf("%s: gap %s param %s is an English sentence: %q", tc.lei, g.Code, name, s)
				}
			}
		}
		if strings.Join(codes, ",") != strings.Join(tc.gaps, ",") {
			t.Errorf("%s: gaps %q, want %q (params %s)", tc.lei, codes, tc.gaps, raw)
		}
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
