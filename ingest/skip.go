package ingest

import "fmt"

// SkipError says why one input line was skipped. The ingest goes on.
type SkipError struct {
	// Reason is a short, fixed phrase that skipped lines are counted by.
	Reason string
	// Detail says what exactly was wrong with this line.
	Detail string
}

// Error implements the error interface.
func (e *SkipError) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + ": " + e.Detail
}

func skipf(reason, format string, args ...any) *SkipError {
	return &SkipError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}
