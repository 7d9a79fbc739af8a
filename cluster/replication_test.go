package cluster

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// docs/phase-4-replication.md § Leader writes and synchronous replication:
// every active follower stores exactly the leader's record — same offset,
// timestamp and payload. Read the files themselves: the frames are
// byte-identical on every replica.
func TestReplicationFramesByteIdentical(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 3))
	prod := NewProducer(c, "orders")
	for i := 0; i < 30; i++ {
		var key []byte
		if i%3 != 0 {
			key = []byte(fmt.Sprint("user-", i%5))
		}
		res, err := prod.Send(key, []byte(fmt.Sprint("payload-", i)))
		require.NoError(t, err)
		st, err := c.Status("orders", res.Partition)
		require.NoError(t, err)
		require.Equal(t, st.Leader, res.LeaderBrokerID)
		require.Equal(t, []int{1, 2, 3}, res.Brokers)
	}
	for p := 0; p < 3; p++ {
		first, err := os.ReadFile(replicaPath(root, 1, "orders", p))
		require.NoError(t, err)
		require.NotEmpty(t, first)
		for id := 2; id <= 3; id++ {
			other, err := os.ReadFile(replicaPath(root, id, "orders", p))
			require.NoError(t, err)
			require.True(t, bytes.Equal(first, other), "partition %d: broker %d differs from broker 1", p, id)
		}
	}
}

// docs/phase-4-replication.md § Leader writes and synchronous replication: a
// producer routes like a topic — a key always resolves to one partition
// (SHA-256), nil is round robin, an empty key is a real key.
func TestProducerRouting(t *testing.T) {
	c, _ := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	prod := NewProducer(c, "orders")
	for _, key := range [][]byte{[]byte("user-123"), {}, []byte("orders")} {
		res, err := prod.Send(key, []byte("x"))
		require.NoError(t, err)
		require.Equal(t, topic.PartitionForKey(key, 3), res.Partition)
	}
	var parts []int
	for i := 0; i < 4; i++ {
		res, err := NewProducer(c, "orders").Send(nil, []byte("x"))
		require.NoError(t, err)
		parts = append(parts, res.Partition)
	}
	require.Equal(t, []int{0, 1, 2, 0}, parts, "the round-robin cursor belongs to the topic")

	_, err := NewProducer(c, "nope").Send(nil, nil)
	require.ErrorIs(t, err, ErrUnknownTopic)
}

// docs/phase-4-replication.md § Leader writes and synchronous replication: a
// batch costs one append per replica; results are in input order and match
// what the replicas hold.
func TestProducerSendBatch(t *testing.T) {
	c, _ := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 2, 2))
	msgs := []topic.Message{{Key: []byte(keyFor(t, 1, 2)), Payload: []byte("a")}, {Payload: []byte("b")},
		{Key: []byte(keyFor(t, 1, 2)), Payload: []byte("c")}, {Payload: []byte("d")}}
	res, err := NewProducer(c, "orders").SendBatch(msgs)
	require.NoError(t, err)
	require.Len(t, res, 4)
	for i, r := range res {
		recs, err := c.ReadCommitted("orders", r.Partition, r.Offset, 1)
		require.NoError(t, err)
		require.Equal(t, msgs[i].Payload, recs[0].Payload)
		require.Equal(t, r.Timestamp, recs[0].Timestamp)
	}
	require.Equal(t, []uint64{0, 1}, []uint64{res[0].Offset, res[2].Offset})
}

