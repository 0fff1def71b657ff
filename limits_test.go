package companydocs

import (
	"strings"
	"testing"
)

// TestCheckLength: a text is counted in characters, accepted at its cap
// and refused one over it with validation_error naming the field and the
// cap, never shortened.
func TestCheckLength(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		limit       int
		refused     bool
	}{
		{"empty", "", 3, false},
		{"ASCII at the cap", "abc", 3, false},
		{"ASCII one over", "abcd", 3, true},
		{"two-byte characters at the cap", "äöü", 3, false},
		{"two-byte characters one over", "äöüß", 3, true},
		{"a byte that is not UTF-8 counts as one", "ab\xff", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLength("note", tc.value, tc.limit)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if ErrorCode(err) != EVALIDATION || !strings.Contains(err.Error(), `Field "note" is longer than 3 characters`) {
				t.Fatalf("error %v, want validation_error naming the field and the cap", err)
			}
		})
	}
	err := CheckHeaderLength("Idempotency-Key", strings.Repeat("k", MaxIdempotencyKey+1), MaxIdempotencyKey)
	if ErrorCode(err) != EVALIDATION || !strings.Contains(err.Error(), "The Idempotency-Key header is longer than 255 characters") {
		t.Errorf("header: %v", err)
	}
}
