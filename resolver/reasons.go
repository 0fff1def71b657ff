package resolver

import (
	"fmt"
	"strings"

	"companydocs"
)

// Reason codes: one per sentence of a candidate's confidence_reasons, so
// that a client can say the sentence in its own language from the code
// and its params (companydocs.ReasonDetail). reasonTable says which params
// each code carries and how its sentence reads in English.
const (
	// identifiers
	ReasonLEIMatches            = "lei_matches"
	ReasonRegisterNumberMatches = "register_number_matches"
	ReasonCourtMatches          = "court_matches"
	ReasonCourtDiffers          = "court_differs"
	ReasonFormerCourtMatches    = "former_court_matches"
	ReasonFormerCourtDiffers    = "former_court_differs"
	ReasonSuffixMatches         = "suffix_matches"
	ReasonSuffixDiffers         = "suffix_differs"
	ReasonNoCourtGiven          = "no_court_given"
	ReasonOnlyLiveEntryAtCourt  = "only_live_entry_at_court"
	ReasonNameConflict          = "name_conflict"
	ReasonOnlyEntryNameSeat     = "only_entry_name_seat"
	// text evidence
	ReasonNameMatches        = "name_matches"
	ReasonNameMatchesClosely = "name_matches_closely"
	ReasonNameContainsQuery  = "name_contains_query"
	ReasonNameMatchesPartly  = "name_matches_partly"
	ReasonNameMatchesWeakly  = "name_matches_weakly"
	ReasonNameDoesNotMatch   = "name_does_not_match"
	ReasonNameNumbersDiffer  = "name_numbers_differ"
	ReasonFormerNameMatches  = "former_name_matches"
	ReasonOfficerMatches     = "officer_matches"
	ReasonAddressMatches     = "address_matches"
	ReasonSeatMatches        = "seat_matches"
	ReasonSeatOnly           = "seat_only"
	ReasonLegalFormMatches   = "legal_form_matches"
	ReasonLegalFormDiffers   = "legal_form_differs"
	// what properties given beside the query contradict
	ReasonSeatDiffers           = "seat_differs"
	ReasonAddressDiffers        = "address_differs"
	ReasonOfficerNotFound       = "officer_not_found"
	ReasonRegisterNumberDiffers = "register_number_differs"
	ReasonLEIDiffers            = "lei_differs"
	// register status and verification
	ReasonDiscoveryUnverified = "discovery_unverified"
	ReasonDiscoveryVerified   = "discovery_verified"
	ReasonRemoved             = "removed"
	ReasonNoOrderableDocument = "no_orderable_document"
	// caps on the confidence
	ReasonUnverifiedCap    = "unverified_cap"
	ReasonNoCourtCap       = "no_court_cap"
	ReasonSharedNumberCap  = "shared_number_cap"
	ReasonInvalidLEICap    = "invalid_lei_cap"
	ReasonShortQueryCap    = "short_query_cap"
	ReasonSharedOfficerCap = "shared_officer_cap"
	ReasonSecondExactCap   = "second_exact_cap"
	ReasonPastedTextCap    = "pasted_text_cap"
)

// reasonSentence is a code's entry in reasonTable or noteTable.
type reasonSentence struct {
	// params are the JSON names of the params the code carries; a
	// trailing ? marks one left out when it is none (no suffix, no
	// position, nothing listed).
	params []string
	// english says the sentence from the params alone.
	english func(p companydocs.ReasonParams) string
}

// rp keeps the table's sentence functions on one line each.
type rp = companydocs.ReasonParams

