package ingest

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// LinkMethod is recorded on every LEI link made from a GLEIF record's
// registration authority code and register number.
const LinkMethod = "ra_code+register_number"

// DiscoveryMethod is recorded on the LEI of a discovery profile: the LEI is
// the record's own.
const DiscoveryMethod = "gleif_record"

// NameMatchThreshold is the similarity (0..1, see nameSimilarity) at or
// above which the GLEIF legal name and the register name are taken to name
// the same company. Below it the names "clearly differ": a register number
// can be reused by another company, and a wrong LEI on a verified profile is
// worse than a missing one. Chosen on the real pairs in the tests: spelling
// variants ("Bau Stein" / "Bau-Stein", "Co.KG" / "Co. KG", an added "(bbz)")
// score 0.9 and more, different companies under one number below 0.5.
const NameMatchThreshold = 0.7

// gleifMatch is the outcome of matching a GLEIF record against the sink.
type gleifMatch struct {
	court    register.Court
	courtOK  bool
	ref      register.Ref
	refErr   error
	target   *companydocs.Profile // set when the record links
	conflict string               // conflict reason, if any
	detail   string
	// conflictGap says the conflict as a verification gap.
	conflictGap companydocs.VerificationGap
}

// matchGLEIF finds the registry-cache profile a GLEIF record belongs to.
func matchGLEIF(sink Sink, r *GLEIFRecord) (gleifMatch, error) {
	m := gleifMatch{}
	m.court, m.courtOK = register.CourtByRA(r.RACode)
	m.ref, m.refErr = parseGLEIFRef(r.RAEntityID)
	if !m.courtOK || m.refErr != nil {
		return m, nil
	}
	m.ref.Court = m.court.Code
	found, err := sink.ByNumber(m.ref.Type, m.ref.Number)
	if err != nil {
		return m, fmt.Errorf("look up %s: %w", m.ref.NumberKey(), err)
	}
	candidates := filterCandidates(found, m.court, m.ref.Suffix)
	m.pick(candidates, r)
	return m, nil
}

// pick chooses the one candidate to link, or records a conflict.
func (m *gleifMatch) pick(candidates []*companydocs.Profile, r *GLEIFRecord) {
	if len(candidates) == 0 {
		return
	}
	target := candidates[0]
	if len(candidates) > 1 {
		live := liveProfiles(candidates)
		if len(live) != 1 {
			m.conflict = ReasonSeveralEntries
			m.detail = fmt.Sprintf("%s %s matches %d entries (%d live): %s", m.court.Name, m.ref.NumberKey(), len(candidates), len(live), describeProfiles(candidates, 4))
			m.conflictGap = companydocs.VerificationGap{Code: companydocs.GapSeveralRegisterEntries, Params: companydocs.GapParams{
				Court: m.court.Name, RegisterNumber: m.ref.NumberKey(), Entries: len(candidates), Live: len(live), Listed: listProfiles(candidates, 4)}}
			return
		}
		target = live[0]
	}
	if sim := bestNameSimilarity(r.LegalName, target); sim < NameMatchThreshold {
		m.conflict = ReasonNameDiffers
		m.detail = fmt.Sprintf("GLEIF name %q, register entry %s is %q (similarity %.2f)", r.LegalName, target.Ref.String(), target.Name, sim)
		m.conflictGap = companydocs.VerificationGap{Code: companydocs.GapRegisterNameDiffers, Params: companydocs.GapParams{
			GLEIFName: r.LegalName, Entry: target.Ref.String(), Name: target.Name, Percent: int(math.Round(100 * sim))}}
		return
	}
	m.target = target
}

// parseGLEIFRef parses a RegistrationAuthorityEntityID such as "HRB 6684",
// "HRB 158855 B" or "HRB 1279 ME". The court comes from the RA code, not
// from the id.
func parseGLEIFRef(id string) (register.Ref, error) {
	if strings.TrimSpace(id) == "" {
		return register.Ref{}, register.ErrRef
	}
	ref, err := register.ParseRef(id)
	if err != nil {
		return register.Ref{}, err
	}
	ref.Court, ref.FormerCourt = "", ""
	return ref, nil
}

// filterCandidates keeps the registry-cache profiles at the court whose
// suffix matches the GLEIF suffix.
func filterCandidates(found []*companydocs.Profile, court register.Court, suffix string) []*companydocs.Profile {
	var out []*companydocs.Profile
	for _, p := range found {
		if p.Source == companydocs.SourceRegistryCache && register.SameCourt(p.Ref.Court, court.Code) && suffixMatches(court, suffix, p.Ref.Suffix) {
			out = append(out, p)
		}
	}
	return out
}

// suffixMatches compares the suffix GLEIF writes with the profile's at
// court (see register.SuffixesAgree). A GLEIF id without a suffix may
// name any entry with the number; several matches then make a conflict.
func suffixMatches(court register.Court, gleif, profile string) bool {
	return gleif == "" || register.SuffixesAgree(court.Code, gleif, profile)
}

func liveProfiles(ps []*companydocs.Profile) []*companydocs.Profile {
	var live []*companydocs.Profile
	for _, p := range ps {
		if !p.Removed {
			live = append(live, p)
		}
	}
	return live
}

func describeProfiles(ps []*companydocs.Profile, max int) string {
	parts := listProfiles(ps, max)
	if len(ps) > max {
		parts = append(parts, fmt.Sprintf("and %d more", len(ps)-max))
	}
	return strings.Join(parts, ", ")
}

// listProfiles names the first max profiles by register reference and
// quoted name.
func listProfiles(ps []*companydocs.Profile, max int) []string {
	var parts []string
	for _, p := range ps[:min(max, len(ps))] {
		parts = append(parts, fmt.Sprintf("%s %q", p.Ref.String(), p.Name))
	}
	return parts
}

