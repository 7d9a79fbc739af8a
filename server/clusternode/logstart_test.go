package clusternode

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
)

// TestNodeBoundsAndOffsetForTime pins doc.go's "Any node answers" for the
// readable range and the search by time: every node asks the partition's
// leader, so all give its log start and high watermark, and a time after
// every record is the high watermark, not found.
func TestNodeBoundsAndOffsetForTime(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "events"
	c.createTopic(c.node(1), name, 1, 3)
	p := 0
	for i := range 3 {
		_, err := c.node(i+1).Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "e%d", i)}})
		require.NoError(t, err)
	}
	for _, n := range c.running() {
		ls, hw, err := n.Bounds(name, 0)
		require.NoError(t, err, "node %d", n.ID())
		require.Equal(t, uint64(0), ls, "node %d", n.ID())
		require.Equal(t, uint64(3), hw, "node %d", n.ID())
		off, found, err := n.PartitionOffsetForTime(name, 0, math.MaxInt64)
		require.NoError(t, err, "node %d", n.ID())
		require.False(t, found, "node %d", n.ID())
		require.Equal(t, uint64(3), off, "node %d", n.ID())
	}
}

// A committed read below the leader's log start travels between nodes as
// CodeOffsetOutOfRange and is the embedded cluster's
// *client.OffsetOutOfRangeError again on the node that forwarded it, so
// the HTTP API answers 416 from any node.
func TestNodeOffsetOutOfRangeTravels(t *testing.T) {
	req := replication.RecordsRequest{Topic: "events", Partition: 2, From: 1, Committed: true}
	refusal := outOfRangeRefusal(req, 4, 9)
	require.Equal(t, replication.CodeOffsetOutOfRange, refusal.Code)
	var n Node
	err := n.producerError("events", 2, 3, refusal)
	var oor *client.OffsetOutOfRangeError
	require.True(t, errors.As(err, &oor))
	require.Equal(t, client.OffsetOutOfRangeError{Topic: "events", Partition: 2, Offset: 1, LogStart: 4, HighWatermark: 9}, *oor)
	require.ErrorIs(t, outOfRange("events", 2, refusal), client.ErrOffsetOutOfRange)
	other := errors.New("x")
	require.Equal(t, other, outOfRange("events", 2, other))
}
