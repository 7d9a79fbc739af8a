package topic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/pystream/pystream/log/durable"
)

// MetadataFile is the name of a topic's metadata file inside its directory.
const MetadataFile = "topic.meta"

// MetadataVersion is the only topic.meta version this package reads and
// writes.
const MetadataVersion = 1

// maxMetadataSize bounds how much of a topic.meta file is read. The file
// PyStream writes is under 320 bytes; anything far larger is not one of ours.
const maxMetadataSize = 64 << 10

// Metadata is the content of topic.meta.
type Metadata struct {
	// Version is MetadataVersion.
	Version int
	// Name is the topic's name; it equals the name of the topic's
	// directory.
	Name string
	// PartitionCount is the number of partitions, 1 to MaxPartitionCount.
	PartitionCount int
}

// encodeMetadata renders topic.meta: one line of JSON, fields in a fixed
// order, so the bytes on disk are predictable and diffable.
func encodeMetadata(m Metadata) []byte {
	name, _ := json.Marshal(m.Name) // marshalling a string cannot fail
	return fmt.Appendf(nil, "{\"version\": %d, \"name\": %s, \"partition_count\": %d}\n", m.Version, name, m.PartitionCount)
}

// problem returns the *MetadataError ParseMetadata reports; the caller that
// read the file fills in Path.
func problem(err error, format string, args ...any) error {
	return &MetadataError{Reason: fmt.Sprintf(format, args...), Err: err}
}

// ParseMetadata decodes topic.meta strictly: exactly one JSON object with the
// fields version (the integer 1), name (a valid topic name) and
// partition_count (an integer from 1 to MaxPartitionCount), each exactly once, nothing else, and
// nothing but white space after it. Unknown fields are refused rather than
// ignored: a version-1 file PyStream wrote never has them, so their presence
// means the file is not what this code thinks it is. It is a pure function:
// bytes in, a value or a *MetadataError (with an empty Path) out. Open and
// OpenExisting read topic.meta with it, and so does `pystream log verify`;
// whether the stored name matches the topic's directory is left to the
// caller, which knows the directory.
func ParseMetadata(data []byte) (Metadata, error) {
	var m Metadata
	if len(data) > maxMetadataSize {
		return m, problem(nil, "%d bytes, larger than any topic.meta (%d)", len(data), maxMetadataSize)
	}
	fields, err := decodeObject(data)
	if err != nil {
		return m, err
	}
	raw, ok := fields["version"]
	if !ok {
		return m, problem(nil, "missing field \"version\"")
	}
	if m.Version, err = decodeInt(raw); err != nil {
		return m, problem(err, "field \"version\" is not an integer")
	}
	if m.Version != MetadataVersion {
		return m, problem(nil, "unknown version %d (this build reads version %d)", m.Version, MetadataVersion)
	}
	if k, ok := durable.UnknownField(fields, "version", "name", "partition_count"); ok {
		return m, problem(nil, "unknown field %q", k)
	}
	if raw, ok = fields["name"]; !ok {
		return m, problem(nil, "missing field \"name\"")
	}
	if m.Name, err = decodeString(raw); err != nil {
		return m, problem(err, "field \"name\" is not a string")
	}
	if err := ValidateName(m.Name); err != nil {
		return m, problem(err, "unsafe stored name")
	}
	if raw, ok = fields["partition_count"]; !ok {
		return m, problem(nil, "missing field \"partition_count\"")
	}
	if m.PartitionCount, err = decodeInt(raw); err != nil {
		return m, problem(err, "field \"partition_count\" is not an integer")
	}
	if m.PartitionCount < 1 || m.PartitionCount > MaxPartitionCount {
		return m, problem(nil, "partition_count %d, must be 1 to %d", m.PartitionCount, MaxPartitionCount)
	}
	return m, nil
}

// decodeObject splits one JSON object into its raw field values, refusing
// duplicate keys and anything after the object.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	fields, err := durable.ObjectFields(data)
	var oe *durable.ObjectError
	if errors.As(err, &oe) {
		return nil, problem(oe.Err, "%s", oe.Reason)
	}
	return fields, err
}

var errWrongType = errors.New("wrong JSON type")

// decodeInt accepts a JSON number written as an integer that fits an int:
// not null, not a string, not 1.0 or 1e0.
func decodeInt(raw json.RawMessage) (int, error) {
	if !durable.IsInteger(raw) {
		return 0, errWrongType
	}
	n, err := strconv.ParseInt(string(raw), 10, 0)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// decodeString accepts a JSON string, not null.
func decodeString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", errWrongType
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}
