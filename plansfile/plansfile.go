// Package plansfile reads a deployment's plans file from disk into
// ordering.Plans. It owns the file reading, so that package ordering, which
// validates the plans (ordering.ParsePlans), does no file I/O.
package plansfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"companydocs/ordering"
)

// Load reads and validates a plans file. A missing file (or an empty
// path) is not an error: it yields empty Plans, and the plans endpoint then
// answers plan_configuration_missing. An invalid file is an error naming
// the file, the plan and the field, so that serve stops at start.
func Load(path string) (*ordering.Plans, error) {
	if path == "" {
		return ordering.NoPlans(""), nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ordering.NoPlans(path), nil
	} else if err != nil {
		return nil, fmt.Errorf("read plans file %q: %w", path, err)
	}
	return ordering.ParsePlans(path, data)
}
