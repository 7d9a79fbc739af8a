package cluster

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

func fetchPayloads(t *testing.T, cons *client.Consumer) []string {
	t.Helper()
	recs, err := cons.Fetch(100)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Payload))
	}
	return out
}

// docs/phase-4-replication.md: the cluster consumer has the phase-3 semantics, reads
// from the current leader and never past the high watermark; and
// it does not see an unacknowledged record until catch-up makes it
// replicated.
func TestConsumerReplicatedPartition(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := NewProducer(c, "orders")
	for _, p := range []string{"a", "b"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}
	cons, err := c.NewConsumer("worker", "orders", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, fetchPayloads(t, cons))
	require.NoError(t, cons.Commit())

	require.NoError(t, c.StopBroker(2))
	_, err = prod.Send(nil, []byte("c"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	require.Empty(t, fetchPayloads(t, cons), "the unacknowledged record is above the high watermark")
	require.Equal(t, uint64(2), cons.Position())

	_, err = c.StartBroker(2)
	require.NoError(t, err)
	_, err = c.CatchUp("orders", 0, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, fetchPayloads(t, cons))

	// Committed progress lives under the cluster root and survives reopen.
	c = reopen(t, c, root, 2)
	cons, err = c.NewConsumer("worker", "orders", 0)
	require.NoError(t, err)
	off, ok := cons.Committed()
	require.True(t, ok)
	require.Equal(t, uint64(2), off)
	require.Equal(t, []string{"c"}, fetchPayloads(t, cons))
	cons.Seek(0)
	require.Equal(t, []string{"a", "b", "c"}, fetchPayloads(t, cons))
	require.NoError(t, cons.Commit())

	// After a failover the same consumer reads from the new leader.
	require.NoError(t, c.StopBroker(1))
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	_, err = NewProducer(c, "orders").Send(nil, []byte("d"))
	require.NoError(t, err)
	require.Equal(t, []string{"d"}, fetchPayloads(t, cons))

	_, err = c.NewConsumer("worker", "orders", 7)
	require.Error(t, err)
	_, err = c.NewConsumer("worker", "nope", 0)
	require.ErrorIs(t, err, ErrUnknownTopic)
}

// docs/phase-3-clients.md § Seek and replay, over a replicated partition:
// the end a commit or reset is checked against is the high watermark, not
// the leader's log end. A record the leader holds but an active follower
// lacks is not readable, so an offset past it is refused
// (*client.OffsetBeyondEndError, End the watermark) by the cluster consumer,
// CommitOffset and ResetOffset alike, and nothing is written; at the
// watermark all three succeed.
func TestConsumerCommitPastHighWatermarkRefused(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)
	require.NoError(t, c.CommitOffset("seed", "orders", 0, 1)) // the offsets dir exists
	require.NoError(t, c.StopBroker(2))
	_, err := prod.Send(nil, []byte("unacked"))
	require.ErrorIs(t, err, ErrReplicationFailed) // on the leader only: log end 3, watermark 2
	_, err = c.StartBroker(2)
	require.NoError(t, err)
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), hw)

	cons, err := c.NewConsumer("worker", "orders", 0)
	require.NoError(t, err)
	offsets := c.OffsetsDir()
	before := snapshot(t, offsets)
	want := func(op string, requested uint64) client.OffsetBeyondEndError {
		return client.OffsetBeyondEndError{Op: op, ConsumerID: "worker", Topic: "orders", Partition: 0, Requested: requested, End: 2}
	}
	for _, tc := range []struct {
		name string
		do   func() error
		want client.OffsetBeyondEndError
	}{
		{"consumer commit at the leader's log end", func() error { cons.Seek(3); return cons.Commit() }, want("commit", 3)},
		{"CommitOffset at the leader's log end", func() error { return c.CommitOffset("worker", "orders", 0, 3) }, want("commit", 3)},
		{"CommitOffset far past", func() error { return c.CommitOffset("worker", "orders", 0, 1000) }, want("commit", 1000)},
		{"ResetOffset past", func() error { return c.ResetOffset("worker", "orders", 0, 3) }, want("reset", 3)},
	} {
		err := tc.do()
		require.ErrorIs(t, err, client.ErrOffsetBeyondEnd, tc.name)
		var be *client.OffsetBeyondEndError
		require.ErrorAs(t, err, &be, tc.name)
		require.Equal(t, tc.want, *be, tc.name)
		require.Equal(t, before, snapshot(t, offsets), "%s: nothing written", tc.name)
	}
	_, err = os.Stat(filepath.Join(root, "offsets", "worker"))
	require.ErrorIs(t, err, fs.ErrNotExist)

	cons.Seek(2)
	require.NoError(t, cons.Commit(), "at the watermark")
	require.NoError(t, c.CommitOffset("other", "orders", 0, 2))
	require.NoError(t, c.ResetOffset("other", "orders", 0, 0))
	store, err := c.OffsetStore()
	require.NoError(t, err)
	off, ok, err := store.Load("other", "orders", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(0), off)

	// Catch-up replicates the record: the watermark, and what may be
	// committed, move to 3.
	_, err = c.CatchUp("orders", 0, 2)
	require.NoError(t, err)
	require.NoError(t, c.CommitOffset("worker", "orders", 0, 3))

	// Bad arguments are reported before the watermark is looked at.
	require.ErrorIs(t, c.CommitOffset("../x", "orders", 0, 99), topic.ErrInvalidName)
	require.ErrorIs(t, c.ResetOffset("worker", "nope", 0, 0), ErrUnknownTopic)
	require.ErrorIs(t, c.CommitOffset("worker", "orders", 1, 0), topic.ErrPartitionOutOfRange)
}
