package reconcile

// Version is the version of the Reconciliation Service API served.
const Version = "0.2"

// The one type of entity this service reconciles against.
const (
	TypeCompany     = "company"
	TypeCompanyName = "German company (commercial, cooperative, partnership or association register entry)"
)

// Identifier and schema spaces: URIs that name this service's profile
// ids and property ids. They are names, not pages.
const (
	IdentifierSpace = "https://companydocs.invalid/profile/"
	SchemaSpace     = "https://companydocs.invalid/property/"
)

// Paths below the endpoint, and the size of the preview card.
const (
	PathSuggestEntity   = "/suggest/entity"
	PathSuggestProperty = "/suggest/property"
	PathPreview         = "/preview"
	PathProperties      = "/properties"
	PreviewWidth        = 400
	PreviewHeight       = 170
)

// Description says in words what the service answers and what match
// means; it is the manifest's documentation for people.
const Description = "Reconciles German companies against the register: each query's text is a name, a register number, an LEI or any clue; " +
	"properties (city, postal_code, address, court, register_number, lei, officer, legal_form) are used as the evidence they are. " +
	"match is true only for a candidate the service labels exact AND that may be ordered (ordering_eligible): an exact register entry, " +
	"an exact LEI, or the only entry with the exact name at the seat given. Accepting matches automatically accepts nothing else; " +
	"score is the confidence times 100."

// Manifest is the service manifest (0.2 schema manifest.json).
type Manifest struct {
	Versions        []string     `json:"versions"`
	Name            string       `json:"name"`
	IdentifierSpace string       `json:"identifierSpace"`
	SchemaSpace     string       `json:"schemaSpace"`
	Documentation   string       `json:"documentation"`
	ServiceVersion  string       `json:"serviceVersion,omitempty"`
	DefaultTypes    []Type       `json:"defaultTypes"`
	View            URLTemplate  `json:"view"`
	Preview         PreviewSpec  `json:"preview"`
	Suggest         SuggestSpecs `json:"suggest"`
	Extend          ExtendSpec   `json:"extend"`
	// Description is no field of the 0.2 schema, which allows others:
	// it says what match means, for people reading the manifest.
	Description string `json:"description"`
}

// Type is an entity type.
type Type struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// URLTemplate is a URL with {{id}} where an identifier goes.
type URLTemplate struct {
	URL string `json:"url"`
}

// PreviewSpec says where the preview card of an entity is.
type PreviewSpec struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// ServicePath is a service's URL: ServiceURL followed by ServicePath.
type ServicePath struct {
	ServiceURL  string `json:"service_url"`
	ServicePath string `json:"service_path"`
}

// SuggestSpecs are the suggest services offered.
type SuggestSpecs struct {
	Entity   ServicePath `json:"entity"`
	Property ServicePath `json:"property"`
}

// ExtendSpec is the data extension metadata.
type ExtendSpec struct {
	ProposeProperties ServicePath `json:"propose_properties"`
}

// NewManifest describes the service at endpoint (the absolute URL of the
// reconciliation endpoint), whose profiles the page at viewURL shows
// (a URL with {{id}}), documented at docs.
func NewManifest(endpoint, viewURL, docs, version string) Manifest {
	return Manifest{
		Versions:        []string{Version},
		Name:            "companydocs: German company register",
		IdentifierSpace: IdentifierSpace,
		SchemaSpace:     SchemaSpace,
		Documentation:   docs,
		ServiceVersion:  version,
		DefaultTypes:    []Type{{ID: TypeCompany, Name: TypeCompanyName}},
		View:            URLTemplate{URL: viewURL},
		Preview:         PreviewSpec{URL: endpoint + PathPreview + "?id={{id}}", Width: PreviewWidth, Height: PreviewHeight},
		Suggest: SuggestSpecs{
			Entity:   ServicePath{ServiceURL: endpoint, ServicePath: PathSuggestEntity},
			Property: ServicePath{ServiceURL: endpoint, ServicePath: PathSuggestProperty},
		},
		Extend:      ExtendSpec{ProposeProperties: ServicePath{ServiceURL: endpoint, ServicePath: PathProperties}},
		Description: Description,
	}
}
