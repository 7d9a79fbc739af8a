package client

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/pystream/pystream/log/durable"
)

// OffsetFileVersion is the only offset file version this package reads and
// writes.
const OffsetFileVersion = 1

// maxOffsetFileSize bounds how much of an offset file is read; the file
// PyStream writes is under 50 bytes.
const maxOffsetFileSize = 4 << 10

// encodeOffset renders an offset file: one line of JSON.
func encodeOffset(offset uint64) []byte {
	return fmt.Appendf(nil, "{\"version\": %d, \"offset\": %d}\n", OffsetFileVersion, offset)
}

// bad returns the *OffsetCorruptionError ParseOffsetFile reports; the
// caller that read the file fills in Path.
func bad(err error, format string, args ...any) error {
	return &OffsetCorruptionError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// ParseOffsetFile decodes an offset file strictly: exactly one JSON object
// with version (the integer 1) and offset (a non-negative integer that fits
// a uint64), each once, no other field, nothing but white space after it.
// It is a pure function: bytes in, the offset or an *OffsetCorruptionError
// (with an empty Path) out. The OffsetStore reads offset files with it, and
// so does `pystream log verify`.
func ParseOffsetFile(data []byte) (uint64, error) {
	if len(data) > maxOffsetFileSize {
		return 0, bad(nil, "%d bytes, larger than any offset file (%d)", len(data), maxOffsetFileSize)
	}
	fields, err := durable.ObjectFields(data)
	if err != nil {
		var oe *durable.ObjectError
		if errors.As(err, &oe) {
			return 0, bad(oe.Err, "%s", oe.Reason)
		}
		return 0, bad(err, "not JSON")
	}

	raw, ok := fields["version"]
	if !ok {
		return 0, bad(nil, "missing field \"version\"")
	}
	if !durable.IsInteger(raw) {
		return 0, bad(nil, "field \"version\" is not an integer: %s", raw)
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err != nil || v != OffsetFileVersion {
		return 0, bad(err, "unknown version %s (this build reads version %d)", raw, OffsetFileVersion)
	}
	if k, ok := durable.UnknownField(fields, "version", "offset"); ok {
		return 0, bad(nil, "unknown field %q", k)
	}
	raw, ok = fields["offset"]
	if !ok {
		return 0, bad(nil, "missing field \"offset\"")
	}
	if !durable.IsInteger(raw) {
		return 0, bad(nil, "field \"offset\" is not an integer: %s", raw)
	}
	if raw[0] == '-' {
		return 0, bad(nil, "negative offset %s", raw)
	}
	off, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, bad(err, "offset %s out of range", raw)
	}
	return off, nil
}

// ReadOffsetFile reads and parses the offset file at path, changing
// nothing: the checks OffsetStore.Load makes, for a tool that judges a data
// directory. ok is false, with no error, when the file does not exist
// (nothing was ever committed). Something other than a regular file, a file
// too large and a ParseOffsetFile refusal are an *OffsetCorruptionError
// naming path; an I/O error is wrapped.
func ReadOffsetFile(fsys durable.FS, path string) (offset uint64, ok bool, err error) {
	data, err := durable.ReadSmallFile(fsys, path, maxOffsetFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	case errors.Is(err, durable.ErrNotRegular), errors.Is(err, durable.ErrTooLarge):
		return 0, false, &OffsetCorruptionError{Path: path, Reason: "not an offset file", Err: err}
	case err != nil:
		return 0, false, fmt.Errorf("client: read offset file %s: %w", path, err)
	}
	off, err := ParseOffsetFile(data)
	if err != nil {
		var oce *OffsetCorruptionError
		if errors.As(err, &oce) {
			oce.Path = path
		}
		return 0, false, err
	}
	return off, true, nil
}
