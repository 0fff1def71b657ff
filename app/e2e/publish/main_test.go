package publish

import (
	"testing"

	"companydocs/internal/e2e"
)

// TestMain lets the test binary act as the companydocs command when a
// test starts it as a separate process.
func TestMain(m *testing.M) { e2e.Main(m) }
