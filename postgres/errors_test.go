package postgres

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"

	"companydocs"
)

// TestClassify: what the database cannot answer now is service_unavailable;
// an error of the rules' own work inside a transaction, such as a file
// that is missing, stays what it is (fs.PathError satisfies net.Error).
func TestClassify(t *testing.T) {
	ctx := context.Background()
	_, fileErr := os.ReadFile("/nonexistent/document.pdf")
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		err         error
		unavailable bool
	}{
		{fileErr, false},
		{errors.New("a rule said no"), false},
		{refused, true},
		{context.DeadlineExceeded, true},
	} {
		var app *companydocs.Error
		got := errors.As(classify(ctx, tc.err), &app) && app.Code == companydocs.EUNAVAILABLE
		if got != tc.unavailable {
			t.Errorf("classify(%v): service_unavailable %v, want %v", tc.err, got, tc.unavailable)
		}
	}
}
