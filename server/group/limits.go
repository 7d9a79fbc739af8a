package group

import (
	"fmt"
	"unicode/utf8"

	"github.com/pystream/pystream/topic"
)

// The bounds both coordinators keep, so that what clients send cannot
// grow the server's memory without limit, and the one check of a group
// id.
const (
	// MaxMembers is the most members a group admits, in either protocol
	// (Kafka's group.max.size and group.consumer.max.size are a bound of
	// the same kind): a join past it is ErrGroupFull. A classic group
	// counts the member ids it gave out and that have not joined yet.
	MaxMembers = 1000
	// DefaultMaxGroups is the most groups one coordinator keeps
	// (ClassicConfig.MaxGroups, ConsumerConfig.MaxGroups): a join that
	// would start one more is ErrTooManyGroups. Kafka has no such bound;
	// with MaxMembers it caps a coordinator's members, and with them its
	// memory, at a million.
	DefaultMaxGroups = 1000
	// MaxClientID is the most bytes of a client id a coordinator keeps
	// (ClipClientID): the HTTP API refuses a longer client_id, a Kafka
	// request may carry up to 32 KiB, and the head of a classic member's
	// client id starts its member id.
	MaxClientID = 255
)

// ValidateID checks a group id: the group id is the consumer id of
// PyStream's durable offsets, so it follows topic.ValidateName's rule. An
// invalid id wraps both ErrInvalidGroupID and topic.ErrInvalidName. Every
// path that takes a group id checks it with this.
func ValidateID(group string) error {
	if err := topic.ValidateName(group); err != nil {
		return fmt.Errorf("group %q: %w: %w", group, ErrInvalidGroupID, err)
	}
	return nil
}

// ClipClientID is the first MaxClientID bytes of id, cut at a rune
// boundary.
func ClipClientID(id string) string {
	if len(id) <= MaxClientID {
		return id
	}
	cut := MaxClientID
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return id[:cut]
}
