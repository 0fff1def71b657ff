package companydocs

import (
	"cmp"
	"slices"
	"strings"

	"companydocs/register"
)

// Names of the fields ProfileChanges compares, as a FieldChange carries them.
const (
	FieldName          = "name"           // string
	FieldSeat          = "seat"           // string: the city of the registered seat
	FieldAddress       = "address"        // string: the registered address
	FieldLegalForm     = "legal_form"     // string: the legal form's code ("GmbH", "AG", ...)
	FieldStatus        = "status"         // string: one of the ProfileStatus values
	FieldRegister      = "register"       // RegisterValue: court, type, number
	FieldOfficers      = "officers"       // []OfficerValue: Before lists who left, After who joined
	FieldPreviousNames = "previous_names" // []string, sorted
	FieldLEI           = "lei"            // []LEIValue, sorted by LEI
	FieldDocuments     = "documents"      // []DocumentType, in register order
	// FieldRemoved is the one change of a profile the newer generation no
	// longer holds at all: Before is a RemovedValue, After is nil. A profile
	// still held but struck off the register is a FieldStatus change to
	// ProfileStatusRemoved instead, and one that moved to another court (a
	// new profile id) a FieldRegister change when its successor is known
	// (see docs/formats-changes.md).
	FieldRemoved = "removed"
)

// ChangeFields lists the fields ProfileChanges compares, in the order it
// reports them.
var ChangeFields = []string{
	FieldName, FieldSeat, FieldAddress, FieldLegalForm, FieldStatus, FieldRegister,
	FieldOfficers, FieldPreviousNames, FieldLEI, FieldDocuments,
}

