package clustermetrics

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// consumerLag: high watermark minus committed offset, never below 0;
// countErrors counts what errors.Join joined.
func TestMetricsConsumerLagRule(t *testing.T) {
	for _, tc := range []struct{ hw, committed, want uint64 }{
		{0, 0, 0}, {5, 0, 5}, {5, 2, 3}, {5, 5, 0}, {5, 100, 0}, {0, 3, 0},
	} {
		require.Equal(t, tc.want, consumerLag(tc.hw, tc.committed), "hw %d committed %d", tc.hw, tc.committed)
	}
	e := errors.New("x")
	require.Zero(t, countErrors(nil))
	require.Equal(t, 1, countErrors(e))
	require.Equal(t, 1, countErrors(fmt.Errorf("wrapped: %w", e)))
	require.Equal(t, 2, countErrors(errors.Join(e, e)))
}
