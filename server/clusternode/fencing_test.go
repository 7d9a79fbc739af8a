package clusternode_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/replication"
)

// TestFencingIsolatedLeader pins the acknowledgement contract across a
// network partition (docs/phase-7-processes.md § What stays: "A write is
// acknowledged only once every active replica holds it on disk"; and
// § Leader epochs): a partition's leader cut off from every other node —
// the Raft group and the internal API alike — cannot have a write
// acknowledged, neither before the others fail the partition over nor
// after, while it still believes it leads. The majority fails the
// partition over to a follower at the next epoch and goes on writing.
// When the cut heals, the old leader rejoins as a follower: the records it
// appended alone are cut into a quarantine file beside its log, journaled,
// and every replica holds exactly the acknowledged records, each at the
// offset and with the timestamp it was acknowledged with. Run with the
// cut-off node a plain member of the metadata group, and with it the
// metadata group's leader (the controller) too.
func TestFencingIsolatedLeader(t *testing.T) {
	for _, tc := range []struct {
		name       string
		controller bool
	}{
		{"leader", false},
		{"leader and controller", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { fencingIsolatedLeader(t, tc.controller) })
		})
	}
}

func fencingIsolatedLeader(t *testing.T, isolateController bool) {
	const name = "fence"
	c := start(t, 3, clustertest.Options{})
	ctl := c.Controller()
	x := ctl
	if !isolateController {
		x = others(c, ctl)[0]
	}
	rest := others(c, x)
	via := rest[0]
	require.NoError(t, c.Via(via).CreateTopic(name, 3, 3))
	p := ledBy(t, c, via, name, 3, x)

	acked, res := send(t, c, via, name, p, "a", "b", "c")
	for _, r := range res {
		require.Equal(t, []int{1, 2, 3}, r.Brokers)
		require.Equal(t, x, r.LeaderBrokerID)
	}

	c.Isolate(x)
	_, err := cluster.NewProducer(c.Via(x), name).SendBatchTo(p, msgs("lost while cut off"))
	var re *cluster.ReplicationError
	require.ErrorAs(t, err, &re, "a leader cut off from its followers acknowledged a write")
	require.Equal(t, rest, re.BrokerIDs, "the followers it could not reach")

	awaitEvery(c, "the majority fails the partition over", rest, name, p, func(st cluster.PartitionStatus) error {
		if st.Leader == x || st.LeaderEpoch != 1 || slices.Contains(st.Active, x) {
			return fmt.Errorf("leader %d epoch %d active %v", st.Leader, st.LeaderEpoch, st.Active)
		}
		return nil
	})
	newLeader := statusVia(t, c, via, name, p).Leader
	require.Contains(t, rest, newLeader)

	// Still cut off, the old leader believes it leads epoch 0; nothing it
	// takes is acknowledged.
	stale := statusVia(t, c, x, name, p)
	require.Equal(t, x, stale.Leader, "the cut-off node's metadata is the one it had")
	require.Zero(t, stale.LeaderEpoch)
	_, err = cluster.NewProducer(c.Via(x), name).SendBatchTo(p, msgs("lost after the failover"))
	require.ErrorAs(t, err, &re, "a replaced leader acknowledged a write")

	for _, payload := range []string{"d", "e"} {
		recs, res := send(t, c, via, name, p, payload)
		require.Equal(t, rest, res[0].Brokers, "acknowledged by the majority's replicas")
		require.Equal(t, newLeader, res[0].LeaderBrokerID)
		acked = append(acked, recs...)
	}
	require.Equal(t, uint64(4), acked[len(acked)-1].Offset, "the new leader never held the old one's unacknowledged records")

	c.Heal()
	awaitEvery(c, "the old leader back as an active follower, every replica level", c.IDs(), name, p, func(st cluster.PartitionStatus) error {
		if st.Leader != newLeader || st.LeaderEpoch != 1 || st.HighWatermark != 5 {
			return fmt.Errorf("leader %d epoch %d high watermark %d", st.Leader, st.LeaderEpoch, st.HighWatermark)
		}
		return settled(st)
	})

	for _, id := range c.IDs() {
		sameRecords(t, acked, replicaRecords(t, c, id, name, p), "broker %d's replica: every acknowledged record, as acknowledged", id)
		sameRecords(t, acked, readAll(t, c, id, name, p), "read through node %d", id)
	}
	for _, id := range rest {
		require.Empty(t, quarantineFiles(t, c, id, name, p), "broker %d cut nothing", id)
	}
	files := quarantineFiles(t, c, x, name, p)
	require.Len(t, files, 1, "one quarantine file beside the old leader's log")
	from, to, _, ok := cluster.ParseQuarantineName(filepath.Base(files[0]))
	require.True(t, ok, files[0])
	require.Equal(t, [2]uint64{3, 5}, [2]uint64{from, to})
	var cut []log.Record
	require.NoError(t, log.ScanFileFrom(files[0], from, log.Options{}, func(_ int64, rec log.Record) error {
		cut = append(cut, rec)
		return nil
	}))
	require.Equal(t, []string{"lost while cut off", "lost after the failover"}, payloadsOf(cut), "kept, never destroyed")

	for _, id := range c.IDs() {
		entries := journal(t, c, id)
		i := slices.IndexFunc(entries, func(e cluster.JournalEntry) bool {
			return e.Event == cluster.EventRecover && e.Phase == cluster.PhaseDone && e.Broker == x && e.Topic == name &&
				e.Partition == p && e.Cut != nil
		})
		require.GreaterOrEqual(t, i, 0, "node %d's journal names the cut: %v", id, entries)
		require.Equal(t, cluster.JournalCut{From: 3, To: 5}, *entries[i].Cut)
		require.True(t, strings.HasSuffix(files[0], entries[i].Quarantine), "%q names %s", entries[i].Quarantine, files[0])
	}
}

