package resolver_test

import (
	"context"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
	"companydocs/resolver"
	"companydocs/textfold"
)

// withDetail returns the candidate of profile id, or nil.
func candidateOf(res *resolver.Result, id string) *companydocs.Candidate {
	for i := range res.Candidates {
		if res.Candidates[i].ProfileID == id {
			return &res.Candidates[i]
		}
	}
	return nil
}

func hasCode(c *companydocs.Candidate, code string) bool {
	for _, d := range c.ReasonDetails {
		if d.Code == code {
			return true
		}
	}
	return false
}

func courtOf(p *companydocs.Profile) string {
	c, _ := register.CourtByCode(p.Ref.Court)
	return c.Name
}

// namedLive are live entries, unique at their court, whose name has two
// words or more (a one-word name is a short query).
func namedLive(idx *memIndex, n int) []*companydocs.Profile {
	var out []*companydocs.Profile
	for _, p := range uniqueLive(idx, 4*n) {
		if p.Seat != "" && len(strings.Fields(p.Name)) >= 2 && len(out) < n {
			out = append(out, p)
		}
	}
	return out
}

// A register number and court given as properties are looked up by
// number, as a typed one is: the name beside them confirms the entry and
// it is exact.
func TestPropertiesRegisterNumberIsLookedUp(t *testing.T) {
	idx := mustSample(t)
	for _, p := range namedLive(idx, 100) {
		req := resolver.Request{Query: p.Name, Properties: resolver.Properties{RegisterNumber: p.Ref.NumberKey(), Court: courtOf(p)}}
		res := mustResolve(t, idx, req)
		if len(res.Candidates) == 0 || res.Candidates[0].ProfileID != p.ID || res.Candidates[0].ConfidenceLabel != companydocs.LabelExact {
			t.Errorf("%q with %s at %s: %+v, want %s exact", p.Name, p.Ref.NumberKey(), courtOf(p), res.Candidates, p.ID)
		}
		if res.Understanding.Kind != "register_reference" {
			t.Errorf("%q: understood as %s, want register_reference", p.Name, res.Understanding.Kind)
		}
	}
}

// A register number that names another company than the text's is never
// exact, for neither company: the text's company is found, marked with
// the number it does not bear, and the number's entry with the name that
// contradicts it.
func TestPropertiesAnotherCompanysNumberIsNeverExact(t *testing.T) {
	idx := mustSample(t)
	ps := namedLive(idx, 80)
	found := 0
	for i := 0; i+1 < len(ps); i += 2 {
		named, numbered := ps[i], ps[i+1]
		req := resolver.Request{Query: named.Name + " " + named.Seat, Properties: resolver.Properties{RegisterNumber: numbered.Ref.NumberKey(), Court: courtOf(numbered)}}
		res := mustResolve(t, idx, req)
		for _, c := range res.Candidates {
			if c.ConfidenceLabel == companydocs.LabelExact {
				t.Errorf("%q with %s (%s's number): %s is exact", req.Query, numbered.Ref.NumberKey(), numbered.Name, c.Name)
			}
		}
		if c := candidateOf(res, named.ID); c != nil {
			found++
			if !hasCode(c, resolver.ReasonRegisterNumberDiffers) || c.Confidence > resolver.IdentifierConflictCap {
				t.Errorf("%q: the text's company %s = %.3f %v, want register_number_differs, capped", req.Query, c.Name, c.Confidence, c.ConfidenceReasons)
			}
		}
		if c := candidateOf(res, numbered.ID); c != nil && !hasCode(c, resolver.ReasonNameConflict) {
			t.Errorf("%q: the number's company %s lacks name_conflict: %v", req.Query, c.Name, c.ConfidenceReasons)
		}
	}
	if found < 30 {
		t.Errorf("the text's company was found in %d of 40 queries", found)
	}
}

