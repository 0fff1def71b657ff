package reconcile

import "testing"

// TestEveryExtensionPropertyHasValues: a property the service offers for
// extension is one it can fill.
func TestEveryExtensionPropertyHasValues(t *testing.T) {
	for _, p := range extensionProperties {
		if propertyTexts[p.ID] == nil {
			t.Errorf("extension property %q has no values", p.ID)
		}
	}
	if len(propertyTexts) != len(extensionProperties) {
		t.Errorf("%d properties have values, %d are offered", len(propertyTexts), len(extensionProperties))
	}
}
