package app

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestCommandLineLogsDurationsInMilliseconds: a duration is logged as
// milliseconds under a key that says so, not as raw nanoseconds.
func TestCommandLineLogsDurationsInMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&buf, "json", "info").Info("index segments merged", "duration", 8600*time.Millisecond, "wait_ms", 1500*time.Microsecond)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["duration_ms"] != 8600.0 || line["wait_ms"] != 1.5 || line["duration"] != nil {
		t.Fatalf("logged %s, want duration_ms 8600 and wait_ms 1.5", buf.Bytes())
	}
}