// A city given confirms the seat as a typed one does: name and city are
// exact where name and seat typed together are; a city that is not the
// seat is said, lowers the confidence and keeps the name from being exact.
func TestPropertiesCityConfirmsSeat(t *testing.T) {
	idx := mustSample(t)
	ps := namedLive(idx, 120)
	n, exact := 0, 0
	for i, p := range ps {
		res := mustResolve(t, idx, resolver.Request{Query: p.Name, Properties: resolver.Properties{City: p.Seat}})
		if len(res.Candidates) == 0 || res.Candidates[0].ProfileID != p.ID {
			t.Errorf("%q in %s: %v", p.Name, p.Seat, res.Candidates)
			continue
		}
		n++
		top := res.Candidates[0]
		if top.ConfidenceLabel == companydocs.LabelExact {
			exact++
		}
		if !hasCode(&top, resolver.ReasonSeatMatches) {
			t.Errorf("%q in %s: no seat_matches in %v", p.Name, p.Seat, top.ConfidenceReasons)
		}
		other := ps[(i+1)%len(ps)].Seat
		if textfold.Fold(other) == textfold.Fold(p.Seat) {
			continue
		}
		wrong := mustResolve(t, idx, resolver.Request{Query: p.Name, Properties: resolver.Properties{City: other}})
		c := candidateOf(wrong, p.ID)
		if c == nil || c.ConfidenceLabel == companydocs.LabelExact || !hasCode(c, resolver.ReasonSeatDiffers) || c.Confidence >= top.Confidence {
			t.Errorf("%q in %s, not %s: %+v", p.Name, other, p.Seat, c)
		}
	}
	if n < 100 || exact < n/2 {
		t.Errorf("%d name+city queries, %d exact; want most exact", n, exact)
	}
}

