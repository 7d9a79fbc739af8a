package topic

import (
	"errors"
	"fmt"
)

// Sentinel errors; check them with errors.Is. Errors from the partition logs
// (log.ErrClosed, log.ErrFailed, log.ErrPayloadTooLarge, *log.CorruptionError)
// are passed through wrapped, so check those with errors.Is and errors.As too.
var (
	// ErrInvalidName is returned for a topic name or consumer id outside
	// the allowed characters and length.
	ErrInvalidName = errors.New("topic: invalid name")
	// ErrPartitionOutOfRange is returned for a partition id below 0 or not
	// below the partition count.
	ErrPartitionOutOfRange = errors.New("topic: partition out of range")
	// ErrInvalidPartitionCount is returned by Open for a partition count
	// below 1 or above MaxPartitionCount. Nothing is created.
	ErrInvalidPartitionCount = errors.New("topic: partition count must be 1 to 1000000")
	// ErrMissingPartition is returned when reopening a topic whose
	// topic.meta is valid but one of whose partition directories or log
	// files is gone. The missing partition is never recreated, because its
	// records would be silently lost.
	ErrMissingPartition = errors.New("topic: partition missing from an existing topic")
	// ErrTopicNotFound is returned by OpenExisting when the directory holds
	// no topic.meta.
	ErrTopicNotFound = errors.New("topic: topic not found")
	// ErrInvalidConfig is wrapped by every *ConfigError: a configuration
	// key that does not exist, or a value its key does not accept.
	ErrInvalidConfig = errors.New("topic: invalid configuration")
)

// MetadataError reports a topic.meta file that cannot be trusted: unreadable,
// not the JSON document PyStream writes, of an unknown version, or
// disagreeing with what Open was asked for. The file is never changed by the
// code that reports it, and no partition is touched.
type MetadataError struct {
	// Path is the topic.meta file, empty when ParseMetadata judged bytes
	// that came from nowhere in particular.
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any (a JSON syntax error, an I/O
	// error, ErrInvalidName for an unsafe stored name).
	Err error
}

func (e *MetadataError) Error() string {
	s := "topic: metadata"
	if e.Path != "" {
		s += " " + e.Path
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += fmt.Sprintf(": %v", e.Err)
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *MetadataError) Unwrap() error { return e.Err }

// ConfigError reports one configuration key that was refused, and why.
type ConfigError struct {
	// Key is the configuration key, as given (it may be unknown).
	Key string
	// Value is the refused value, as given; empty when the key alone was
	// refused.
	Value string
	// Reason says what is wrong and what is allowed, in words.
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("topic: config %q: %s", e.Key, e.Reason)
	}
	return fmt.Sprintf("topic: config %q = %q: %s", e.Key, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }
