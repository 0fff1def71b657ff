package ingest

import (
	"encoding/json"
	"strings"

	"companydocs"
	"companydocs/register"
)

// CanonicalFormatVersion is the value of the "format" field of every
// canonical JSONL line (see docs/formats.md).
const CanonicalFormatVersion = "companydocs/v1"

// Canonical status values.
const (
	canonicalStatusActive  = "active"
	canonicalStatusRemoved = "removed"
)

// Skip reasons of the canonical reader.
const (
	ReasonUnsupportedSource = "unsupported source"
	ReasonUnsupportedFormat = "unsupported format version"
)

// CanonicalRecord is one line of our canonical JSONL format: a flat, stable
// field set for one register entry, so that any source can be converted
// into it. docs/formats.md documents every field.
type CanonicalRecord struct {
	Format         string                `json:"format"`
	ID             string                `json:"id,omitempty"`
	Source         string                `json:"source,omitempty"`
	Court          string                `json:"court"`
	FormerCourt    string                `json:"former_court,omitempty"`
	RegisterType   string                `json:"register_type"`
	RegisterNumber string                `json:"register_number"`
	RegisterSuffix string                `json:"register_suffix,omitempty"`
	Name           string                `json:"name"`
	LegalForm      string                `json:"legal_form,omitempty"`
	Seat           string                `json:"seat,omitempty"`
	Address        string                `json:"address,omitempty"`
	FederalState   string                `json:"federal_state,omitempty"`
	Status         string                `json:"status"`
	Documents      []string              `json:"documents,omitempty"`
	Officers       []companydocs.Officer `json:"officers,omitempty"`
	PreviousNames  []string              `json:"previous_names,omitempty"`
	LEIs           []companydocs.LEILink `json:"leis,omitempty"`
	RetrievedAt    string                `json:"retrieved_at,omitempty"`
}

// DecodeCanonicalLine decodes one canonical JSONL line into a registry-cache
// profile. The id is derived again from the register identity, so a
// converted file cannot break id stability.
func DecodeCanonicalLine(line []byte) (*companydocs.Profile, error) {
	var rec CanonicalRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, skipf(ReasonInvalidJSON, "%v", err)
	}
	return rec.Profile()
}

// Profile converts the record into a registry-cache profile, or gives a
// *SkipError.
func (rec *CanonicalRecord) Profile() (*companydocs.Profile, error) {
	if rec.Format != "" && rec.Format != CanonicalFormatVersion {
		return nil, skipf(ReasonUnsupportedFormat, "%q", rec.Format)
	}
	if rec.Source != "" && rec.Source != companydocs.SourceRegistryCache {
		return nil, skipf(ReasonUnsupportedSource, "%q (canonical files carry registry_cache entries)", rec.Source)
	}
	ref, err := rec.registerRef()
	if err != nil {
		return nil, err
	}
	name := cleanText(rec.Name)
	if name == "" {
		return nil, skipf(ReasonNoName, "%s", ref.NumberKey())
	}
	p := &companydocs.Profile{
		ID:            companydocs.ProfileID(ref),
		Source:        companydocs.SourceRegistryCache,
		Ref:           ref,
		Name:          name,
		LegalForm:     strings.TrimSpace(rec.LegalForm),
		Seat:          cleanText(rec.Seat),
		Address:       cleanAddress(rec.Address),
		FederalState:  cleanText(rec.FederalState),
		Officers:      cleanOfficers(rec.Officers),
		PreviousNames: cleanNames(rec.PreviousNames),
		Removed:       strings.EqualFold(strings.TrimSpace(rec.Status), canonicalStatusRemoved),
		LEIs:          cleanLEILinks(rec.LEIs),
		Verified:      completeIdentity(ref),
		RetrievedAt:   parseTime(rec.RetrievedAt),
	}
	if p.LegalForm == "" {
		p.LegalForm = legalFormCode(name)
	}
	for _, d := range rec.Documents {
		p.Documents = appendDocument(p.Documents, companydocs.DocumentType(strings.TrimSpace(d)))
	}
	return p, nil
}

// registerRef accepts the court as an XJustiz code or as a court name.
func (rec *CanonicalRecord) registerRef() (register.Ref, error) {
	typ, ok := register.ParseType(rec.RegisterType)
	number := strings.TrimSpace(rec.RegisterNumber)
	if !ok || number == "" {
		return register.Ref{}, skipf(ReasonNoRegisterRef, "register_type %q, register_number %q", rec.RegisterType, rec.RegisterNumber)
	}
	court, ok := canonicalCourt(rec.Court)
	if !ok {
		return register.Ref{}, skipf(ReasonUnknownCourt, "court %q", rec.Court)
	}
	ref := register.Ref{Court: court, Type: typ, Number: number, Suffix: strings.TrimSpace(rec.RegisterSuffix)}
	if rec.FormerCourt != "" {
		former, ok := canonicalCourt(rec.FormerCourt)
		if !ok {
			return register.Ref{}, skipf(ReasonUnknownCourt, "former_court %q", rec.FormerCourt)
		}
		ref.FormerCourt = former
	}
	return ref, nil
}

// canonicalCourt keeps a known XJustiz code as written (ids derive from it)
// and resolves a court name to its code.
func canonicalCourt(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	if _, ok := register.CourtByCode(s); ok {
		return strings.ToUpper(s), true
	}
	if c, ok := register.LookupCourt(s); ok {
		return c.Code, true
	}
	return "", false
}

// appendDocument adds t once, keeping only known document types.
func appendDocument(docs []companydocs.DocumentType, t companydocs.DocumentType) []companydocs.DocumentType {
	known := false
	for _, k := range documentOrder {
		known = known || k == t
	}
	if !known {
		return docs
	}
	for _, d := range docs {
		if d == t {
			return docs
		}
	}
	return append(docs, t)
}
