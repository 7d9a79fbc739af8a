package controller

import (
	"errors"
	"fmt"
	"time"
)

// The controller's sentinels.
var (
	// ErrNegativeDelay is returned for a negative failover delay.
	ErrNegativeDelay = errors.New("controller: a failover delay cannot be negative")
	// ErrRecoveryHeld is matched by *RecoveryHeldError.
	ErrRecoveryHeld = errors.New("controller: recovery held")
)

// RecoveryHeldError is why the controller does not recover a follower at
// once: it was found diverged again Again after its last recovery, and its
// next recovery waits Wait (RecoveryBackoff). It is journaled as the
// recovery's refusal, once per episode.
type RecoveryHeldError struct {
	Topic     string
	Partition int
	Broker    int
	Again     time.Duration
	Wait      time.Duration
}

func (e *RecoveryHeldError) Error() string {
	return fmt.Sprintf("controller: follower %d of %s/%d diverged again %s after its recovery: its recoveries back off, the next in %s (the broker's disk, or requests reaching it that should not, keep it diverging)",
		e.Broker, e.Topic, e.Partition, e.Again.Round(time.Millisecond), e.Wait)
}

// Is makes errors.Is(err, ErrRecoveryHeld) true.
func (e *RecoveryHeldError) Is(target error) bool { return target == ErrRecoveryHeld }
