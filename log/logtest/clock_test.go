package logtest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// A Clock reads what it was set to and moves only when told.
func TestClock(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	c := logtest.NewClock(t0)
	require.Equal(t, t0, c.Now())
	c.Advance(time.Minute)
	require.Equal(t, t0.Add(time.Minute), c.Now())
	c.Set(t0.Add(-time.Hour))
	require.Equal(t, t0.Add(-time.Hour), c.Now(), "a clock may step back")
}