// FieldChange is one changed field of a profile between two index
// generations. Before and After are JSON values whose type the field
// decides (see the Field constants); a field that was empty on one side is
// "" or an empty list there, never missing.
type FieldChange struct {
	Field  string `json:"field"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	// Message says the change to a person, in the language of the
	// request: set in the answers of the watch endpoints (WatchIn), never
	// stored or sent with an event.
	Message string `json:"message,omitempty"`
}

// Status values of a profile (Profile.Status).
const (
	ProfileStatusRegistered    = "registered"
	ProfileStatusInLiquidation = "in_liquidation"
	ProfileStatusInInsolvency  = "in_insolvency"
	ProfileStatusRemoved       = "removed"
)

// liquidationSuffixes and insolvencySuffixes end the name of a company in
// that state: the register adds them to the name itself ("Guhr Kieswerke
// GmbH i.L.", "ESH Energie - Spar - Heizung GmbH in Liquidation",
// "Johann Münzer Abwicklungs GmbH i. I."). Only the end of the name counts:
// "Petrolan Flüssiggas GmbH i.L. & Co." is a partnership whose general
// partner is being wound up, not itself. Compared folded, without dots.
var (
	liquidationSuffixes = []string{" in liquidation", " i l", " in abwicklung"}
	insolvencySuffixes  = []string{" in insolvenz", " i i"}
)

// Status returns where p stands in the register: struck off
// (ProfileStatusRemoved), being wound up or insolvent as its name says, or
// registered.
func (p *Profile) Status() string {
	if p.Removed {
		return ProfileStatusRemoved
	}
	name := " " + strings.Join(strings.Fields(strings.ReplaceAll(strings.ToLower(p.Name), ".", " ")), " ")
	for _, s := range liquidationSuffixes {
		if strings.HasSuffix(name, s) {
			return ProfileStatusInLiquidation
		}
	}
	for _, s := range insolvencySuffixes {
		if strings.HasSuffix(name, s) {
			return ProfileStatusInInsolvency
		}
	}
	return ProfileStatusRegistered
}

// RegisterValue is the register identity of a profile as a FieldRegister
// change shows it. ProfileID is the profile's id at that identity: ids
// derive from the register identity, so an entry that moves to another
// court gets a new id, which After tells.
type RegisterValue struct {
	ProfileID   string        `json:"profile_id"`
	Court       string        `json:"court"`
	CourtName   string        `json:"court_name"`
	FormerCourt string        `json:"former_court,omitempty"`
	Type        register.Type `json:"type"`
	Number      string        `json:"number"`
	Suffix      string        `json:"suffix,omitempty"`
	Text        string        `json:"text"` // as registers print it: "München HRB 6684"
}

// OfficerValue is an officer as a FieldOfficers change names them. An
// officer's identity is name and role; a dismissed officer, or one with an
// end date, has left.
type OfficerValue struct {
	Name string `json:"name"`
	Role string `json:"role,omitempty"`
}

// LEIValue is an LEI linked to a profile and its GLEIF registration status.
type LEIValue struct {
	LEI    register.LEI `json:"lei"`
	Status string       `json:"status,omitempty"`
}

// RemovedValue is the Before of a FieldRemoved change: what the profile was
// when it was last held.
type RemovedValue struct {
	Name     string        `json:"name"`
	Register RegisterValue `json:"register"`
	Status   string        `json:"status"`
}

// ProfileChanges compares two versions of one profile, the older before and
// the newer after, and returns the fields that differ in the order of
// ChangeFields; nil when nothing changed. Texts are compared with their
// white space collapsed and lists as sets, so that the same records ingested
// again give no change. A nil after means the newer generation no longer
// holds the profile: the one change is FieldRemoved. A nil before (a profile
// new in the newer generation) gives nil: there is nothing to compare.
func ProfileChanges(before, after *Profile) []FieldChange {
	if before == nil {
		return nil
	}
	if after == nil {
		return []FieldChange{{Field: FieldRemoved, Before: RemovedValue{
			Name: collapseSpace(before.Name), Register: registerValue(before), Status: before.Status(),
		}}}
	}
	if identical(before, after) {
		return nil
	}
	var out []FieldChange
	add := func(field string, b, a any, changed bool) {
		if changed {
			out = append(out, FieldChange{Field: field, Before: b, After: a})
		}
	}
	addText := func(field, b, a string) {
		b, a = collapseSpace(b), collapseSpace(a)
		add(field, b, a, b != a)
	}
	addText(FieldName, before.Name, after.Name)
	addText(FieldSeat, before.Seat, after.Seat)
	addText(FieldAddress, before.Address, after.Address)
	addText(FieldLegalForm, before.LegalForm, after.LegalForm)
	add(FieldStatus, before.Status(), after.Status(), before.Status() != after.Status())
	rb, ra := registerValue(before), registerValue(after)
	add(FieldRegister, rb, ra, !sameRegister(before.Ref, after.Ref))
	left, joined := officerChanges(before.Officers, after.Officers)
	add(FieldOfficers, left, joined, len(left)+len(joined) > 0)
	pb, pa := normalNames(before.PreviousNames), normalNames(after.PreviousNames)
	add(FieldPreviousNames, pb, pa, !slices.Equal(pb, pa))
	lb, la := leiValues(before.LEIs), leiValues(after.LEIs)
	add(FieldLEI, lb, la, !slices.Equal(lb, la))
	db, da := normalDocuments(before.Documents), normalDocuments(after.Documents)
	add(FieldDocuments, db, da, !slices.Equal(db, da))
	return out
}

// identical reports whether a and b agree exactly on every compared field:
// a profile of a re-ingest whose record only was retrieved again, which
// needs no normalising and allocates nothing.
func identical(a, b *Profile) bool {
	return a.Name == b.Name && a.Seat == b.Seat && a.Address == b.Address && a.LegalForm == b.LegalForm &&
		a.Removed == b.Removed && a.Ref == b.Ref && slices.Equal(a.Officers, b.Officers) &&
		slices.Equal(a.PreviousNames, b.PreviousNames) && slices.Equal(a.LEIs, b.LEIs) && slices.Equal(a.Documents, b.Documents)
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func registerValue(p *Profile) RegisterValue {
	return RegisterValue{
		ProfileID: p.ID, Court: p.Ref.Court, CourtName: p.CourtName(), FormerCourt: p.Ref.FormerCourt,
		Type: p.Ref.Type, Number: p.Ref.Number, Suffix: p.Ref.Suffix, Text: p.Ref.String(),
	}
}

func sameRegister(a, b register.Ref) bool {
	norm := func(r register.Ref) string {
		return strings.ToUpper(collapseSpace(r.Key()))
	}
	return norm(a) == norm(b)
}

// officerChanges returns the officers of before who are no longer current in
// after (left) and those current in after who were not in before (joined),
// each sorted by name and role. Both are non-nil, so that JSON shows [].
func officerChanges(before, after []Officer) (left, joined []OfficerValue) {
	b, a := currentOfficers(before), currentOfficers(after)
	left, joined = []OfficerValue{}, []OfficerValue{}
	for k, o := range b {
		if _, ok := a[k]; !ok {
			left = append(left, o)
		}
	}
	for k, o := range a {
		if _, ok := b[k]; !ok {
			joined = append(joined, o)
		}
	}
	sortOfficers(left)
	sortOfficers(joined)
	return left, joined
}

// currentOfficers keys the officers who have not left by folded name and
// role.
func currentOfficers(officers []Officer) map[string]OfficerValue {
	m := make(map[string]OfficerValue, len(officers))
	for _, o := range officers {
		if o.Dismissed || strings.TrimSpace(o.EndDate) != "" {
			continue
		}
		v := OfficerValue{Name: collapseSpace(o.Name), Role: collapseSpace(o.Position)}
		if v.Name == "" {
			continue
		}
		m[strings.ToLower(v.Name)+"\x00"+strings.ToLower(v.Role)] = v
	}
	return m
}

func sortOfficers(o []OfficerValue) {
	slices.SortFunc(o, func(x, y OfficerValue) int {
		return cmp.Or(cmp.Compare(x.Name, y.Name), cmp.Compare(x.Role, y.Role))
	})
}

// normalNames collapses white space, drops empty and repeated names and
// sorts; never nil.
func normalNames(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = collapseSpace(n); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// leiValues lists the linked LEIs once each, sorted; never nil.
func leiValues(links []LEILink) []LEIValue {
	out := make([]LEIValue, 0, len(links))
	for _, l := range links {
		out = append(out, LEIValue{LEI: l.LEI, Status: strings.ToUpper(strings.TrimSpace(l.Status))})
	}
	slices.SortFunc(out, func(x, y LEIValue) int {
		return cmp.Or(cmp.Compare(x.LEI, y.LEI), cmp.Compare(x.Status, y.Status))
	})
	return slices.Compact(out)
}

// documentRank orders document types as the register portal lists them.
var documentRank = map[DocumentType]int{
	DocumentAD: 0, DocumentCD: 1, DocumentHD: 2, DocumentDK: 3, DocumentSI: 4, DocumentUT: 5, DocumentVO: 6,
}

// normalDocuments lists the document types once each in register order
// (unknown types after the known ones, by name); never nil.
func normalDocuments(docs []DocumentType) []DocumentType {
	out := slices.Clone(docs)
	if out == nil {
		out = []DocumentType{}
	}
	rank := func(d DocumentType) int {
		if r, ok := documentRank[d]; ok {
			return r
		}
		return len(documentRank)
	}
	slices.SortFunc(out, func(x, y DocumentType) int {
		return cmp.Or(cmp.Compare(rank(x), rank(y)), cmp.Compare(x, y))
	})
	return slices.Compact(out)
}