// A SendBatch whose sends to some partitions fail has the topic's batch
// shape: every result in input order, each carrying its Topic and
// Partition, and a *topic.BatchError naming the failed partitions. Records
// of a named partition were not acknowledged (only Topic and Partition
// set); every other record was, and its result is complete.
func TestProducerSendBatchPartialFailure(t *testing.T) {
	c, _ := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 2, 1)) // partition 0 on broker 1, 1 on broker 2
	require.NoError(t, c.StopBroker(2))
	msgs := []topic.Message{
		{Key: []byte(keyFor(t, 1, 2)), Payload: []byte("lost")},
		{Key: []byte(keyFor(t, 0, 2)), Payload: []byte("kept")},
		{Payload: []byte("keyless 0")},
		{Payload: []byte("keyless 1")},
	}
	res, err := NewProducer(c, "orders").SendBatch(msgs)
	var be *topic.BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "orders", be.Topic)
	require.True(t, be.Failed(1))
	require.False(t, be.Failed(0))
	var lu *LeaderUnavailableError
	require.ErrorAs(t, err, &lu)
	require.Equal(t, 2, lu.BrokerID)

	require.Len(t, res, len(msgs))
	failed := client.SendResult{Topic: "orders", Partition: 1}
	require.Equal(t, SendResult{SendResult: failed}, res[0])
	require.Equal(t, SendResult{SendResult: failed}, res[3])
	for _, i := range []int{1, 2} {
		require.Equal(t, "orders", res[i].Topic)
		require.Equal(t, 0, res[i].Partition)
		require.False(t, be.Failed(res[i].Partition))
		require.Equal(t, 1, res[i].LeaderBrokerID)
		require.Equal(t, []int{1}, res[i].Brokers)
	}
	require.Equal(t, []uint64{0, 1}, []uint64{res[1].Offset, res[2].Offset})
}

// openSmallPayloadCluster opens a one-broker cluster whose logs take payloads
// of at most 4 bytes, with a topic "t" of the given partitions.
func openSmallPayloadCluster(t *testing.T, partitions int) *Cluster {
	t.Helper()
	c, err := OpenWithOptions(t.TempDir(), Options{Broker: BrokerOptions{MaxPayloadSize: 4}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	require.NoError(t, c.CreateTopic("t", partitions, 1))
	return c
}

// A payload above the limit fails its own send only. MaxPayloadSize reports
// the limit the brokers' logs enforce: a payload of exactly that size is
// accepted, one byte more is refused.
func TestProducerPayloadTooLarge(t *testing.T) {
	c := openSmallPayloadCluster(t, 1)
	require.Equal(t, 4, c.MaxPayloadSize())
	prod := NewProducer(c, "t")
	_, err := prod.Send(nil, []byte("too long"))
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	_, err = prod.Send(nil, make([]byte, c.MaxPayloadSize()+1))
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	res, err := prod.Send(nil, []byte("ok"))
	require.NoError(t, err)
	require.Equal(t, uint64(0), res.Offset)
	res, err = prod.Send(nil, make([]byte, c.MaxPayloadSize()))
	require.NoError(t, err)
	require.Equal(t, uint64(1), res.Offset)
}

// As topic.Topic.AppendBatch: a batch holding one payload above the limit
// is refused whole, before any record of it is written or routed.
func TestProducerSendBatchPayloadTooLarge(t *testing.T) {
	c := openSmallPayloadCluster(t, 2)
	prod := NewProducer(c, "t")
	res, err := prod.SendBatch([]topic.Message{
		{Key: []byte(keyFor(t, 0, 2)), Payload: []byte("ok")},
		{Payload: []byte("ok")},
		{Key: []byte(keyFor(t, 1, 2)), Payload: []byte("too long")},
	})
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	require.Nil(t, res)
	for p := range 2 {
		st, err := c.Status("t", p)
		require.NoError(t, err)
		require.NotNil(t, st.Replicas[0].LogEnd)
		require.Equal(t, uint64(0), *st.Replicas[0].LogEnd, "partition %d", p)
	}
	r, err := prod.Send(nil, []byte("ok"))
	require.NoError(t, err)
	require.Equal(t, 0, r.Partition, "the refused batch did not move the round-robin cursor")
}

// Without a broker option the limit is the log's default.
func TestProducerMaxPayloadSizeDefault(t *testing.T) {
	c, _ := newCluster(t, 1)
	require.Equal(t, log.DefaultMaxPayloadSize, c.MaxPayloadSize())
}

// docs/phase-4-replication.md § Failure semantics and lag: a follower that
// cannot store the record fails the write with a ReplicationError naming it;
// the leader keeps the record (visible as lag); consumers do not see it;
// after the broker returns and catch-up, the lag is 0, the record is visible
// and writes succeed.
func TestReplicationFollowerClosed(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)

	require.NoError(t, c.StopBroker(3))
	_, err := prod.Send([]byte("k"), []byte("unacknowledged"))
	var re *ReplicationError
	require.ErrorAs(t, err, &re)
	require.Equal(t, []int{3}, re.BrokerIDs)
	require.Equal(t, uint64(2), re.Offset)
	require.ErrorIs(t, err, ErrBrokerUnavailable)
	require.ErrorIs(t, err, ErrReplicationFailed)

	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), st.HighWatermark)
	require.Equal(t, []ReplicaStatus{
		{BrokerID: 1, Role: RoleLeader, Active: true, Available: true, LogEnd: u64(3), Lag: u64(0)},
		{BrokerID: 2, Role: RoleFollower, Active: true, Available: true, LogEnd: u64(3), Lag: u64(0)},
		{BrokerID: 3, Role: RoleFollower, Active: true, Available: false},
	}, st.Replicas, "an unavailable replica's log end and lag are unknown, not zero")

	recs, err := c.ReadCommitted("orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 2, "the unacknowledged record stays above the high watermark")

	_, err = c.StartBroker(3)
	require.NoError(t, err)
	st, err = c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, u64(1), st.Replicas[2].Lag)
	_, err = prod.Send([]byte("k"), []byte("still lagging"))
	require.ErrorAs(t, err, &re, "a lagging follower keeps failing writes until caught up")

	cu, err := c.CatchUp("orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, CatchUpResult{BrokerID: 3, From: 2, Copied: 2, LogEnd: 4}, cu)
	st, err = c.Status("orders", 0)
	require.NoError(t, err)
	for _, r := range st.Replicas {
		require.Equal(t, u64(0), r.Lag)
	}
	require.Equal(t, uint64(4), st.HighWatermark)
	recs, err = c.ReadCommitted("orders", 0, 2, 10)
	require.NoError(t, err)
	require.Equal(t, "unacknowledged", string(recs[0].Payload))
	res, err := prod.Send([]byte("k"), []byte("after catch-up"))
	require.NoError(t, err)
	require.Equal(t, uint64(4), res.Offset)
}

