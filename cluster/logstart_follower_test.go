package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// A follower that was down while the log start was raised by hand takes
// it when it is recovered: led afterwards, the partition's log start
// does not go back.
func TestAdvanceLogStartDownFollowerThenLeads(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, _ := newRetentionCluster(t, clk, map[string]string{"segment.bytes": "1024", "retention.ms": "-1"})
	sendSized(t, c, 40, 100)
	require.NoError(t, c.StopBroker(3))
	_, err := c.Deactivate("t", 0, 3)
	require.NoError(t, err)
	res, err := c.AdvanceLogStart("t", 0, 19, "")
	require.NoError(t, err)
	require.Equal(t, uint64(19), res.To)

	_, err = c.StartBroker(3)
	require.NoError(t, err)
	_, err = c.RecoverReplica("t", 0, 3)
	require.NoError(t, err)
	require.Equal(t, uint64(19), replicaOf(t, c, 3).LogStart(), "the recovered follower took the log start")
	_, err = c.MoveLeader("t", 0, 3)
	require.NoError(t, err)
	ls, hw, err := c.Bounds("t", 0)
	require.NoError(t, err)
	require.Equal(t, []uint64{19, 40}, []uint64{ls, hw})
}
