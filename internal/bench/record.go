package bench

// Record is one company in the OffeneRegister JSONL format, with the fields
// the ingest reads. Unknown fields of real records are dropped.
type Record struct {
	AllAttributes     Attributes     `json:"all_attributes"`
	CompanyNumber     string         `json:"company_number"`
	CurrentStatus     string         `json:"current_status"`
	JurisdictionCode  string         `json:"jurisdiction_code"`
	Name              string         `json:"name"`
	Officers          []Officer      `json:"officers,omitempty"`
	PreviousNames     []PreviousName `json:"previous_names,omitempty"`
	RegisteredAddress string         `json:"registered_address,omitempty"`
	RetrievedAt       string         `json:"retrieved_at,omitempty"`
}

// Attributes is the all_attributes object of a record.
type Attributes struct {
	RegisterArt          string          `json:"_registerArt"`
	RegisterNummer       string          `json:"_registerNummer"`
	RegisterNummerSuffix string          `json:"_registerNummerSuffix,omitempty"`
	AdditionalData       map[string]bool `json:"additional_data,omitempty"`
	FederalState         string          `json:"federal_state,omitempty"`
	FormerRegistrar      string          `json:"former_registrar,omitempty"`
	NativeCompanyNumber  string          `json:"native_company_number,omitempty"`
	RegisteredOffice     string          `json:"registered_office,omitempty"`
	Registrar            string          `json:"registrar,omitempty"`
}

// Officer is one entry of a record's officers list.
type Officer struct {
	EndDate         string            `json:"end_date,omitempty"`
	Name            string            `json:"name"`
	OtherAttributes OfficerAttributes `json:"other_attributes"`
	Position        string            `json:"position,omitempty"`
	StartDate       string            `json:"start_date,omitempty"`
	Type            string            `json:"type,omitempty"`
}

// OfficerAttributes is the other_attributes object of an officer.
type OfficerAttributes struct {
	City      string `json:"city,omitempty"`
	Dismissed bool   `json:"dismissed,omitempty"`
	Firstname string `json:"firstname,omitempty"`
	Lastname  string `json:"lastname,omitempty"`
}

// PreviousName is one entry of a record's previous_names list.
type PreviousName struct {
	CompanyName string `json:"company_name"`
}

// Live status values of current_status.
const (
	StatusLive    = "currently registered"
	StatusRemoved = "removed"
)

// IsLive reports whether the record is currently registered.
func (r *Record) IsLive() bool { return r.CurrentStatus == StatusLive }