// docs/phase-4-replication.md § Failure semantics and lag: an unavailable
// leader fails writes until you fail over; nothing is promoted automatically.
func TestReplicationLeaderUnavailable(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	require.NoError(t, c.StopBroker(1))
	before := snapshot(t, root)
	_, err := NewProducer(c, "orders").Send(nil, []byte("x"))
	var lu *LeaderUnavailableError
	require.ErrorAs(t, err, &lu)
	require.Equal(t, 1, lu.BrokerID)
	_, err = c.ReadCommitted("orders", 0, 0, 1)
	require.ErrorIs(t, err, ErrLeaderUnavailable)
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 1, st.Leader)
	require.Equal(t, before, snapshot(t, root))
}

// docs/phase-4-replication.md § Catch-up: a mismatch, or a follower whose log
// end is ahead of the leader, is a *ReplicaDivergenceError. Divergence is
// reported, never repaired: nothing is truncated or overwritten.
func TestCatchUpDivergence(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, path string, leader []log.Record)
		offset uint64
	}{
		{"payload differs", func(t *testing.T, path string, leader []log.Record) {
			rewrite(t, path, 1, log.Record{Offset: 1, Timestamp: leader[1].Timestamp, Payload: []byte("forged")})
		}, 1},
		{"timestamp differs", func(t *testing.T, path string, leader []log.Record) {
			rewrite(t, path, 1, log.Record{Offset: 1, Timestamp: leader[1].Timestamp + 1, Payload: leader[1].Payload})
		}, 1},
		{"follower longer", func(t *testing.T, path string, leader []log.Record) {
			writeBehind(t, path, leader[2], log.Record{Offset: 3, Timestamp: 1, Payload: []byte("extra")})
		}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, root := newCluster(t, 2)
			require.NoError(t, c.CreateTopic("orders", 1, 2))
			prod := NewProducer(c, "orders")
			sendN(t, prod, "k", 2)
			require.NoError(t, c.StopBroker(2))
			_, err := prod.Send(nil, []byte("leader only"))
			require.ErrorIs(t, err, ErrReplicationFailed)
			leader := readAll(t, replicaPath(root, 1, "orders", 0))
			tc.tamper(t, replicaPath(root, 2, "orders", 0), leader)
			_, err = c.StartBroker(2)
			require.NoError(t, err)

			before := snapshot(t, root)
			_, err = c.CatchUp("orders", 0, 2)
			var de *ReplicaDivergenceError
			require.ErrorAs(t, err, &de)
			require.Equal(t, 2, de.BrokerID)
			require.Equal(t, tc.offset, de.Offset)
			require.Equal(t, before, snapshot(t, root), "both logs unchanged")
		})
	}
}

