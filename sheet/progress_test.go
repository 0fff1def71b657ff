package sheet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestResolveProgressCountsRows: the bar's words count rows, not bytes:
// rows done of the rows the file holds (a cell quoted over two lines is
// one row, a row over a cap is a row), with the rows a resumed output
// kept; on stdin the total is unknown and only the rows done are said.
func TestResolveProgressCountsRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	text := "Firma,Ort\n\"Alpha\nGmbH\",Berlin\nBeta AG,Köln\n" + strings.Repeat("x", 300) + ",Bonn\nGamma KG,Ulm\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	p := newRowProgress(&screen, false, 1)
	if got := p.done(); got != "1 rows (1 kept)" {
		t.Errorf("before counting: %q, want the total unknown", got)
	}
	countInputRows(context.Background(), path, ',', Caps{Field: 100, Row: 200, Header: 200}, p)
	p.add(2)
	if got := p.done(); got != "3 of 4 rows (1 kept)" {
		t.Errorf("counted: %q, want 3 of 4 rows (1 kept)", got)
	}
	p.waiting(1500*time.Millisecond, "the server's search rate limit")
	if got := screen.String(); got != "waiting 2 s: the server's search rate limit; done: 3 of 4 rows (1 kept)\n" {
		t.Errorf("the wait is said as %q", got)
	}
}
