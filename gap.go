package companydocs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"companydocs/messages"
)

// Verification gap codes: what keeps a discovery record (a GLEIF record)
// from being verified, one code per check of the ingest, so that a client
// can say each gap in its own language from the code and its params.
const (
	GapCourtUnknown              = "court_unknown"
	GapNoRegisterReference       = "no_register_reference"
	GapRegisterReferenceUnparsed = "register_reference_unparsed"
	GapNotFullyCorroborated      = "not_fully_corroborated"
	GapRegistrationNotIssued     = "registration_not_issued"
	GapEntityNotActive           = "entity_not_active"
	GapSeveralRegisterEntries    = "several_register_entries"
	GapRegisterNameDiffers       = "register_name_differs"
	// GapLEIRecordsDiffer: the GLEIF files of one ingest hold records of
	// this LEI with different names or register references.
	GapLEIRecordsDiffer = "lei_records_differ"
	// GapDescribed is a gap an ingest before IndexVersion 7 wrote down in
	// English words only; it is read from such generations, never made.
	GapDescribed = "described"
)

// GLEIF values a verified discovery record has.
const (
	GLEIFFullyCorroborated = "FULLY_CORROBORATED"
	GLEIFIssued            = "ISSUED"
	GLEIFActive            = "ACTIVE"
)

// VerificationGap is one thing that keeps a discovery record from being
// verified, as a stable code and the values its sentence names.
type VerificationGap struct {
	Code   string    `json:"code"`
	Params GapParams `json:"params"`
}

// GapParams are the values a gap's sentence names; each code sets only the
// fields its sentence uses (gapTable). Values are GLEIF's and the
// register's own words, never English sentences.
type GapParams struct {
	// RACode is GLEIF's registration authority code, e.g. "RA000999".
	RACode string `json:"ra_code,omitempty"`
	// Reference is GLEIF's register reference as written.
	Reference string `json:"reference,omitempty"`
	// ValidationSources is GLEIF's value, e.g. "PARTIALLY_CORROBORATED".
	ValidationSources string `json:"validation_sources,omitempty"`
	// Status is GLEIF's registration or entity status, e.g. "LAPSED".
	Status string `json:"status,omitempty"`
	// Court (display name) and RegisterNumber ("HRB 1234") name the
	// register number that matches several entries: Entries of them,
	// Live not removed; Listed names the first of them, each as its
	// register reference and quoted name. For lei_records_differ, Listed
	// names each differing GLEIF record as its quoted legal name and its
	// registration (RA code and entity id).
	Court          string   `json:"court,omitempty"`
	RegisterNumber string   `json:"register_number,omitempty"`
	Entries        int      `json:"entries,omitempty"`
	Live           int      `json:"live,omitempty"`
	Listed         []string `json:"listed,omitempty"`
	// GLEIFName is GLEIF's legal name, Name the register entry's, Entry
	// its register reference, Percent their similarity in percent.
	GLEIFName string `json:"gleif_name,omitempty"`
	Entry     string `json:"entry,omitempty"`
	Name      string `json:"name,omitempty"`
	Percent   int    `json:"percent,omitempty"`
	// Text is the English of a described gap.
	Text string `json:"text,omitempty"`
}

type gapSentence struct {
	// params are the JSON names of the params the code carries; a trailing
	// ? marks one left out when GLEIF gives none (or, for listed, when no
	// entry is listed; for live and percent, when it is 0).
	params []string
}

// gapTable is the one table of gap codes and their params. Each is said
// from the message catalog ("gap.<code>", package messages) with the
// words gapArgs makes of its params; a described gap says its own
// English.
var gapTable = map[string]gapSentence{
	GapCourtUnknown:              {[]string{"ra_code?"}},
	GapNoRegisterReference:       {nil},
	GapRegisterReferenceUnparsed: {[]string{"reference"}},
	GapNotFullyCorroborated:      {[]string{"validation_sources?"}},
	GapRegistrationNotIssued:     {[]string{"status?"}},
	GapEntityNotActive:           {[]string{"status?"}},
	GapSeveralRegisterEntries:    {[]string{"court", "register_number", "entries", "live?", "listed?"}},
	GapRegisterNameDiffers:       {[]string{"gleif_name", "entry", "name", "percent?"}},
	GapLEIRecordsDiffer:          {[]string{"listed"}},
	GapDescribed:                 {[]string{"text"}},
}

// String says the gap in English. An unknown code is a programming error
// and panics, so that a gap without a sentence cannot reach a client.
func (g VerificationGap) String() string { return g.In(messages.English) }

// In says the gap in lang (a catalog language); a described gap is the
// English sentence an older ingest wrote down.
func (g VerificationGap) In(lang string) string {
	if _, ok := gapTable[g.Code]; !ok {
		panic(fmt.Sprintf("companydocs: gap code %q has no sentence", g.Code))
	}
	if g.Code == GapDescribed {
		return g.Params.Text
	}
	return messages.Say(lang, "gap."+g.Code, gapArgs(lang, g.Params))
}

// gapArgs are the values of a gap's placeholders in lang: its params, and
// the words made of them (GLEIF's status values, a similarity as a
// decimal).
func gapArgs(lang string, p GapParams) messages.Args {
	en := func(key string, args messages.Args) string { return messages.Say(lang, key, args) }
	gleif := func(kind, value string) string {
		if value == "" {
			return en("gap.notStated", nil)
		}
		if key := "gleif." + kind + "." + value; messages.Has(key) {
			return en(key, nil)
		}
		return value
	}
	a := messages.Args{
		"reference": p.Reference, "court": p.Court, "register_number": p.RegisterNumber, "entries": p.Entries,
		"live": p.Live, "gleif_name": p.GLEIFName, "entry": p.Entry, "name": p.Name,
		"authority":    p.RACode,
		"validation":   gleif("validation", p.ValidationSources),
		"registration": gleif("registration", p.Status),
		"entity":       gleif("entity", p.Status),
		"similarity":   decimal(lang, float64(p.Percent)/100),
		"listed":       "",
	}
	if p.RACode == "" {
		a["authority"] = en("gap.notStated", nil)
	}
	listed := slices.Clone(p.Listed)
	if more := p.Entries - len(p.Listed); more > 0 && len(p.Listed) > 0 {
		listed = append(listed, en("gap.more", messages.Args{"n": more}))
	}
	if len(listed) > 0 {
		a["listed"] = ": " + strings.Join(listed, ", ")
	}
	return a
}

// GapsTextIn says gaps in lang, separated by "; ".
func GapsTextIn(lang string, gaps []VerificationGap) string {
	out := make([]string, len(gaps))
	for i, g := range gaps {
		out[i] = g.In(lang)
	}
	return strings.Join(out, "; ")
}

// decimal writes x with two fraction digits, with a decimal comma in
// German.
func decimal(lang string, x float64) string {
	s := fmt.Sprintf("%.2f", x)
	if lang == messages.German {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

// UnmarshalJSON also reads a gap of an IndexVersion 4 generation, stored
// as an English sentence, as a described gap.
func (g *VerificationGap) UnmarshalJSON(b []byte) error {
	var text string
	if json.Unmarshal(b, &text) == nil {
		*g = DescribedGap(text)
		return nil
	}
	type plain VerificationGap // without this method
	return json.Unmarshal(b, (*plain)(g))
}

// DescribedGap is the gap an older ingest stored as the English sentence
// text.
func DescribedGap(text string) VerificationGap {
	return VerificationGap{Code: GapDescribed, Params: GapParams{Text: text}}
}
