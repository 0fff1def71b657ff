package publication

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestDamageBackoffFetchesAFewTimesIn5Minutes: the backoff of a damaged
// generation lets a node fetch it at most four times in five minutes,
// and never waits longer than the cap.
func TestDamageBackoffFetchesAFewTimesIn5Minutes(t *testing.T) {
	fetches, at := 0, time.Duration(0)
	for failures := 1; at < 5*time.Minute; failures++ {
		fetches++
		at += damageBackoff(failures)
	}
	if fetches > 4 {
		t.Errorf("%d fetches in 5 minutes", fetches)
	}
	if got := damageBackoff(40); got != damageBackoffMax {
		t.Errorf("backoff after 40 failures %s, want the cap %s", got, damageBackoffMax)
	}
}

// TestNodesEscapesControlCharacters: names from the metastore are shown
// with escape sequences, line breaks and format characters escaped, so a
// row can neither forge another nor rewrite the terminal.
func TestNodesEscapesControlCharacters(t *testing.T) {
	now := time.Now()
	var out bytes.Buffer
	err := printNodes(&out, []Publication{{Name: "gen-1\x1b[2J", State: "live"}},
		[]Node{{Node: "evil\nnode-b  gen-2  0  1s ago", Generation: "gen-1\u202e", Installing: "gen-\x07",
			Damaged: "gen-3: \x1b]0;title\x07", HeartbeatAt: now}}, now)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, raw := range []string{"\x1b", "\x07", "\u202e", "evil\n"} {
		if strings.Contains(text, raw) {
			t.Errorf("the output holds %q as it is:\n%s", raw, text)
		}
	}
	for _, escaped := range []string{`gen-1\x1b[2J`, `evil\nnode-b`, `gen-1\u202e`, `gen-\a`, `gen-3: \x1b]0;title\a`} {
		if !strings.Contains(text, escaped) {
			t.Errorf("the output lacks %s:\n%s", escaped, text)
		}
	}
}
