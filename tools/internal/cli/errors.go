package cli

import (
	"errors"
	"fmt"
)

// Exit codes of the pystream command, as scripts rely on them.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailure: an operational error, or a check that found problems.
	ExitFailure = 1
	// ExitUsage: the command line was wrong (unknown command or flag,
	// wrong number of arguments, a flag value out of range).
	ExitUsage = 2
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrProblemsFound is returned by `log verify` when the report holds
	// damage, divergence or missing files.
	ErrProblemsFound = errors.New("cli: problems found")
	// ErrAborted is returned when the user did not confirm an operation.
	ErrAborted = errors.New("cli: aborted")
)

// UsageError is a mistake on the command line. It makes the command exit
// with ExitUsage.
type UsageError struct {
	// Err says what was wrong.
	Err error
}

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf builds a *UsageError from a message.
func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCode maps the error a command returned to the process exit code.
func ExitCode(err error) int {
	var uerr *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &uerr):
		return ExitUsage
	default:
		return ExitFailure
	}
}

// LineTooLongError is a line of produce's stdin longer than the largest
// record. Produce stops reading at it.
type LineTooLongError struct {
	// Line is the 1-based number of the line.
	Line int
	// Limit is the most bytes a line may hold, without its line ending.
	Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %d bytes, the largest record", e.Line, e.Limit)
}