// bestNameSimilarity compares a GLEIF legal name with the profile's name
// and previous names (GLEIF may carry a name the register has since changed).
func bestNameSimilarity(name string, p *companydocs.Profile) float64 {
	best := nameSimilarity(name, p.Name)
	for _, prev := range p.PreviousNames {
		if s := nameSimilarity(name, prev); s > best {
			best = s
		}
	}
	return best
}

// nameSimilarity compares two company names without their legal forms,
// folded: the larger of the token overlap (Dice coefficient) and the
// Levenshtein ratio of the names with spaces removed (so that "Bau-Stein"
// and "Bau Stein" are equal).
func nameSimilarity(a, b string) float64 {
	ta, tb := baseTokens(a), baseTokens(b)
	if len(ta) == 0 || len(tb) == 0 {
		ta, tb = textfold.Tokens(textfold.Fold(a)), textfold.Tokens(textfold.Fold(b))
	}
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	return max(diceOverlap(ta, tb), levenshteinRatio(strings.Join(ta, ""), strings.Join(tb, "")))
}

// baseTokens returns the folded name tokens without the legal form and
// without tokens that carry no letter or digit ("&", "-").
func baseTokens(name string) []string {
	base, _, ok := register.SplitLegalForm(name)
	if !ok {
		base = textfold.Tokens(textfold.Fold(name))
	}
	out := base[:0:0]
	for _, t := range base {
		if strings.IndexFunc(t, isAlnum) >= 0 {
			out = append(out, t)
		}
	}
	return out
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r > 0x7f
}

func diceOverlap(a, b []string) float64 {
	inB := make(map[string]int, len(b))
	for _, t := range b {
		inB[t]++
	}
	common := 0
	for _, t := range a {
		if inB[t] > 0 {
			inB[t]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

func levenshteinRatio(a, b string) float64 {
	longest := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b))
	if longest == 0 {
		return 1
	}
	return 1 - float64(levenshtein.ComputeDistance(a, b))/float64(longest)
}

// discoveryProfile builds the discovery candidate of a German GLEIF record
// that did not link. A conflict keeps it unverified and says why.
func discoveryProfile(r *GLEIFRecord, m gleifMatch) *companydocs.Profile {
	p := &companydocs.Profile{
		ID:          companydocs.DiscoveryID(r.LEI),
		Source:      companydocs.SourceDiscovery,
		Name:        r.LegalName,
		LegalForm:   legalFormCode(r.LegalName),
		Seat:        r.City,
		LEIs:        []companydocs.LEILink{{LEI: r.LEI, LegalName: r.LegalName, Method: DiscoveryMethod, Status: r.RegistrationStatus}},
		RetrievedAt: r.LastUpdate,
		Discovery: &companydocs.Discovery{
			ValidationSources:  r.ValidationSources,
			RegistrationStatus: r.RegistrationStatus,
			EntityStatus:       r.EntityStatus,
			RegistrationRaw:    strings.TrimSpace(r.RACode + " " + r.RAEntityID),
		},
	}
	if m.refErr == nil {
		p.Ref = m.ref
	}
	p.Discovery.Missing = missingForVerification(r, m)
	p.Verified = len(p.Discovery.Missing) == 0
	if p.Verified {
		// A verified discovery record names a live register entry at a known
		// court; the register keeps the current and the chronological
		// printout of every entry, so both are taken as obtainable.
		p.Documents = []companydocs.DocumentType{companydocs.DocumentAD, companydocs.DocumentCD}
	}
	return p
}

// missingForVerification lists what keeps a discovery record from being
// verified. An empty list means verified.
func missingForVerification(r *GLEIFRecord, m gleifMatch) []companydocs.VerificationGap {
	var missing []companydocs.VerificationGap
	gap := func(code string, params companydocs.GapParams) {
		missing = append(missing, companydocs.VerificationGap{Code: code, Params: params})
	}
	if !m.courtOK {
		gap(companydocs.GapCourtUnknown, companydocs.GapParams{RACode: r.RACode})
	}
	switch {
	case strings.TrimSpace(r.RAEntityID) == "":
		gap(companydocs.GapNoRegisterReference, companydocs.GapParams{})
	case m.refErr != nil:
		gap(companydocs.GapRegisterReferenceUnparsed, companydocs.GapParams{Reference: r.RAEntityID})
	}
	if r.ValidationSources != companydocs.GLEIFFullyCorroborated {
		gap(companydocs.GapNotFullyCorroborated, companydocs.GapParams{ValidationSources: r.ValidationSources})
	}
	if r.RegistrationStatus != companydocs.GLEIFIssued {
		gap(companydocs.GapRegistrationNotIssued, companydocs.GapParams{Status: r.RegistrationStatus})
	}
	if r.EntityStatus != companydocs.GLEIFActive {
		gap(companydocs.GapEntityNotActive, companydocs.GapParams{Status: r.EntityStatus})
	}
	if m.conflict != "" {
		missing = append(missing, m.conflictGap)
	}
	return missing
}

func orNone(s string) string {
	if s == "" {
		return "missing"
	}
	return s
}

// addLEI links the LEI to p unless p has it already; it reports whether p changed.
func addLEI(p *companydocs.Profile, r *GLEIFRecord) bool {
	for _, l := range p.LEIs {
		if l.LEI == r.LEI {
			return false
		}
	}
	p.LEIs = append(p.LEIs, companydocs.LEILink{LEI: r.LEI, LegalName: r.LegalName, Method: LinkMethod, Status: r.RegistrationStatus})
	return true
}
