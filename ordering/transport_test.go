package ordering

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The domain knows no transport: no message of this package names a route
// (the HTTP layer adds routes to errors through their Hint). Comments may.
func TestMessagesNameNoRoutes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if strings.Contains(code, "/api/") {
				t.Errorf("%s:%d names a route: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
