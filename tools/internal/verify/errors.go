package verify

import (
	"errors"
	"fmt"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrMetadata is wrapped by every *MetadataError.
	ErrMetadata = errors.New("verify: bad metadata")
)

// MetadataError reports a metadata file (topic.meta, cluster.meta or an
// offset file) that is not the document PyStream writes.
type MetadataError struct {
	// Path is the file, empty when the bytes did not come from a file.
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any (a JSON error, an invalid name).
	Err error
}

func (e *MetadataError) Error() string {
	s := "verify: " + e.Reason
	if e.Path != "" {
		s = fmt.Sprintf("verify: %s: %s", e.Path, e.Reason)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrMetadata and the cause, so both errors.Is(err,
// ErrMetadata) and errors.Is(err, cause) hold.
func (e *MetadataError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrMetadata}
	}
	return []error{ErrMetadata, e.Err}
}

func metaErr(reason string, cause error) *MetadataError {
	return &MetadataError{Reason: reason, Err: cause}
}

func metaErrf(format string, args ...any) *MetadataError {
	return &MetadataError{Reason: fmt.Sprintf(format, args...)}
}
