package companydocs

import (
	"strings"
	"testing"
)

func TestCheckShrink(t *testing.T) {
	for _, tc := range []struct {
		name             string
		live, next       int
		allow, wantError bool
	}{
		{"first generation", 0, 5, false, false},
		{"same size", 200_207, 200_207, false, false},
		{"exactly half", 200, 100, false, false},
		{"one chunk of a national dump", 200_207, 5_937, false, true},
		{"one chunk, allowed", 200_207, 5_937, true, false},
		{"growth", 5_937, 200_207, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShrink("gen-a", tc.live, tc.next, tc.allow)
			if (err != nil) != tc.wantError {
				t.Fatalf("CheckShrink(%d, %d, %v) = %v, want error %v", tc.live, tc.next, tc.allow, err, tc.wantError)
			}
			if err != nil {
				for _, want := range []string{"gen-a", "200207", "5937", "--allow-shrink"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message %q does not name %q", err, want)
					}
				}
			}
		})
	}
}
