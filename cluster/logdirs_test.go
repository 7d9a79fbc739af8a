package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// TestBrokerUsage: a broker's usage lists the replicas the metadata
// assigns to it, by topic and partition, with their bytes and log ends;
// a topic filter keeps the names it gives and leaves out the unknown
// ones; a stopped broker's usage is ErrBrokerUnavailable.
func TestBrokerUsage(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("b", 2, 1))
	require.NoError(t, c.CreateTopic("a", 1, 2))
	_, err := NewProducer(c, "a").SendBatchTo(0, []topic.Message{{Payload: []byte("hello")}, {Payload: []byte("world")}})
	require.NoError(t, err)

	u, err := c.BrokerUsage(1, nil)
	require.NoError(t, err)
	require.Equal(t, BrokerDir(root, 1), u.Dir)
	require.Positive(t, u.TotalBytes)
	var held []string
	for _, r := range u.Replicas {
		require.NoError(t, r.Err)
		held = append(held, r.Topic)
		if r.Topic == "a" {
			require.Equal(t, uint64(2), r.LogEnd)
			require.Positive(t, r.Size)
		}
	}
	bParts := 0
	st0, err := c.Status("b", 0)
	require.NoError(t, err)
	st1, err := c.Status("b", 1)
	require.NoError(t, err)
	for _, st := range []PartitionStatus{st0, st1} {
		if st.Leader == 1 {
			bParts++
		}
	}
	want := []string{"a"}
	for range bParts {
		want = append(want, "b")
	}
	require.Equal(t, want, held, "a's replica first, then b's on broker 1")

	u, err = c.BrokerUsage(2, []string{"a", "nope"})
	require.NoError(t, err)
	require.Len(t, u.Replicas, 1)
	require.Equal(t, "a", u.Replicas[0].Topic)
	require.Equal(t, uint64(2), u.Replicas[0].LogEnd)

	require.NoError(t, c.StopBroker(2))
	_, err = c.BrokerUsage(2, nil)
	require.ErrorIs(t, err, ErrBrokerUnavailable)
}
