package server

import (
	"strconv"
	"time"
)

// MaxGroupInitialDelay is the longest PYSTREAM_GROUP_INITIAL_DELAY.
const MaxGroupInitialDelay = 5 * time.Minute

// GroupDelay is PYSTREAM_GROUP_INITIAL_DELAY: Kafka's
// group.initial.rebalance.delay.ms, from 0 to MaxGroupInitialDelay.
type GroupDelay time.Duration

// Duration returns the delay as a time.Duration.
func (d GroupDelay) Duration() time.Duration { return time.Duration(d) }

// String returns the delay as time.Duration prints it, e.g. "0s".
func (d GroupDelay) String() string { return time.Duration(d).String() }

// Decode accepts a Go duration ("0s", "3s", "500ms") or "0", from 0 to
// MaxGroupInitialDelay.
func (d *GroupDelay) Decode(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil && (v < 0 || v > MaxGroupInitialDelay) {
		err = &strconv.NumError{Func: "ParseDuration", Num: s, Err: strconv.ErrRange}
	}
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a duration such as 0s, 3s or 500ms, from 0 to 5m", Err: err}
	}
	*d = GroupDelay(v)
	return nil
}

// GroupSessionTimeout is PYSTREAM_GROUP_MIN_SESSION_TIMEOUT: the shortest
// session timeout a Kafka group member may ask for, from 1ms to 30m
// (Kafka's group.max.session.timeout.ms, the longest one may ask for).
type GroupSessionTimeout time.Duration

// Duration returns the timeout as a time.Duration.
func (d GroupSessionTimeout) Duration() time.Duration { return time.Duration(d) }

// String returns the timeout as time.Duration prints it, e.g. "6s".
func (d GroupSessionTimeout) String() string { return time.Duration(d).String() }

// Decode accepts a Go duration ("6s", "100ms") from 1ms to 30m. A number
// without a unit is refused: "6" could mean seconds or milliseconds.
func (d *GroupSessionTimeout) Decode(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil && (v < time.Millisecond || v > 30*time.Minute) {
		err = &strconv.NumError{Func: "ParseDuration", Num: s, Err: strconv.ErrRange}
	}
	if err != nil {
		return &ConfigError{Value: s, Allowed: "a duration such as 6s or 100ms, from 1ms to 30m", Err: err}
	}
	*d = GroupSessionTimeout(v)
	return nil
}
