package cluster

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// failedOver builds rf-3 orders/0 whose leader 1 failed over to broker 2,
// with broker 1 back (inactive) holding one unacknowledged record.
func failedOver(t *testing.T) (*Cluster, string) {
	t.Helper()
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)
	require.NoError(t, c.StopBroker(2))
	require.NoError(t, c.StopBroker(3))
	_, err := prod.Send(nil, []byte("unacked"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	require.NoError(t, c.StopBroker(1))
	_, err = c.StartBroker(2)
	require.NoError(t, err)
	_, err = c.StartBroker(3)
	require.NoError(t, err)
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	return c, root
}

// docs/phase-5-failover.md § Recovery, step by step: recovering an unknown,
// unassigned or already active replica returns a clear error and changes
// nothing.
func TestRecoverReplicaRefusals(t *testing.T) {
	c, root := failedOver(t)
	_, err := c.StartBroker(4) // known to the cluster, assigned nothing
	require.NoError(t, err)
	before := snapshot(t, root)
	cases := []struct {
		name string
		id   int
		want error
	}{
		{"unknown broker", 9, ErrUnknownBroker},
		{"unassigned", 4, ErrNotAssigned},
		{"active follower", 3, ErrReplicaActive},
		{"leader", 2, ErrReplicaIsLeader},
		{"unavailable", 1, ErrBrokerUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.RecoverReplica("orders", 0, tc.id)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, before, snapshot(t, root))
		})
	}
	require.Equal(t, []int{2, 3}, mustStatus(t, c).Active)
}

// docs/phase-5-failover.md § Recovery, step by step: a damaged replica log is
// reported as a *log.CorruptionError, never guessed through. The broker still
// opens; the damaged replica is reported by status and by recovery, and its
// file is left as it was.
func TestRecoverReplicaCorruptLog(t *testing.T) {
	c, root := failedOver(t)
	path := replicaPath(root, 1, "orders", 0)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[0] ^= 0xff // record_length of the first frame no longer agrees
	require.NoError(t, os.WriteFile(path, data, 0o644))

	_, err = c.StartBroker(1)
	require.NoError(t, err, "a broker with a damaged replica still opens")
	st := mustStatus(t, c)
	require.True(t, st.Replicas[0].Available)
	require.Nil(t, st.Replicas[0].LogEnd)
	var ce *log.CorruptionError
	require.ErrorAs(t, st.Replicas[0].Err, &ce)

	_, err = c.RecoverReplica("orders", 0, 1)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, path, ce.Path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data, after)
	require.Equal(t, []int{2, 3}, mustStatus(t, c).Active)
}

// docs/phase-5-failover.md § Why unacknowledged records can be lost, and offsets reused:
// the records recovery drops are exactly those that were never acknowledged
// cluster-wide — and a consumer, served up to the high watermark, never saw
// them.
func TestRecoverReplicaDroppedRecordsNeverConsumed(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 1)
	require.NoError(t, c.StopBroker(2))
	var seen []string
	for _, p := range []string{"u1", "u2", "u3"} {
		_, err := prod.Send(nil, []byte(p))
		require.ErrorIs(t, err, ErrReplicationFailed)
		seen = append(seen, payloads(t, c, "orders", 0)...)
	}
	require.NoError(t, c.StopBroker(1))
	_, err := c.StartBroker(2)
	require.NoError(t, err)
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	rr, err := c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, 3, rr.Dropped)
	require.Equal(t, uint64(1), rr.DroppedFrom)
	require.Equal(t, uint64(4), rr.DroppedTo)
	require.Equal(t, 0, rr.Copied)
	require.Equal(t, []string{"a", "a", "a"}, seen, "only the acknowledged record was ever served")
	require.Len(t, readAll(t, replicaPath(root, 1, "orders", 0)), 1)
}

// docs/phase-5-failover.md § Worked example: a returning leader rejoins as a
// follower and never reclaims leadership, also after the cluster is reopened
// — and also before it is recovered.
func TestRecoverReplicaFormerLeaderAfterReopen(t *testing.T) {
	c, root := failedOver(t)
	c = reopen(t, c, root, 3)
	st := mustStatus(t, c)
	require.Equal(t, 2, st.Leader)
	require.Equal(t, []int{2, 3}, st.Active)
	_, err := c.Failover("orders", 0)
	require.ErrorIs(t, err, ErrLeaderStillAvailable)
	rr, err := c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, 1, rr.Dropped)
	c = reopen(t, c, root, 3)
	st = mustStatus(t, c)
	require.Equal(t, 2, st.Leader)
	require.Equal(t, []int{1, 2, 3}, st.Active)
}
