package server

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// A stop is bounded: a close that hangs (a peer paused or cut off) is
// given up on at the deadline, with the stacks that show what held it;
// one that finishes in time returns its own error; zero waits for it.
func TestCloseWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hung := make(chan struct{})
		defer close(hung)
		start := time.Now()
		err := closeWithin(3*time.Second, func() error { <-hung; return nil })
		require.Equal(t, 3*time.Second, time.Since(start), "given up on at the deadline, not before nor after")
		require.ErrorIs(t, err, ErrStopTimeout)
		var timeout *StopTimeoutError
		require.ErrorAs(t, err, &timeout)
		require.Equal(t, 3*time.Second, timeout.Deadline)
		require.True(t, strings.Contains(timeout.Stacks, "TestCloseWithin"), "the stacks show the goroutine that holds the close:\n%s", timeout.Stacks)

		failed := errors.New("disk gone")
		require.ErrorIs(t, closeWithin(3*time.Second, func() error { return failed }), failed)
		require.NoError(t, closeWithin(0, func() error { time.Sleep(time.Hour); return nil }), "zero: unbounded")
	})
}
