package server

import (
	"errors"
	"fmt"
)

// Errors reported by this package. Each typed error below matches one of
// these with errors.Is.
var (
	// ErrInvalidConfig is matched by every *ConfigError: a PYSTREAM_*
	// variable holds a value the server does not accept.
	ErrInvalidConfig = errors.New("server: invalid configuration")

	// ErrMalformedDotEnv is matched by every *DotEnvError: the .env file
	// has a line the parser cannot read.
	ErrMalformedDotEnv = errors.New("server: malformed .env file")

	// ErrStopTimeout is returned by CloseWithin when closing did not
	// finish within its deadline: the server was left closing.
	ErrStopTimeout = errors.New("server: closing did not finish within its deadline")
)

// ConfigError says which configuration variable was rejected, the value it
// held and what would have been accepted.
type ConfigError struct {
	// Var is the environment variable, e.g. PYSTREAM_PORT.
	Var string
	// Value is the rejected value, exactly as it was found.
	Value string
	// Allowed describes the accepted values in words, e.g.
	// "a decimal integer from 1 to 65535".
	Allowed string
	// Err is the underlying cause when there is one (such as a
	// *strconv.NumError); it may be nil.
	Err error
}

func (e *ConfigError) Error() string {
	name := e.Var
	if name == "" {
		name = "value"
	}
	return fmt.Sprintf("server: invalid %s=%q: allowed: %s", name, e.Value, e.Allowed)
}

// Is makes errors.Is(err, ErrInvalidConfig) true for every *ConfigError.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the underlying cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// DotEnvError points at the line of a .env file that could not be parsed.
type DotEnvError struct {
	// Path is the file that was read ("" when parsing bytes directly).
	Path string
	// Line is the 1-based line number.
	Line int
	// Reason says what is wrong with the line.
	Reason string
}

func (e *DotEnvError) Error() string {
	path := e.Path
	if path == "" {
		path = ".env"
	}
	return fmt.Sprintf("server: %s:%d: %s", path, e.Line, e.Reason)
}

// Unwrap returns ErrMalformedDotEnv.
func (e *DotEnvError) Unwrap() error { return ErrMalformedDotEnv }