// An officer given is looked for among the candidate's officers; one who
// is not there is said.
func TestPropertiesOfficer(t *testing.T) {
	idx := mustSample(t)
	checked := 0
	for _, p := range namedLive(idx, 200) {
		if len(p.Officers) == 0 || checked == 40 {
			continue
		}
		checked++
		plain := mustResolve(t, idx, resolver.Request{Query: p.Name})
		res := mustResolve(t, idx, resolver.Request{Query: p.Name, Properties: resolver.Properties{Officer: p.Officers[0].Name}})
		c, before := candidateOf(res, p.ID), candidateOf(plain, p.ID)
		if c == nil || !hasCode(c, resolver.ReasonOfficerMatches) || (before != nil && c.Confidence < before.Confidence) {
			t.Errorf("%q with officer %s: %+v (without: %+v)", p.Name, p.Officers[0].Name, c, before)
		}
		res = mustResolve(t, idx, resolver.Request{Query: p.Name, Properties: resolver.Properties{Officer: "Erika Mustermann"}})
		if c := candidateOf(res, p.ID); c == nil || !hasCode(c, resolver.ReasonOfficerNotFound) {
			t.Errorf("%q with an officer it does not have: %+v", p.Name, c)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d entries with officers", checked)
	}
}

// An LEI given is looked up: with the name of its holder it is exact, with
// another company's name neither is.
func TestPropertiesLEI(t *testing.T) {
	idx := mustSample(t)
	var holder *companydocs.Profile
	for lei, ps := range idx.byLEI {
		if len(ps) == 1 && ps[0].Verified && ps[0].Source == companydocs.SourceRegistryCache && len(strings.Fields(ps[0].Name)) >= 2 {
			if holder == nil || ps[0].ID < holder.ID {
				holder = ps[0]
			}
			_ = lei
		}
	}
	if holder == nil {
		t.Fatal("no registry-cache entry of the sample carries an LEI")
	}
	lei := string(holder.LEIs[0].LEI)
	res := mustResolve(t, idx, resolver.Request{Query: holder.Name, Properties: resolver.Properties{LEI: lei}})
	if len(res.Candidates) == 0 || res.Candidates[0].ProfileID != holder.ID || res.Candidates[0].ConfidenceLabel != companydocs.LabelExact {
		t.Errorf("%q with its LEI %s: %+v", holder.Name, lei, res.Candidates)
	}
	other := namedLive(idx, 1)[0]
	res = mustResolve(t, idx, resolver.Request{Query: other.Name, Properties: resolver.Properties{LEI: lei}})
	for _, c := range res.Candidates {
		if c.ConfidenceLabel == companydocs.LabelExact {
			t.Errorf("%q with %s's LEI: %s is exact", other.Name, holder.Name, c.Name)
		}
	}
	if c := candidateOf(res, other.ID); c == nil || !hasCode(c, resolver.ReasonLEIDiffers) {
		t.Errorf("%q with another's LEI: %+v, want lei_differs", other.Name, c)
	}
}

// A legal form, an address and a court given confirm or contradict; a
// property that cannot be read is said in a note and the text answers.
func TestPropertiesFormAddressCourt(t *testing.T) {
	idx := mustSample(t)
	var p *companydocs.Profile
	for _, q := range namedLive(idx, 300) {
		if q.LegalForm == "GmbH" && q.Address != "" {
			p = q
			break
		}
	}
	if p == nil {
		t.Fatal("no GmbH with an address in the sample")
	}
	base, _, _ := register.SplitLegalForm(p.Name)
	name := strings.Join(base, " ")
	agree := mustResolve(t, idx, resolver.Request{Query: name, Properties: resolver.Properties{LegalForm: "G.m.b.H.", Address: p.Address, Court: courtOf(p)}})
	differ := mustResolve(t, idx, resolver.Request{Query: name, Properties: resolver.Properties{LegalForm: "AG", Address: "Musterweg 99, 99999 Nirgendwo", Court: "Amtsgericht Flensburg"}})
	a, d := candidateOf(agree, p.ID), candidateOf(differ, p.ID)
	if a == nil || d == nil {
		t.Fatalf("%q: agreeing %+v, differing %+v", name, a, d)
	}
	for _, code := range []string{resolver.ReasonLegalFormMatches, resolver.ReasonAddressMatches, resolver.ReasonCourtMatches} {
		if !hasCode(a, code) {
			t.Errorf("%q with its form, address and court: no %s in %v", name, code, a.ConfidenceReasons)
		}
	}
	for _, code := range []string{resolver.ReasonLegalFormDiffers, resolver.ReasonAddressDiffers, resolver.ReasonCourtDiffers} {
		if !hasCode(d, code) {
			t.Errorf("%q with another form, address and court: no %s in %v", name, code, d.ConfidenceReasons)
		}
	}
	if d.Confidence >= a.Confidence {
		t.Errorf("%q: %.3f with disagreeing properties, %.3f with agreeing ones", name, d.Confidence, a.Confidence)
	}
	res := mustResolve(t, idx, resolver.Request{Query: p.Name, Properties: resolver.Properties{RegisterNumber: "Nummer sechs"}})
	if len(res.Understanding.NoteDetails) == 0 || res.Understanding.NoteDetails[0].Code != resolver.NotePropertyUnread || candidateOf(res, p.ID) == nil {
		t.Errorf("an unreadable register number: notes %v, candidates %v", res.Understanding.Notes, res.Candidates)
	}
}

// Properties are checked like the query: too long or with control
// characters is invalid_query naming the property.
func TestPropertiesAreValidated(t *testing.T) {
	idx := mustSample(t)
	for _, props := range []resolver.Properties{
		{City: strings.Repeat("a", resolver.MaxPropertyRunes+1)},
		{Officer: "Erika\x00Mustermann"},
		{Address: "Hauptstraße 1\n50667 Köln"},
	} {
		_, err := resolver.Resolve(context.Background(), idx, resolver.Request{Query: "Rheinbahn AG", Properties: props})
		if companydocs.ErrorCode(err) != companydocs.EINVALIDQUERY || !strings.Contains(err.Error(), "property") {
			t.Errorf("%+v: %v, want invalid_query naming the property", props, err)
		}
	}
}