// TestFencingStaleEpochRefusedByFollower pins the epoch fence between
// processes (docs/phase-7-processes.md § What stays: "In cluster mode the
// epoch also travels with every write a leader sends, and a follower
// turns away a write from an older epoch"; cluster/follower.go): a leader
// cut off from the metadata group, and from the controller, but still
// able to reach a follower over the internal API, is failed over; its
// next write reaches that follower at the old epoch and is refused there
// with a *cluster.StaleEpochError that keeps its type across the network.
// Not acknowledged, and the follower's log is left as it was.
func TestFencingStaleEpochRefusedByFollower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "fence"
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		x := others(c, ctl)[0]
		f := others(c, ctl, x)[0]
		require.NoError(t, c.Via(ctl).CreateTopic(name, 3, 3))
		p := ledBy(t, c, ctl, name, 3, x)
		acked, _ := send(t, c, f, name, p, "a", "b", "c")

		// x hears no metadata and reaches no controller: its heartbeats
		// stop there. Its link to f stays up.
		c.Raft.Isolate(x)
		c.Net.Cut(c.Addr(x), c.Addr(ctl))
		awaitEvery(c, "the partition failed over", []int{ctl, f}, name, p, func(st cluster.PartitionStatus) error {
			if st.Leader == x || st.LeaderEpoch != 1 {
				return fmt.Errorf("leader %d epoch %d", st.Leader, st.LeaderEpoch)
			}
			return nil
		})
		held := replicaRecords(t, c, f, name, p)
		sameRecords(t, acked, held)

		_, err := cluster.NewProducer(c.Via(x), name).SendBatchTo(p, msgs("from the fenced leader"))
		var re *cluster.ReplicationError
		require.ErrorAs(t, err, &re, "a replaced leader acknowledged a write")
		require.Contains(t, re.BrokerIDs, f)
		var stale *cluster.StaleEpochError
		require.ErrorAs(t, err, &stale, "broker %d turns the old epoch away: %v", f, err)
		require.Equal(t, uint64(1), stale.Epoch, "the refusal names the follower's epoch")
		require.Equal(t, uint64(0), stale.Asked)
		sameRecords(t, held, replicaRecords(t, c, f, name, p), "the refused write left broker %d's log as it was", f)

		c.Heal()
		awaitEvery(c, "every replica level again", c.IDs(), name, p, func(st cluster.PartitionStatus) error {
			if st.Leader == x || st.LeaderEpoch != 1 {
				return fmt.Errorf("leader %d epoch %d", st.Leader, st.LeaderEpoch)
			}
			return settled(st)
		})
		for _, id := range c.IDs() {
			sameRecords(t, acked, replicaRecords(t, c, id, name, p), "broker %d", id)
		}
		require.Len(t, quarantineFiles(t, c, x, name, p), 1, "the old leader's own record is kept aside")
	})
}

