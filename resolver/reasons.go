package resolver

import (
	"fmt"
	"strings"

	"companydocs"
	"companydocs/messages"
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
	ReasonNameStartsAsCut    = "name_starts_as_cut"
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

// reasonSentence is a code's entry in reasonTable, noteTable or lineTable.
type reasonSentence struct {
	// params are the JSON names of the params the code carries; a
	// trailing ? marks one left out when it is none (no suffix, no
	// position, nothing listed).
	params []string
}

// rp shortens the params type where reasons and lines are made.
type rp = companydocs.ReasonParams

// reasonTable is the one table of reason codes. Every reason is made from
// its code and params, and its English sentence (confidence_reasons) from
// the message catalog ("reason.<code>", package messages) with the words
// reasonArgs makes of the params, so that confidence_reasons and
// reason_details cannot disagree, and the page, which reads the same
// catalog, says the same in German and English. The OpenAPI document
// lists the codes. Notes on the params: former_court_differs may name no
// former court of the entry; no_court_given and shared_number_cap carry
// register_number with its suffix and the entries with it (at any court,
// at this one); only_live_entry_at_court counts removed entries too;
// officer_matches has the position as the register writes it;
// discovery_unverified has the gaps the ingest found (left out when it
// listed none); shared_officer_cap counts the candidates found at which
// the person is an officer.
var reasonTable = map[string]reasonSentence{
	ReasonAddressMatches:        {[]string{"address"}},
	ReasonAddressDiffers:        {[]string{"address", "query_address"}},
	ReasonCourtDiffers:          {[]string{"court", "query_court"}},
	ReasonCourtMatches:          {[]string{"court"}},
	ReasonDiscoveryUnverified:   {[]string{"gaps?"}},
	ReasonDiscoveryVerified:     {nil},
	ReasonFormerCourtDiffers:    {[]string{"former_court?", "query_former_court"}},
	ReasonFormerCourtMatches:    {[]string{"former_court"}},
	ReasonFormerNameMatches:     {[]string{"former_name"}},
	ReasonInvalidLEICap:         {nil},
	ReasonLegalFormDiffers:      {[]string{"legal_form", "query_legal_form"}},
	ReasonLegalFormMatches:      {[]string{"legal_form"}},
	ReasonLEIMatches:            {[]string{"lei"}},
	ReasonLEIDiffers:            {[]string{"query_lei"}},
	ReasonNameConflict:          {[]string{"name"}},
	ReasonNameContainsQuery:     {nil},
	ReasonNameDoesNotMatch:      {nil},
	ReasonNameMatches:           {nil},
	ReasonNameMatchesClosely:    {nil},
	ReasonNameStartsAsCut:       {nil},
	ReasonNameMatchesPartly:     {[]string{"percent"}},
	ReasonNameMatchesWeakly:     {nil},
	ReasonNameNumbersDiffer:     {nil},
	ReasonNoCourtCap:            {nil},
	ReasonNoCourtGiven:          {[]string{"register_number", "entries"}},
	ReasonNoOrderableDocument:   {nil},
	ReasonOfficerMatches:        {[]string{"person", "position?"}},
	ReasonOfficerNotFound:       {[]string{"person"}},
	ReasonOnlyEntryNameSeat:     {nil},
	ReasonOnlyLiveEntryAtCourt:  {[]string{"entries"}},
	ReasonPastedTextCap:         {nil},
	ReasonRegisterNumberMatches: {[]string{"register_number"}},
	ReasonRegisterNumberDiffers: {[]string{"register_number?", "query_register_number"}},
	ReasonRemoved:               {nil},
	ReasonSeatMatches:           {[]string{"seat"}},
	ReasonSeatDiffers:           {[]string{"seat", "query_seat"}},
	ReasonSeatOnly:              {nil},
	ReasonSecondExactCap:        {nil},
	ReasonSharedNumberCap:       {[]string{"register_number", "entries"}},
	ReasonSharedOfficerCap:      {[]string{"person", "companies"}},
	ReasonShortQueryCap:         {nil},
	ReasonSuffixDiffers:         {[]string{"suffix?", "query_suffix?"}},
	ReasonSuffixMatches:         {[]string{"suffix"}},
	ReasonUnverifiedCap:         {nil},
}

// Note codes: one per sentence of query_understanding's notes, which say
// what the search could not find, made like the reasons: from the code and
// its params, said from the catalog as "note.<code>".
const (
	NoteLEIUnknown           = "lei_unknown"
	NoteLEIChecksumFails     = "lei_checksum_fails"
	NoteRegisterEntryUnknown = "register_entry_unknown"
	NoteNoEntryAtCourt       = "no_entry_at_court"
	NotePropertyUnread       = "property_unread"
	// why a search found no candidate at all (whyNone), beside the
	// identifier notes above, which say it for an LEI or a register
	// reference
	NoteNothingSearchable = "nothing_searchable"
	NoteNameWordsUnknown  = "name_words_unknown"
	NoteWordsTooCommon    = "words_too_common"
)

// noteTable is the table of note codes, as reasonTable is of reasons;
// court is the display name, left out of register_entry_unknown when the
// query named none; text of name_words_unknown and words_too_common is
// the name words searched, as typed.
var noteTable = map[string]reasonSentence{
	NoteLEIChecksumFails:     {nil},
	NoteLEIUnknown:           {[]string{"lei"}},
	NoteNoEntryAtCourt:       {[]string{"register_number", "court"}},
	NoteRegisterEntryUnknown: {[]string{"register_number", "court?"}},
	NotePropertyUnread:       {[]string{"property", "text"}},
	NoteNothingSearchable:    {nil},
	NoteNameWordsUnknown:     {[]string{"text"}},
	NoteWordsTooCommon:       {[]string{"text"}},
}

// lineTable is the table of line codes (LineName ... AsideUnknown): what
// each line of a pasted block was used as, or why it was set aside, in
// query_understanding's lines and line_details, said from the catalog as
// "line.<code>". text is the line as pasted; a register line leaves out
// register_number and court when it names none, a person line the
// position when it has no label.
var lineTable = map[string]reasonSentence{
	AsideBank:         {[]string{"text"}},
	AsideEmail:        {[]string{"text"}},
	AsideFax:          {[]string{"text"}},
	AsideGreeting:     {[]string{"text"}},
	AsideHeading:      {[]string{"text"}},
	AsideOpeningHours: {[]string{"text"}},
	AsidePhone:        {[]string{"text"}},
	AsideTaxNumber:    {[]string{"text"}},
	AsideUnknown:      {[]string{"text"}},
	AsideVATID:        {[]string{"text"}},
	AsideWeb:          {[]string{"text"}},
	LineAddress:       {[]string{"text", "address"}},
	LineLEI:           {[]string{"text", "lei"}},
	LineName:          {[]string{"text"}},
	LinePerson:        {[]string{"text", "person", "position?"}},
	LineRegister:      {[]string{"text", "register_number?", "court?"}},
	LineSeat:          {[]string{"text", "seat"}},
}

// ReasonTextIn says a reason in lang (a catalog language): the sentence
// confidence_reasons carries for it. An unknown code is a programming
// error and panics, so that a reason without a sentence cannot reach a
// client.
func ReasonTextIn(lang string, d companydocs.ReasonDetail) string {
	return say(lang, reasonTable, "reason.", &d)
}

// NoteText says a note of query_understanding in English.
func NoteText(d companydocs.ReasonDetail) string { return NoteTextIn(messages.English, d) }

// NoteTextIn says a note of query_understanding in lang.
func NoteTextIn(lang string, d companydocs.ReasonDetail) string {
	return say(lang, noteTable, "note.", &d)
}

// LineText says in English what a line of a pasted block was used as.
func LineText(d companydocs.ReasonDetail) string { return LineTextIn(messages.English, d) }

// LineTextIn says in lang what a line of a pasted block was used as.
func LineTextIn(lang string, d companydocs.ReasonDetail) string {
	return say(lang, lineTable, "line.", &d)
}

// say says d by its table's sentence. d is a pointer: the placeholders'
// lookup keeps its params, and a copy of a detail (some 400 bytes) would
// be made on the heap for every reason of every candidate.
func say(lang string, table map[string]reasonSentence, prefix string, d *companydocs.ReasonDetail) string {
	if _, ok := table[d.Code]; !ok {
		panic(fmt.Sprintf("resolver: code %q has no sentence", d.Code))
	}
	return messages.SayBy(lang, prefix+d.Code, reasonArgs(lang, &d.Params))
}

// reasonTextsOf says reasons in lang, in order.
func reasonTextsOf(lang string, ds []companydocs.ReasonDetail) []string {
	out := make([]string, len(ds))
	for i := range ds {
		out[i] = say(lang, reasonTable, "reason.", &ds[i])
	}
	return out
}

// reasonArgs are the values of a reason's, note's or line's placeholders
// in lang: its params, and the words made of them. Each is made when its
// sentence asks for it: a search says the reasons of every candidate it
// returns, and most words made of the params are in few sentences.
func reasonArgs(lang string, p *companydocs.ReasonParams) messages.Lookup {
	words := func(key string) string { return messages.Say(lang, key, nil) }
	return func(name string) (any, bool) {
		switch name {
		case "entries":
			return p.Entries, true
		case "percent":
			return p.Percent, true
		case "companies":
			return p.Companies, true
		case "times":
			return timesWords(lang, p.Entries)
		case "entry_suffix":
			return suffixWords(lang, p.Suffix), true
		case "query_suffix":
			return suffixWords(lang, p.QuerySuffix), true
		case "former_court":
			return orWords(p.FormerCourt, words("reason.noFormerCourt")), true
		case "entry_register_number":
			return orWords(p.RegisterNumber, words("reason.noRegisterNumber")), true
		case "at_court":
			if p.Court == "" {
				return "", true
			}
			return messages.Say(lang, "note.atCourt", messages.Args{"court": p.Court}), true
		case "missing":
			if len(p.Gaps) > 0 {
				return companydocs.GapsTextIn(lang, p.Gaps), true
			}
			return words("reason.notConfirmed"), true
		case "position":
			return officerWords(lang, p.Position), true
		}
		v := paramText(p, name)
		return v, v != ""
	}
}

// paramText returns the param a placeholder names as it is, "" for none.
func paramText(p *companydocs.ReasonParams, name string) string {
	if field, ok := paramFields[name]; ok {
		return field(p)
	}
	return ""
}

// paramFields are the params placeholders name as they are, by the
// placeholder's name.
var paramFields = map[string]func(*companydocs.ReasonParams) string{
	"lei":                   func(p *companydocs.ReasonParams) string { return p.LEI },
	"register_number":       func(p *companydocs.ReasonParams) string { return p.RegisterNumber },
	"number":                func(p *companydocs.ReasonParams) string { return p.RegisterNumber },
	"court":                 func(p *companydocs.ReasonParams) string { return p.Court },
	"query_court":           func(p *companydocs.ReasonParams) string { return p.QueryCourt },
	"query_former_court":    func(p *companydocs.ReasonParams) string { return p.QueryFormerCourt },
	"suffix":                func(p *companydocs.ReasonParams) string { return p.Suffix },
	"legal_form":            func(p *companydocs.ReasonParams) string { return p.LegalForm },
	"query_legal_form":      func(p *companydocs.ReasonParams) string { return p.QueryLegalForm },
	"name":                  func(p *companydocs.ReasonParams) string { return p.Name },
	"seat":                  func(p *companydocs.ReasonParams) string { return p.Seat },
	"former_name":           func(p *companydocs.ReasonParams) string { return p.FormerName },
	"person":                func(p *companydocs.ReasonParams) string { return p.Person },
	"address":               func(p *companydocs.ReasonParams) string { return p.Address },
	"text":                  func(p *companydocs.ReasonParams) string { return p.Text },
	"query_seat":            func(p *companydocs.ReasonParams) string { return p.QuerySeat },
	"query_address":         func(p *companydocs.ReasonParams) string { return p.QueryAddress },
	"query_register_number": func(p *companydocs.ReasonParams) string { return p.QueryRegisterNumber },
	"query_lei":             func(p *companydocs.ReasonParams) string { return p.QueryLEI },
	"property":              func(p *companydocs.ReasonParams) string { return p.Property },
}

// timesWords says how many entries: nothing for none.
func timesWords(lang string, entries int) (any, bool) {
	switch {
	case entries == 1:
		return messages.Say(lang, "reason.times.one", nil), true
	case entries > 1:
		return messages.Say(lang, "reason.times.many", messages.Args{"n": entries}), true
	}
	return nil, false
}

// orWords returns s, or the words saying it is missing.
func orWords(s, missing string) string {
	if s == "" {
		return missing
	}
	return s
}

// officerWords names an officer's position: the common ones in lang with
// the register's own word, others as the register writes them.
func officerWords(lang, position string) string {
	if position == "" {
		return messages.Say(lang, "reason.officer", nil)
	}
	args := messages.Args{"position": position}
	if key, ok := positionKeys[strings.ToLower(position)]; ok {
		return messages.Say(lang, "position."+key, args)
	}
	return messages.Say(lang, "reason.officerAs", args)
}

// positionKeys are the catalog's names of the common positions, by the
// register's word for them.
var positionKeys = map[string]string{
	"geschäftsführer": "managing_director", "geschäftsführerin": "managing_director",
	"vorstand": "board_member", "vorstandsmitglied": "board_member", "vorstandsvorsitzender": "board_member",
	"prokurist": "prokurist", "prokuristin": "prokurist",
	"inhaber": "owner", "inhaberin": "owner",
	"persönlich haftender gesellschafter": "general_partner", "persönlich haftende gesellschafterin": "general_partner",
	"liquidator": "liquidator", "liquidatorin": "liquidator",
}

// suffixWords names a suffix in a reason: "suffix KI", or "no suffix".
func suffixWords(lang, s string) string {
	if s == "" {
		return messages.Say(lang, "reason.noSuffix", nil)
	}
	return messages.Say(lang, "reason.suffix", messages.Args{"suffix": s})
}