// reasonTable is the one table of reason codes. Every reason is made from
// its code and params, and its English sentence (confidence_reasons) from
// this table, so that confidence_reasons and reason_details cannot
// disagree. The page says the same codes in German and English
// (web/static/i18n.js, "reason.<code>"); the OpenAPI document lists them.
var reasonTable = map[string]reasonSentence{
	ReasonLEIMatches:            {[]string{"lei"}, func(p rp) string { return "LEI " + p.LEI + " matches" }},
	ReasonRegisterNumberMatches: {[]string{"register_number"}, func(p rp) string { return "Register number " + p.RegisterNumber + " matches" }},
	ReasonCourtMatches:          {[]string{"court"}, func(p rp) string { return "Court " + p.Court + " matches" }},
	ReasonCourtDiffers: {[]string{"court", "query_court"}, func(p rp) string {
		return "Court differs: " + p.Court + ", not " + p.QueryCourt
	}},
	ReasonFormerCourtMatches: {[]string{"former_court"}, func(p rp) string { return "Former court " + p.FormerCourt + " matches" }},
	// the entry may have no former court
	ReasonFormerCourtDiffers: {[]string{"former_court?", "query_former_court"}, func(p rp) string {
		if p.FormerCourt == "" {
			return "Former court differs: the entry names none, the query " + p.QueryFormerCourt
		}
		return "Former court differs: " + p.FormerCourt + ", not " + p.QueryFormerCourt
	}},
	ReasonSuffixMatches: {[]string{"suffix"}, func(p rp) string { return "Suffix " + p.Suffix + " matches" }},
	ReasonSuffixDiffers: {[]string{"suffix?", "query_suffix?"}, func(p rp) string {
		return "Suffix differs: the entry has " + suffixText(p.Suffix) + ", the query " + suffixText(p.QuerySuffix)
	}},
	// register_number with its suffix; entries at any court
	ReasonNoCourtGiven: {[]string{"register_number", "entries"}, func(p rp) string {
		return "No court given: " + p.RegisterNumber + " exists at " + plural(p.Entries, "register entry", "register entries") +
			" here, and may exist at any of Germany's register courts"
	}},
	// entries at the court, removed ones too
	ReasonOnlyLiveEntryAtCourt: {[]string{"entries"}, func(p rp) string {
		return fmt.Sprintf("The only live entry with this number at this court (%d in all)", p.Entries)
	}},
	ReasonNameConflict: {[]string{"name"}, func(p rp) string {
		return fmt.Sprintf("Name given does not match the entry's name %q", p.Name)
	}},
	ReasonOnlyEntryNameSeat:  {nil, fixed("The only entry with this name at this seat")},
	ReasonNameMatches:        {nil, fixed("Name matches after normalisation")},
	ReasonNameMatchesClosely: {nil, fixed("Name matches closely (spelling variant or extra words)")},
	ReasonNameContainsQuery:  {nil, fixed("Name contains every word of the query, and more")},
	ReasonNameMatchesPartly: {[]string{"percent"}, func(p rp) string {
		return fmt.Sprintf("Name matches partly (%d%% agreement with the query's words)", p.Percent)
	}},
	ReasonNameMatchesWeakly: {nil, fixed("Name matches weakly")},
	ReasonNameDoesNotMatch:  {nil, fixed("Name does not match")},
	ReasonNameNumbersDiffer: {nil, fixed("Numbers in the name differ")},
	ReasonFormerNameMatches: {[]string{"former_name"}, func(p rp) string { return "Former name " + p.FormerName + " matches" }},
	// position as the register writes it; English names the common ones
	ReasonOfficerMatches:   {[]string{"person", "position?"}, func(p rp) string { return positionText(p.Position) + " " + p.Person + " matches" }},
	ReasonAddressMatches:   {[]string{"address"}, func(p rp) string { return "Registered address " + p.Address + " matches" }},
	ReasonSeatMatches:      {[]string{"seat"}, func(p rp) string { return "Seat " + p.Seat + " matches" }},
	ReasonSeatOnly:         {nil, fixed("Only a seat was given, no name")},
	ReasonLegalFormMatches: {[]string{"legal_form"}, func(p rp) string { return "Legal form " + p.LegalForm + " matches" }},
	ReasonLegalFormDiffers: {[]string{"legal_form", "query_legal_form"}, func(p rp) string {
		return "Legal form differs: " + p.LegalForm + ", not " + p.QueryLegalForm
	}},
	ReasonSeatDiffers: {[]string{"seat", "query_seat"}, func(p rp) string { return "Seat differs: " + p.Seat + ", not " + p.QuerySeat }},
	ReasonAddressDiffers: {[]string{"address", "query_address"}, func(p rp) string {
		return "Registered address differs: " + p.Address + ", not " + p.QueryAddress
	}},
	// person as given, folded
	ReasonOfficerNotFound: {[]string{"person"}, func(p rp) string { return "No officer of this entry is named " + p.Person }},
	// register_number is the entry's, left out when it has none (an LEI record)
	ReasonRegisterNumberDiffers: {[]string{"register_number?", "query_register_number"}, func(p rp) string {
		if p.RegisterNumber == "" {
			return "Register number " + p.QueryRegisterNumber + " given is not this entry's: confidence capped below exact"
		}
		return "Register number differs: " + p.RegisterNumber + ", not " + p.QueryRegisterNumber + " given: confidence capped below exact"
	}},
	ReasonLEIDiffers: {[]string{"query_lei"}, func(p rp) string {
		return "LEI " + p.QueryLEI + " given belongs to another entry: confidence capped below exact"
	}},
	// gaps: what the ingest found missing (companydocs.VerificationGap),
	// left out when it listed nothing
	ReasonDiscoveryUnverified: {[]string{"gaps?"}, func(p rp) string {
		return "Discovery record not verified: " + missingText(p.Gaps)
	}},
	ReasonDiscoveryVerified:   {nil, fixed("Verified discovery record (GLEIF, fully corroborated)")},
	ReasonRemoved:             {nil, fixed("Removed from the register: not orderable")},
	ReasonNoOrderableDocument: {nil, fixed("The register holds no AD or CD document for this entry: not orderable")},
	ReasonUnverifiedCap:       {nil, fixed("Unverified discovery record: confidence capped")},
	ReasonNoCourtCap:          {nil, fixed("Register number without a court: confidence capped")},
	ReasonSharedNumberCap: {[]string{"register_number", "entries"}, func(p rp) string {
		return fmt.Sprintf("Number %s exists at %d entries of this court", p.RegisterNumber, p.Entries)
	}},
	ReasonInvalidLEICap: {nil, fixed("The query looks like an LEI but its checksum fails")},
	ReasonShortQueryCap: {nil, fixed("Short query: confidence capped")},
	// companies: the candidates found at which the person is an officer
	ReasonSharedOfficerCap: {[]string{"person", "companies"}, func(p rp) string {
		return fmt.Sprintf("%s is an officer of %d companies found: confidence capped", p.Person, p.Companies)
	}},
	ReasonSecondExactCap: {nil, fixed("Another candidate matches exactly: confidence capped")},
	ReasonPastedTextCap:  {nil, fixed("Pasted text without a register entry or LEI that anchors it: confidence capped below exact")},
}

