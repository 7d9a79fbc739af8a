package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Observe reports the high watermark as it stands, where Status first
// raises it to what every active replica holds: records that reached every
// active replica without a write acknowledging them (here, a follower
// stopped during the write and filled in afterwards) move it under Status
// alone.
func TestObserveLeavesTheHighWatermark(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("t", 1, 3))
	p := NewProducer(c, "t")
	_, err := p.Send(nil, []byte("acknowledged"))
	require.NoError(t, err)
	st, err := c.Status("t", 0)
	require.NoError(t, err)
	follower := st.Followers[1]
	require.NoError(t, c.StopBroker(follower))
	_, err = p.Send(nil, []byte("not acknowledged"))
	require.Error(t, err, "an active follower is stopped")
	_, err = c.StartBroker(follower)
	require.NoError(t, err)
	leader, err := c.hosted(st.Leader)
	require.NoError(t, err)
	ll, err := leader.b.replica("t", 0, false)
	require.NoError(t, err)
	recs, err := ll.Read(1, 1)
	require.NoError(t, err)
	m, err := c.hosted(follower)
	require.NoError(t, err)
	fl, err := m.b.replica("t", 0, false)
	require.NoError(t, err)
	require.NoError(t, fl.AppendRecords(recs))

	seen, err := c.Observe("t", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), seen.HighWatermark, "Observe moves nothing")
	require.Equal(t, st.Leader, seen.Leader)
	for _, r := range seen.Replicas {
		require.NotNil(t, r.LogEnd)
		require.Equal(t, uint64(2), *r.LogEnd, "broker %d", r.BrokerID)
	}
	st, err = c.Status("t", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), st.HighWatermark, "Status raises it to what every active replica holds")
}