// TestFencingReplicateRefusals pins cluster/follower.go's rules as a
// follower applies them to a leader's requests arriving over the internal
// API (server/replication, the wire between processes), each refusal
// keeping its type across the network: a follower takes records only from
// the leader its metadata names, at the epoch its metadata holds — an
// older epoch (even from the broker that leads again now), or the current
// one from a broker that does not lead it, is a *cluster.StaleEpochError
// naming the follower's epoch (the sender is fenced), and a leader takes
// records from no one; a newer epoch is
// waited for briefly, then a *cluster.EpochAheadError; records must follow
// on from its log end (*cluster.BehindError with End); a retry of records
// it holds is taken without duplicates, and a probe answers the log end;
// other records at offsets it holds are a *cluster.ReplicaDivergenceError.
// No refusal changes the follower's log.
func TestFencingReplicateRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "fence"
		c := start(t, 3, clustertest.Options{})
		require.NoError(t, c.Via(1).CreateTopic(name, 1, 3))
		for i := range 3 {
			send(t, c, i+1, name, 0, fmt.Sprintf("epoch 0 #%d", i))
		}
		// The leadership moves to another replica, as an operator moves it:
		// epoch 1, and the first leader is replaced.
		st := statusVia(t, c, 1, name, 0)
		old, leader, follower := st.Leader, st.Followers[0], st.Followers[1]
		_, err := c.Via(follower).MoveLeader(name, 0, leader)
		require.NoError(t, err)
		awaitEvery(c, "every node at epoch 1", c.IDs(), name, 0, func(st cluster.PartitionStatus) error {
			if st.LeaderEpoch != 1 || st.Leader != leader {
				return fmt.Errorf("leader %d epoch %d", st.Leader, st.LeaderEpoch)
			}
			return nil
		})
		for i := range 2 {
			_, res := send(t, c, follower, name, 0, fmt.Sprintf("epoch 1 #%d", i))
			require.Equal(t, leader, res[0].LeaderBrokerID)
			require.Equal(t, []int{1, 2, 3}, res[0].Brokers)
		}
		held := replicaRecords(t, c, follower, name, 0)
		require.Len(t, held, 5)

		dial := c.Net.Dialer("a leader's process")
		rpc := replication.NewClient(func(ctx context.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr) }, 0)
		defer rpc.Close()
		ctx := t.Context()
		next := func(payload string) []log.Record {
			return []log.Record{{Offset: 5, Timestamp: time.Now().UnixNano(), Payload: []byte(payload)}}
		}
		unchanged := func(what string) {
			t.Helper()
			sameRecords(t, held, replicaRecords(t, c, follower, name, 0), "%s left the follower's log as it was", what)
		}
		replicate := func(to int, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error) {
			req.Topic, req.Partition = name, 0
			return rpc.Replicate(ctx, c.Addr(to), req)
		}

		// The replaced leader, still believing it leads epoch 0.
		_, err = replicate(follower, cluster.ReplicateRequest{Epoch: 0, Leader: old, HighWatermark: 6, Records: next("from the fenced leader")})
		var stale *cluster.StaleEpochError
		require.ErrorAs(t, err, &stale)
		require.Equal(t, [2]uint64{1, 0}, [2]uint64{stale.Epoch, stale.Asked}, "the refusal names the follower's epoch")
		unchanged("a stale epoch")

		// The current epoch, from a broker that does not lead it.
		_, err = replicate(follower, cluster.ReplicateRequest{Epoch: 1, Leader: old, HighWatermark: 6, Records: next("from a broker that does not lead")})
		require.ErrorAs(t, err, &stale)
		unchanged("a sender that does not lead")
		// And the leader takes records from no one.
		_, err = replicate(leader, cluster.ReplicateRequest{Epoch: 1, Leader: follower, Records: next("to the leader")})
		require.ErrorAs(t, err, &stale)
		require.Len(t, replicaRecords(t, c, leader, name, 0), 5)

		began := time.Now()
		_, err = replicate(follower, cluster.ReplicateRequest{Epoch: 2, Leader: leader, Records: next("from an epoch not yet applied")})
		var ahead *cluster.EpochAheadError
		require.ErrorAs(t, err, &ahead)
		require.ErrorIs(t, err, cluster.ErrEpochAhead)
		require.Equal(t, [2]uint64{1, 2}, [2]uint64{ahead.Epoch, ahead.Asked})
		require.GreaterOrEqual(t, time.Since(began), 500*time.Millisecond, "waited for its metadata to reach the epoch first")
		unchanged("an epoch ahead")

		_, err = replicate(follower, cluster.ReplicateRequest{Epoch: 1, Leader: leader,
			Records: []log.Record{{Offset: 7, Timestamp: time.Now().UnixNano(), Payload: []byte("a gap before me")}}})
		var behind *cluster.BehindError
		require.ErrorAs(t, err, &behind)
		require.Equal(t, [2]uint64{5, 7}, [2]uint64{behind.End, behind.Base}, "the refusal says where the follower's log ends")
		unchanged("records past the log end")

		res, err := replicate(follower, cluster.ReplicateRequest{Epoch: 1, Leader: leader, HighWatermark: 5, Records: held[3:]})
		require.NoError(t, err)
		require.Equal(t, uint64(5), res.End)
		unchanged("a retry")
		res, err = replicate(follower, cluster.ReplicateRequest{Epoch: 1, Leader: leader, HighWatermark: 5})
		require.NoError(t, err)
		require.Equal(t, uint64(5), res.End, "a probe answers the log end")

		// The leadership moves back: the first leader leads again, at
		// epoch 2. A request it sent at epoch 0 and that arrives only now
		// is refused as any other from an old epoch, its sender the
		// leader though it is.
		_, err = c.Via(follower).MoveLeader(name, 0, old)
		require.NoError(t, err)
		awaitEvery(c, "every node at epoch 2", c.IDs(), name, 0, func(st cluster.PartitionStatus) error {
			if st.LeaderEpoch != 2 || st.Leader != old {
				return fmt.Errorf("leader %d epoch %d", st.Leader, st.LeaderEpoch)
			}
			return nil
		})
		_, err = replicate(follower, cluster.ReplicateRequest{Epoch: 0, Leader: old, HighWatermark: 5, Records: next("from the leader's own old epoch")})
		require.ErrorAs(t, err, &stale)
		require.Equal(t, [2]uint64{2, 0}, [2]uint64{stale.Epoch, stale.Asked})
		unchanged("the current leader's old epoch")

		// Two requests naming the leader with other records at held
		// offsets: refused, and the follower is left as it was — not
		// flagged diverged, so the controller neither deactivates nor
		// recovers it (each flip a journal entry: a loop for as long as
		// a flag stayed set).
		journalBefore := len(journal(t, c, 1))
		other := []log.Record{{Offset: 3, Timestamp: held[3].Timestamp, Payload: []byte("not what offset 3 holds")}, held[4]}
		for range 2 {
			_, err = replicate(follower, cluster.ReplicateRequest{Epoch: 2, Leader: old, HighWatermark: 5, Records: other})
			var diverged *cluster.ReplicaDivergenceError
			require.ErrorAs(t, err, &diverged)
			require.Equal(t, follower, diverged.BrokerID)
			require.Equal(t, uint64(3), diverged.Offset)
		}
		unchanged("other records at held offsets")
		time.Sleep(10 * time.Second) // heartbeats and controller passes, on the bubble's clock
		for _, id := range c.IDs() {
			st := statusVia(t, c, id, name, 0)
			for _, r := range st.Replicas {
				require.True(t, r.Active, "node %d sees broker %d active", id, r.BrokerID)
				require.NoError(t, r.Err, "node %d sees broker %d", id, r.BrokerID)
			}
		}
		require.Equal(t, journalBefore, len(journal(t, c, 1)), "no controller action followed the refused requests")
	})
}
