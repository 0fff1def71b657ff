package companydocs

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"

	"companydocs/register"
)

// Sources a profile or candidate can come from.
const (
	SourceRegistryCache = "registry_cache"
	SourceDiscovery     = "discovery"
)

// DocumentType is a register document kind as named in the register portal.
type DocumentType string

// Document types. Only AD and CD can be ordered through this service; the
// others are known so that the register's holdings can be shown.
const (
	DocumentAD DocumentType = "AD" // current printout (aktueller Abdruck)
	DocumentCD DocumentType = "CD" // chronological printout (chronologischer Abdruck)
	DocumentHD DocumentType = "HD" // historical printout
	DocumentDK DocumentType = "DK" // documents folder
	DocumentSI DocumentType = "SI" // structured register content
	DocumentUT DocumentType = "UT" // company owner information
	DocumentVO DocumentType = "VÖ" // publications
)

// OrderableDocumentTypes lists the document types a client can order.
var OrderableDocumentTypes = []DocumentType{DocumentAD, DocumentCD}

// IsOrderable reports whether t is a document type this service sells.
func (t DocumentType) IsOrderable() bool {
	return t == DocumentAD || t == DocumentCD
}

// Officer is a person or entity registered as an officer of a company.
type Officer struct {
	Name      string `json:"name"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	Position  string `json:"position,omitempty"`
	City      string `json:"city,omitempty"`
	StartDate string `json:"start_date,omitempty"`
	EndDate   string `json:"end_date,omitempty"`
	Dismissed bool   `json:"dismissed,omitempty"`
}

// LEILink records an LEI attached to a profile and how the link was made.
type LEILink struct {
	LEI       register.LEI `json:"lei"`
	LegalName string       `json:"legal_name,omitempty"`
	// Method says how the link was made, e.g. "ra_code+register_number".
	Method string `json:"method"`
	// Status is the GLEIF registration status (ISSUED, LAPSED, ...).
	Status string `json:"status,omitempty"`
}

// Discovery holds what a discovery record (a GLEIF record not found in the
// registry cache) says about its own verification.
type Discovery struct {
	ValidationSources  string `json:"validation_sources,omitempty"`
	RegistrationStatus string `json:"registration_status,omitempty"`
	EntityStatus       string `json:"entity_status,omitempty"`
	RegistrationRaw    string `json:"registration_raw,omitempty"`
	// Missing lists what keeps the record from being verified, as codes
	// with params (an English sentence each in generations before
	// IndexVersion 7, read as described gaps).
	Missing []VerificationGap `json:"missing,omitempty"`
}

// Profile is one register entry: the full record the resolver scores and the
// ordering gate checks. Registry-cache profiles come from register dumps;
// discovery profiles come from GLEIF records without a registry-cache entry.
type Profile struct {
	// ID is opaque and stable across re-ingests of the same register entry.
	ID            string         `json:"id"`
	Source        string         `json:"source"`
	Ref           register.Ref   `json:"ref"`
	Name          string         `json:"name"`
	LegalForm     string         `json:"legal_form,omitempty"`
	Seat          string         `json:"seat,omitempty"`
	Address       string         `json:"address,omitempty"`
	FederalState  string         `json:"federal_state,omitempty"`
	Officers      []Officer      `json:"officers,omitempty"`
	PreviousNames []string       `json:"previous_names,omitempty"`
	Removed       bool           `json:"removed,omitempty"`
	Documents     []DocumentType `json:"documents,omitempty"`
	LEIs          []LEILink      `json:"leis,omitempty"`
	Verified      bool           `json:"verified"`
	Discovery     *Discovery     `json:"discovery,omitempty"`
	RetrievedAt   time.Time      `json:"retrieved_at,omitempty"`
}

// HasDocument reports whether the register holds document type t for p.
func (p *Profile) HasDocument(t DocumentType) bool {
	for _, d := range p.Documents {
		if d == t {
			return true
		}
	}
	return false
}

// OrderingEligible is the verified-profile gate: verified, not removed from
// the register, and at least one orderable document type held. Text
// similarity never enters it.
func (p *Profile) OrderingEligible() bool {
	if p == nil || !p.Verified || p.Removed {
		return false
	}
	for _, t := range OrderableDocumentTypes {
		if p.HasDocument(t) {
			return true
		}
	}
	return false
}

// NeedsDiscover reports whether p is shown only to a search that asks for
// discovery candidates: an unverified discovery record. A verified one (a
// GLEIF record fully corroborated by a register) names a real register
// entry and is found like a registry-cache profile, by name and by number.
func (p *Profile) NeedsDiscover() bool {
	return p.Source == SourceDiscovery && !p.Verified
}

// CourtName returns the display name of the profile's register court.
func (p *Profile) CourtName() string {
	if c, ok := register.CourtByCode(p.Ref.Court); ok {
		return c.Name
	}
	return p.Ref.Court
}

var profileIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// ProfileID derives the stable profile identifier of a register entry from
// its register identity (never from its name), so that ids survive re-ingests.
func ProfileID(ref register.Ref) string {
	sum := sha256.Sum256([]byte("register:" + ref.Key()))
	return "dp_" + strings.ToLower(profileIDEncoding.EncodeToString(sum[:12]))
}

// DiscoveryID derives the stable identifier of a discovery candidate from
// its LEI.
func DiscoveryID(lei register.LEI) string {
	sum := sha256.Sum256([]byte("lei:" + string(lei)))
	return "dc_" + strings.ToLower(profileIDEncoding.EncodeToString(sum[:12]))
}

// DiscoveryIDLength is the length of a DiscoveryID: "dc_" and 96 bits in
// 20 unpadded base32 characters.
const DiscoveryIDLength = 3 + 20

// IsDiscoveryID reports whether id has the form DiscoveryID gives: "dc_"
// and 20 lower-case base32 characters (a to z, 2 to 7).
func IsDiscoveryID(id string) bool {
	rest, ok := strings.CutPrefix(id, "dc_")
	if !ok || len(id) != DiscoveryIDLength {
		return false
	}
	for _, r := range rest {
		if !('a' <= r && r <= 'z' || '2' <= r && r <= '7') {
			return false
		}
	}
	return true
}

// HasDiscoveryID reports whether the discovery candidate id belongs to p:
// it is p's own id (p is a discovery profile, the id search returns as
// discovery_candidate_id), or the id of a GLEIF record linked to p by its
// LEI, whose discovery candidate p stands in for.
func (p *Profile) HasDiscoveryID(id string) bool {
	if p.Source == SourceDiscovery && p.ID == id {
		return true
	}
	for _, l := range p.LEIs {
		if DiscoveryID(l.LEI) == id {
			return true
		}
	}
	return false
}