// Note codes: one per sentence of query_understanding's notes, which say
// what the search could not find, made like the reasons: from the code and
// its params by noteTable.
const (
	NoteLEIUnknown           = "lei_unknown"
	NoteLEIChecksumFails     = "lei_checksum_fails"
	NoteRegisterEntryUnknown = "register_entry_unknown"
	NoteNoEntryAtCourt       = "no_entry_at_court"
	NotePropertyUnread       = "property_unread"
)

// noteTable is the table of note codes, as reasonTable is of reasons. The
// page says them as "note.<code>".
var noteTable = map[string]reasonSentence{
	NoteLEIUnknown:       {[]string{"lei"}, func(p rp) string { return "LEI " + p.LEI + " is valid but not known to this service" }},
	NoteLEIChecksumFails: {nil, fixed("The query looks like an LEI but its checksum (ISO 7064 mod 97-10) fails")},
	// court is the display name, left out when the query named none
	NoteRegisterEntryUnknown: {[]string{"register_number", "court?"}, func(p rp) string {
		if p.Court == "" {
			return "No register entry " + p.RegisterNumber + " is known"
		}
		return "No register entry " + p.RegisterNumber + " at " + p.Court + " is known"
	}},
	// property is the property's id, text its value as given
	NotePropertyUnread: {[]string{"property", "text"}, func(p rp) string {
		return "The property " + p.Property + " (" + p.Text + ") could not be read and was not used"
	}},
	NoteNoEntryAtCourt: {[]string{"register_number", "court"}, func(p rp) string {
		return "No entry " + p.RegisterNumber + " at court " + p.Court + "; entries at other courts are shown"
	}},
}

// lineTable is the table of line codes (LineName ... AsideUnknown): what
// each line of a pasted block was used as, or why it was set aside, in
// query_understanding's lines and line_details. The page says them as
// "line.<code>". text is the line as pasted.
var lineTable = map[string]reasonSentence{
	LineName: {[]string{"text"}, func(p rp) string { return "Used as the company's name: " + p.Text }},
	// register_number and court are left out when the line names none
	// (a court line, a number line)
	LineRegister: {[]string{"text", "register_number?", "court?"}, func(p rp) string {
		return "Used as a register line" + registerLineText(p) + ": " + p.Text
	}},
	LineSeat: {[]string{"text", "seat"}, func(p rp) string { return "Used as the seat " + p.Seat + ": " + p.Text }},
	// one per person the line names; position is the line's label, left
	// out when it has none
	LinePerson: {[]string{"text", "person", "position?"}, func(p rp) string {
		return "Used as the person " + p.Person + ": " + p.Text
	}},
	LineAddress:       {[]string{"text", "address"}, func(p rp) string { return "Used as the address: " + p.Address }},
	LineLEI:           {[]string{"text", "lei"}, func(p rp) string { return "Used as the LEI " + p.LEI + ": " + p.Text }},
	AsidePhone:        {[]string{"text"}, func(p rp) string { return "Set aside, a phone number: " + p.Text }},
	AsideFax:          {[]string{"text"}, func(p rp) string { return "Set aside, a fax number: " + p.Text }},
	AsideEmail:        {[]string{"text"}, func(p rp) string { return "Set aside, an e-mail address: " + p.Text }},
	AsideWeb:          {[]string{"text"}, func(p rp) string { return "Set aside, a web address: " + p.Text }},
	AsideVATID:        {[]string{"text"}, func(p rp) string { return "Set aside, a VAT ID (not in the register): " + p.Text }},
	AsideTaxNumber:    {[]string{"text"}, func(p rp) string { return "Set aside, a tax number (not in the register): " + p.Text }},
	AsideBank:         {[]string{"text"}, func(p rp) string { return "Set aside, bank details: " + p.Text }},
	AsideGreeting:     {[]string{"text"}, func(p rp) string { return "Set aside, a greeting: " + p.Text }},
	AsideOpeningHours: {[]string{"text"}, func(p rp) string { return "Set aside, opening hours: " + p.Text }},
	AsideHeading:      {[]string{"text"}, func(p rp) string { return "Set aside, a heading: " + p.Text }},
	AsideUnknown:      {[]string{"text"}, func(p rp) string { return "Set aside, not used: " + p.Text }},
}

// registerLineText names what a register line gives: " (HRB 6684, court
// München)", " (court München)", or nothing.
func registerLineText(p rp) string {
	var parts []string
	if p.RegisterNumber != "" {
		parts = append(parts, p.RegisterNumber)
	}
	if p.Court != "" {
		parts = append(parts, "court "+p.Court)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func fixed(sentence string) func(rp) string {
	return func(rp) string { return sentence }
}

// ReasonText says a reason in English: the sentence confidence_reasons
// carries for it. An unknown code is a programming error and panics, so
// that a reason without a sentence cannot reach a client.
func ReasonText(d companydocs.ReasonDetail) string { return say(reasonTable, d) }

// NoteText says a note of query_understanding in English.
func NoteText(d companydocs.ReasonDetail) string { return say(noteTable, d) }

// LineText says in English what a line of a pasted block was used as.
func LineText(d companydocs.ReasonDetail) string { return say(lineTable, d) }

func say(table map[string]reasonSentence, d companydocs.ReasonDetail) string {
	e, ok := table[d.Code]
	if !ok {
		panic(fmt.Sprintf("resolver: code %q has no sentence", d.Code))
	}
	return e.english(d.Params)
}

// reasonTextsOf says reasons in English, in order.
func reasonTextsOf(ds []companydocs.ReasonDetail) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = ReasonText(d)
	}
	return out
}

// positionText names an officer's position in English where it is one of
// the common ones.
func positionText(position string) string {
	switch strings.ToLower(position) {
	case "geschäftsführer", "geschäftsführerin":
		return "Managing director"
	case "vorstand", "vorstandsmitglied", "vorstandsvorsitzender":
		return "Board member"
	case "prokurist", "prokuristin":
		return "Authorised signatory (Prokurist)"
	case "inhaber", "inhaberin":
		return "Owner"
	case "persönlich haftender gesellschafter", "persönlich haftende gesellschafterin":
		return "General partner"
	case "liquidator", "liquidatorin":
		return "Liquidator"
	case "":
		return "Officer"
	}
	return "Officer (" + position + ")"
}

func missingText(gaps []companydocs.VerificationGap) string {
	if len(gaps) == 0 {
		return "no authoritative register confirms it"
	}
	return companydocs.GapsText(gaps)
}

// suffixText names a suffix in a reason: "suffix KI", or "no suffix".
func suffixText(s string) string {
	if s == "" {
		return "no suffix"
	}
	return "suffix " + s
}

// plural writes n with the singular or plural noun: "1 register entry",
// "3 register entries".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
