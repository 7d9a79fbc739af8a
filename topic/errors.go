package topic

import "errors"

// Sentinel errors; check them with errors.Is.
var (
	// ErrInvalidName is returned for a topic name or consumer id outside
	// the allowed characters and length.
	ErrInvalidName = errors.New("topic: invalid name")
	// ErrPartitionOutOfRange is returned for a partition id below 0 or not
	// below the partition count.
	ErrPartitionOutOfRange = errors.New("topic: partition out of range")
)
