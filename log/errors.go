package log

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns wraps one of these or is a
// *CorruptionError; check them with errors.Is and errors.As.
var (
	// ErrClosed is returned by every operation on a closed log.
	ErrClosed = errors.New("log: closed")
	// ErrFailed is returned by every write after a write, fsync or truncate
	// failed. The log refuses writes until it is reopened, because after a
	// failed fsync nothing is known about what reached the disk.
	ErrFailed = errors.New("log: failed by an earlier write error; reopen to continue")
	// ErrPayloadTooLarge is returned for a payload above the configured
	// maximum.
	ErrPayloadTooLarge = errors.New("log: payload too large")
	// ErrInvalidArgument is returned for arguments out of range, such as a
	// maxRecords below 1 or a truncation point past the end.
	ErrInvalidArgument = errors.New("log: invalid argument")
	// ErrOffsetMismatch is returned by AppendRecord when the record's offset
	// is not the log's next offset.
	ErrOffsetMismatch = errors.New("log: record offset is not the next offset")
	// ErrMalformedFrame is wrapped by DecodeFrame when a frame's two length
	// fields disagree.
	ErrMalformedFrame = errors.New("log: malformed frame")
	// ErrNotTornTail is returned by Repair when the damage is anything other
	// than a torn tail; such a log is left untouched.
	ErrNotTornTail = errors.New("log: damage is not a torn tail; refusing to repair")
)

// CorruptionError reports a log file that is not a contiguous run of whole,
// well-formed records starting at offset 0. The file is never changed by the
// code that reports it.
type CorruptionError struct {
	// Path is the log file.
	Path string
	// Pos is the byte position where the damage starts. For a torn tail it
	// is also the end of the last whole record, the length Repair cuts to.
	Pos int64
	// Offset is the offset the damaged record should have had (the number
	// of whole records before it). OffsetKnown is false when even that is
	// unknown.
	Offset      uint64
	OffsetKnown bool
	// Reason says what is wrong, in words.
	Reason string
	// TornTail is true when the damage is only an unfinished last append:
	// fewer bytes left than a header, an all-zero rest, or a last frame
	// whose length fields agree but which runs past the end of the file.
	// Such a log can be cut back with Repair.
	TornTail bool
	// Err is the underlying cause, if any (io.ErrUnexpectedEOF for a frame
	// cut short).
	Err error
}

func (e *CorruptionError) Error() string {
	kind := "corrupt"
	if e.TornTail {
		kind = "torn tail"
	}
	s := fmt.Sprintf("log: %s: %s at byte %d", e.Path, kind, e.Pos)
	if e.OffsetKnown {
		s += fmt.Sprintf(" (offset %d)", e.Offset)
	}
	s += ": " + e.Reason
	if e.TornTail {
		s += fmt.Sprintf("; the last whole record ends at byte %d", e.Pos)
	}
	return s
}

func (e *CorruptionError) Unwrap() error { return e.Err }
