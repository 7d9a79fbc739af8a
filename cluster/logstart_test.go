package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/logtest"
)

// AdvanceLogStart raises the log start on the leader and its followers
// mid-segment, deletes the segments wholly below it on each, journals it
// as retention does (by the operator, with its reason), never lowers it,
// refuses an offset past the high watermark, takes the high watermark for
// LogStartAtHighWatermark, and the start survives a reopening.
func TestAdvanceLogStart(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, root := newRetentionCluster(t, clk, map[string]string{"segment.bytes": "1024", "retention.ms": "-1"})
	sendSized(t, c, 40, 100) // 8 records to a segment
	leader := replicaOf(t, c, 1)

	res, err := c.AdvanceLogStart("t", 0, 19, "a test")
	require.NoError(t, err)
	require.Equal(t, uint64(0), res.From)
	require.Equal(t, uint64(19), res.To)
	for id := 1; id <= 3; id++ {
		l := replicaOf(t, c, id)
		require.Equal(t, uint64(19), l.LogStart(), "broker %d", id)
		require.Equal(t, uint64(16), l.Segments()[0].Base, "broker %d keeps the segment holding 19, deletes those wholly below", id)
	}
	brokers := map[int]bool{}
	for _, r := range res.Removed {
		brokers[r.Broker] = true
		require.LessOrEqual(t, r.Next, uint64(19))
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true}, brokers)
	_, err = c.ReadCommitted("t", 0, 18, 1)
	require.ErrorIs(t, err, client.ErrOffsetOutOfRange)
	ls, hw, err := c.Bounds("t", 0)
	require.NoError(t, err)
	require.Equal(t, []uint64{19, 40}, []uint64{ls, hw})

	entries, err := c.Journal(0, 1000)
	require.NoError(t, err)
	var intent, done bool
	for _, e := range entries {
		if e.Event != EventRetention {
			continue
		}
		require.Equal(t, ByOperator, e.By)
		require.Equal(t, "a test", e.Reason)
		switch e.Phase {
		case PhaseIntent:
			intent = true
			require.False(t, done)
		case PhaseDone:
			done = true
			require.Equal(t, res.Removed, e.Removed)
			require.Contains(t, e.Summary, "log start 0 -> 19")
		}
	}
	require.True(t, intent && done, "intent and outcome are journaled")

	// Never backwards: the current start, nothing changed.
	res, err = c.AdvanceLogStart("t", 0, 5, "")
	require.NoError(t, err)
	require.Equal(t, uint64(19), res.From)
	require.Equal(t, uint64(19), res.To)
	require.Empty(t, res.Removed)
	require.Equal(t, uint64(19), leader.LogStart())

	_, err = c.AdvanceLogStart("t", 0, 41, "")
	require.ErrorIs(t, err, ErrPastHighWatermark)
	require.Equal(t, uint64(19), leader.LogStart())
	_, err = c.AdvanceLogStart("t", 1, 1, "")
	require.Error(t, err)
	_, err = c.AdvanceLogStart("nope", 0, 1, "")
	require.ErrorIs(t, err, ErrUnknownTopic)

	res, err = c.AdvanceLogStart("t", 0, LogStartAtHighWatermark, "")
	require.NoError(t, err)
	require.Equal(t, uint64(40), res.To)

	require.NoError(t, c.Close())
	c2, err := OpenWithOptions(root, Options{Broker: BrokerOptions{Now: clk.Now}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c2.Close() })
	for id := 1; id <= 3; id++ {
		_, err := c2.StartBroker(id)
		require.NoError(t, err)
	}
	ls, hw, err = c2.Bounds("t", 0)
	require.NoError(t, err)
	require.Equal(t, []uint64{40, 40}, []uint64{ls, hw}, "the raised start survives a reopening")
}

// LeaderEpochs reads the leader's runs: one run per leader epoch that
// appended, starting where its first record went.
func TestLeaderEpochsAfterMove(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, _ := newRetentionCluster(t, clk, nil)
	sendSized(t, c, 5, 10)
	before, err := c.LeaderEpochs("t", 0)
	require.NoError(t, err)
	require.Equal(t, 1, before.Leader)
	require.Len(t, before.Runs, 1)
	require.Equal(t, before.LeaderEpoch, before.Runs[0].Epoch)
	require.Equal(t, uint64(0), before.Runs[0].Start)

	_, err = c.MoveLeader("t", 0, 2)
	require.NoError(t, err)
	sendSized(t, c, 3, 10)
	after, err := c.LeaderEpochs("t", 0)
	require.NoError(t, err)
	require.Equal(t, 2, after.Leader)
	require.Greater(t, after.LeaderEpoch, before.LeaderEpoch)
	require.Equal(t, []uint64{0, 8}, []uint64{after.LogStart, after.LogEnd})
	require.Len(t, after.Runs, 2)
	require.Equal(t, before.Runs[0].Epoch, after.Runs[0].Epoch, "the follower copied its leader's run")
	require.Equal(t, after.LeaderEpoch, after.Runs[1].Epoch)
	require.Equal(t, uint64(5), after.Runs[1].Start)

	_, err = c.LeaderEpochs("t", 3)
	require.Error(t, err)
}

// An OperateLogStart sent to the leader's process raises the log start
// there, journaled by whoever the request names: how another process's
// AdvanceLogStart reaches the leader in cluster mode.
func TestOperateLogStart(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, _ := newRetentionCluster(t, clk, nil)
	sendSized(t, c, 6, 10)
	res, err := c.Operate(t.Context(), 1, OperateRequest{Op: OperateLogStart, Topic: "t", Partition: 0, Offset: 4, By: ByOperator, Reason: "forwarded"})
	require.NoError(t, err)
	require.Contains(t, string(res.Result), `"To":4`)
	for id := 1; id <= 3; id++ {
		require.Equal(t, uint64(4), replicaOf(t, c, id).LogStart(), "broker %d", id)
	}
	_, err = c.Operate(t.Context(), 1, OperateRequest{Op: OperateLogStart, Topic: "t", Partition: 0, Offset: 7})
	require.ErrorIs(t, err, ErrPastHighWatermark)
}
