package orders

import (
	"fmt"
	"slices"
	"testing"

	"companydocs/httpapi"
	"companydocs/ordering"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIListsTheActions: the Action schema of the OpenAPI document
// names exactly the actions package ordering derives, in its order.
func TestOpenAPIListsTheActions(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, v := range doc.Components.Schemas["Action"].Value.Enum {
		documented = append(documented, fmt.Sprint(v))
	}
	if !slices.Equal(documented, ordering.Actions) {
		t.Errorf("openapi.json documents the actions %q, the service has %q", documented, ordering.Actions)
	}
}
