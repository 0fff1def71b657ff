package sheet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs"
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
	p := newRowProgress(&screen, "en", false, 1)
	if got := p.done(); got != "1 rows (1 kept)" {
		t.Errorf("before counting: %q, want the total unknown", got)
	}
	countInputRows(context.Background(), path, ',', Caps{Field: 100, Row: 200, Header: 200}, p)
	p.add(make([]rowOutcome, 2))
	if got := p.done(); got != "3 of 4 rows (1 kept)" {
		t.Errorf("counted: %q, want 3 of 4 rows (1 kept)", got)
	}
	p.waiting(1500*time.Millisecond, "the server's search rate limit")
	if got := screen.String(); got != "waiting 2 s: the server's search rate limit; done: 3 of 4 rows (1 kept)\n" {
		t.Errorf("the wait is said as %q", got)
	}
}

// TestResolveProgressInGerman: under --lang de the waits and the summary
// are German too, and the summary counts the rows by what they came to:
// found exact, to review, not found, refused.
func TestResolveProgressInGerman(t *testing.T) {
	var screen bytes.Buffer
	p := newRowProgress(&screen, "de", false, 0)
	p.counted(5)
	p.add([]rowOutcome{
		{best: &companydocs.Candidate{ConfidenceLabel: companydocs.LabelExact}},
		{best: &companydocs.Candidate{ConfidenceLabel: companydocs.LabelPossible}},
		{best: &companydocs.Candidate{ConfidenceLabel: companydocs.LabelNeedsVerification}},
		{notes: []string{"name_words_unknown"}},
		{errCode: "validation_error"},
	})
	p.waiting(2*time.Second, (&retryableError{err: errors.New("timeout"), status: 429, rateLimited: true, said: "Zu viele Suchen."}).why("de", false))
	p.finish()
	want := "warte 2 s: das Suchlimit des Servers (429: Zu viele Suchen; ein mit " + APIKeyEnv +
		" angemeldetes Konto sucht im Takt seines Tarifs); erledigt: 5 von 5 Zeilen\n" +
		"5 Zeilen: 1 exakt gefunden, 2 zu prüfen, 1 nicht gefunden. 1 abgelehnt (die Spalte mit den Gründen sagt, warum).\n"
	if got := screen.String(); got != want {
		t.Errorf("German progress:\n%s\nwant:\n%s", got, want)
	}
}
