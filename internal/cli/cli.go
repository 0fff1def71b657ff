// Package cli holds what the command's subcommands and the packages that
// run them share: the usage error that makes the command exit 2, and
// whether an output is a terminal.
package cli

import (
	"errors"
	"io"
	"os"
)

// ErrUsage marks a usage error: the command exits 2. Returned bare, the
// usage text has been printed already; wrapped, its sentence ends with a
// pointer to the help.
var ErrUsage = errors.New("run with -h for help")

// IsTerminal reports whether w is a terminal (a progress bar is drawn on
// one, lines are written elsewhere).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
