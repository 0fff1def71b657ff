package e2e

import (
	"bytes"
	"context"
	"testing"

	"companydocs/app"
)

// RunCLI runs one command line as main does and returns what main would
// print on stderr after the command's own output, and the exit code.
func RunCLI(t *testing.T, args ...string) (stdout, stderr, line string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := app.RunCommand(context.Background(), args, &out, &errOut)
	if err == nil {
		return out.String(), errOut.String(), "", 0
	}
	return out.String(), errOut.String(), app.ErrorLine(err), app.ExitCode(err)
}
