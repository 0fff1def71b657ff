//go:build national

package register

import (
	"math"
	"path/filepath"
	"testing"

	"companydocs/internal/realdata"
)

// TestParseCompanyNumberNational runs the checks of
// TestParseCompanyNumberRealRecords over every record of every chunk of the
// national dump (1,205,727 records; make test-national).
func TestParseCompanyNumberNational(t *testing.T) {
	chunks, err := filepath.Glob(filepath.Join(realdata.National(t), "offeneregister", "ocdata.chunk*.jsonl.bz2"))
	if err != nil || len(chunks) == 0 {
		t.Fatalf("no ocdata chunks in the national data (%v)", err)
	}
	for _, path := range chunks {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			checkCompanyNumbers(t, readOCRecords(t, name, math.MaxInt))
		})
	}
}
