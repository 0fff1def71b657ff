package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"companydocs/register"
)

// GLEIFRecord is the part of a GLEIF LEI record the ingest uses, whether it
// came from the golden-copy CSV or the API JSONL.
type GLEIFRecord struct {
	LEI       register.LEI
	LegalName string
	City      string
	Country   string
	// RACode is the registration authority (RA000304 Amtsgericht München ...).
	RACode string
	// RAEntityID is the entity's id at that authority, e.g. "HRB 6684".
	RAEntityID         string
	EntityStatus       string
	RegistrationStatus string
	// ValidationSources is FULLY_CORROBORATED, PARTIALLY_CORROBORATED,
	// ENTITY_SUPPLIED_ONLY, ...
	ValidationSources string
	Jurisdiction      string
	LegalFormCode     string
	LastUpdate        time.Time
}

// German local register courts occupy this range of GLEIF RA codes.
const (
	firstGermanCourtRA = "RA000197"
	lastGermanCourtRA  = "RA000371"
)

// IsGerman reports whether the record belongs to a German entity: German
// jurisdiction or legal address, or registered at a German register court.
func (r *GLEIFRecord) IsGerman() bool {
	return strings.EqualFold(r.Jurisdiction, "DE") || strings.HasPrefix(strings.ToUpper(r.Jurisdiction), "DE-") ||
		strings.EqualFold(r.Country, "DE") || isGermanCourtRA(r.RACode)
}

// isGermanCourtRA reports whether an RA code is in the range of the German
// local courts (the codes have a fixed width, so they compare as strings).
func isGermanCourtRA(ra string) bool {
	ra = strings.ToUpper(strings.TrimSpace(ra))
	return len(ra) == len(firstGermanCourtRA) && ra >= firstGermanCourtRA && ra <= lastGermanCourtRA
}

// Skip reasons of the GLEIF readers.
const (
	ReasonNotGerman      = "not a German register entity"
	ReasonInvalidLEI     = "invalid LEI"
	ReasonWrongColumns   = "wrong number of columns"
	ReasonRowTooLong     = "row longer than the maximum line size"
	ReasonDuplicateLEI   = "duplicate LEI record"
	ReasonDuplicateEntry = "duplicate register entry"
)

// gleifAPIRecord is one line of the GLEIF API JSONL (flattened attribute
// names as the gleifr package writes them).
type gleifAPIRecord struct {
	LEI                string `json:"lei"`
	LegalName          string `json:"entity_legal_name_name"`
	City               string `json:"entity_legal_address_city"`
	Country            string `json:"entity_legal_address_country"`
	RegisteredAt       string `json:"entity_registered_at_id"`
	RegisteredAs       string `json:"entity_registered_as"`
	Jurisdiction       string `json:"entity_jurisdiction"`
	LegalForm          string `json:"entity_legal_form_id"`
	EntityStatus       string `json:"entity_status"`
	RegistrationStatus string `json:"registration_status"`
	Corroboration      string `json:"registration_corroboration_level"`
	LastUpdate         string `json:"registration_last_update_date"`
}

// DecodeGLEIFJSONLine decodes one GLEIF API JSONL line. The LEI must be
// valid; everything else is taken as it comes.
func DecodeGLEIFJSONLine(line []byte) (GLEIFRecord, error) {
	var raw gleifAPIRecord
	if err := json.Unmarshal(line, &raw); err != nil {
		return GLEIFRecord{}, skipf(ReasonInvalidJSON, "%v", err)
	}
	rec := GLEIFRecord{
		LegalName:          cleanText(raw.LegalName),
		City:               cleanText(raw.City),
		Country:            strings.TrimSpace(raw.Country),
		RACode:             strings.ToUpper(strings.TrimSpace(raw.RegisteredAt)),
		RAEntityID:         cleanText(raw.RegisteredAs),
		EntityStatus:       upperTrim(raw.EntityStatus),
		RegistrationStatus: upperTrim(raw.RegistrationStatus),
		ValidationSources:  upperTrim(raw.Corroboration),
		Jurisdiction:       strings.TrimSpace(raw.Jurisdiction),
		LegalFormCode:      strings.TrimSpace(raw.LegalForm),
		LastUpdate:         parseTime(raw.LastUpdate),
	}
	return rec, rec.setLEI(raw.LEI)
}

func (r *GLEIFRecord) setLEI(s string) error {
	lei, err := register.ParseLEI(s)
	if err != nil {
		return skipf(ReasonInvalidLEI, "%q: %v", s, err)
	}
	r.LEI = lei
	return nil
}

func upperTrim(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// GLEIF golden-copy column names the CSV reader looks for.
const (
	colLEI                = "LEI"
	colLegalName          = "Entity.LegalName"
	colCity               = "Entity.LegalAddress.City"
	colCountry            = "Entity.LegalAddress.Country"
	colRACode             = "Entity.RegistrationAuthority.RegistrationAuthorityID"
	colRAEntityID         = "Entity.RegistrationAuthority.RegistrationAuthorityEntityID"
	colJurisdiction       = "Entity.LegalJurisdiction"
	colLegalForm          = "Entity.LegalForm.EntityLegalFormCode"
	colEntityStatus       = "Entity.EntityStatus"
	colRegistrationStatus = "Registration.RegistrationStatus"
	colValidationSources  = "Registration.ValidationSources"
	colLastUpdate         = "Registration.LastUpdateDate"
)

// GLEIFColumns maps golden-copy column names to their positions in a
// header row, so that the reader works with the real file's ~240 columns
// as well as with a shortened sample.
type GLEIFColumns struct {
	index map[string]int
	width int
}

// NewGLEIFColumns reads a golden-copy header row. LEI and Entity.LegalName
// are required; every other column is optional.
func NewGLEIFColumns(header []string) (*GLEIFColumns, error) {
	c := &GLEIFColumns{index: make(map[string]int, len(header)), width: len(header)}
	for i, name := range header {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\uFEFF"))
		if _, dup := c.index[name]; !dup {
			c.index[name] = i
		}
	}
	for _, required := range []string{colLEI, colLegalName} {
		if _, ok := c.index[required]; !ok {
			return nil, fmt.Errorf("golden-copy header has no column %q", required)
		}
	}
	return c, nil
}

// Record converts one data row. A row with a different number of columns
// than the header, or without a valid LEI, gives a *SkipError.
func (c *GLEIFColumns) Record(row []string) (GLEIFRecord, error) {
	if len(row) != c.width {
		return GLEIFRecord{}, skipf(ReasonWrongColumns, "%d columns, header has %d", len(row), c.width)
	}
	get := func(col string) string {
		if i, ok := c.index[col]; ok {
			return strings.TrimSpace(row[i])
		}
		return ""
	}
	rec := GLEIFRecord{
		LegalName:          cleanText(get(colLegalName)),
		City:               cleanText(get(colCity)),
		Country:            get(colCountry),
		RACode:             strings.ToUpper(get(colRACode)),
		RAEntityID:         cleanText(get(colRAEntityID)),
		EntityStatus:       strings.ToUpper(get(colEntityStatus)),
		RegistrationStatus: strings.ToUpper(get(colRegistrationStatus)),
		ValidationSources:  strings.ToUpper(get(colValidationSources)),
		Jurisdiction:       get(colJurisdiction),
		LegalFormCode:      get(colLegalForm),
		LastUpdate:         parseTime(get(colLastUpdate)),
	}
	return rec, rec.setLEI(get(colLEI))
}