// rewrite cuts a stopped replica's log to offset at and appends rec.
func rewrite(t *testing.T, path string, at uint64, rec log.Record) {
	t.Helper()
	l, err := log.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.Truncate(at))
	require.NoError(t, l.AppendRecord(rec))
	require.NoError(t, l.Close())
}

func TestCatchUpRefusals(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 2)) // leader 1, follower 2
	before := snapshot(t, root)
	_, err := c.CatchUp("orders", 0, 9)
	require.ErrorIs(t, err, ErrUnknownBroker)
	_, err = c.CatchUp("orders", 0, 3)
	require.ErrorIs(t, err, ErrNotAssigned)
	_, err = c.CatchUp("orders", 0, 1)
	require.ErrorIs(t, err, ErrReplicaIsLeader)
	_, err = c.CatchUp("orders", 5, 2)
	require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
	_, err = c.CatchUp("nope", 0, 2)
	require.ErrorIs(t, err, ErrUnknownTopic)
	require.NoError(t, c.StopBroker(2))
	_, err = c.CatchUp("orders", 0, 2)
	require.ErrorIs(t, err, ErrBrokerUnavailable)
	require.Equal(t, before, snapshot(t, root))
}

// docs/design.md § Invariants, 5: shared types are safe for concurrent use.
// Many producers on a 3-broker cluster leave every replica identical with dense
// offsets.
func TestReplicationConcurrentProducers(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 3))
	const workers, each = 8, 40
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			prod := NewProducer(c, "orders")
			for i := 0; i < each; i++ {
				var key []byte
				if i%2 == 0 {
					key = []byte(fmt.Sprint("k", w, i))
				}
				if i%10 == 9 {
					_, err := prod.SendBatch([]topic.Message{{Key: key, Payload: []byte("b1")}, {Payload: []byte("b2")}})
					require.NoError(t, err)
					continue
				}
				_, err := prod.Send(key, []byte(fmt.Sprint(w, "-", i)))
				require.NoError(t, err)
			}
		})
		wg.Go(func() {
			for i := 0; i < 20; i++ {
				_, err := c.Status("orders", i%3)
				require.NoError(t, err)
				_, err = c.ReadCommitted("orders", i%3, 0, 100)
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	total := 0
	for p := 0; p < 3; p++ {
		recs := readAll(t, replicaPath(root, 1, "orders", p))
		for i, r := range recs {
			require.Equal(t, uint64(i), r.Offset)
		}
		total += len(recs)
		first, err := os.ReadFile(replicaPath(root, 1, "orders", p))
		require.NoError(t, err)
		for id := 2; id <= 3; id++ {
			other, err := os.ReadFile(replicaPath(root, id, "orders", p))
			require.NoError(t, err)
			require.True(t, bytes.Equal(first, other), "partition %d broker %d", p, id)
		}
		hw, err := c.HighWatermark("orders", p)
		require.NoError(t, err)
		require.Equal(t, uint64(len(recs)), hw)
	}
	require.Equal(t, workers*(each+each/10), total)
}
