package resolver

import (
	"reflect"
	"strings"
	"testing"
)

// TestPropertyIDsAreTheJSONFields: the one table of property ids names
// every field of Properties by its JSON name, in order, and Field finds
// each field by its id (nil for another id).
func TestPropertyIDsAreTheJSONFields(t *testing.T) {
	typ := reflect.TypeFor[Properties]()
	if len(PropertyIDs) != typ.NumField() {
		t.Fatalf("PropertyIDs %v, want one for each of the %d fields", PropertyIDs, typ.NumField())
	}
	var p Properties
	for i, id := range PropertyIDs {
		f := typ.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != id {
			t.Errorf("property %d is %q, the field %s is %q in JSON", i, id, f.Name, name)
		}
		*p.Field(id) = id
		if got := reflect.ValueOf(p).Field(i).String(); got != id {
			t.Errorf("Field(%q) is not the field %s", id, f.Name)
		}
	}
	if p.Field("town") != nil {
		t.Error("Field of an unknown id is not nil")
	}
}
