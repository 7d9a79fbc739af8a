package clustertest_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// The behaviour suite: what a PyStream cluster of three brokers does —
// write, fail, fail over, recover, quarantine, retention, delete, restart,
// offsets, status — written once and run against both of its bodies: one
// process of logical brokers (phases 4-5) and three processes of cluster
// mode (phase 7) over in-memory Raft and replication transports
// (clustertest), each on synctest's fake clock (docs/phase-7-processes.md
// § One cluster, two transports).

func msgs(payloads ...string) []topic.Message {
	out := make([]topic.Message, len(payloads))
	for i, p := range payloads {
		out[i] = topic.Message{Payload: []byte(p)}
	}
	return out
}

func payloads(recs []cluster.SendResult) []uint64 {
	out := make([]uint64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

// A write through any broker is acknowledged by every active replica,
// read back through any other, and every broker reports the partition
// the same: every replica available, at the same log end, lag 0.
func TestBehaviourWriteReadStatus(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 2, 3))
		res, err := cluster.NewProducer(s.Via(2), "orders").SendBatchTo(1, msgs("a", "b", "c"))
		require.NoError(t, err)
		require.Equal(t, []uint64{0, 1, 2}, payloads(res))
		st := status(t, s, "orders", 1)
		for _, r := range res {
			require.Equal(t, []int{1, 2, 3}, r.Brokers, "acknowledged by every active replica")
			require.Equal(t, st.Leader, r.LeaderBrokerID)
		}
		recs, err := s.Via(3).ReadCommitted("orders", 1, 0, 10)
		require.NoError(t, err)
		require.Len(t, recs, 3)
		require.Equal(t, "c", string(recs[2].Payload))
		s.Await("every broker reports orders/1 settled at 3", func() (bool, string) {
			return settled(s, "orders", 1, func(st cluster.PartitionStatus) error {
				if st.HighWatermark != 3 {
					return fmt.Errorf("high watermark %d", st.HighWatermark)
				}
				return nil
			})
		})
		for id := 1; id <= 3; id++ {
			hw, err := s.Via(id).HighWatermark("orders", 0)
			require.NoError(t, err)
			require.Zero(t, hw, "partition 0 took nothing")
		}
	})
}

// A follower that stops fails the writes that need it (not acknowledged),
// until the controller takes it out of the active set after the failover
// delay; writes go on without it, and when it comes back the controller
// recovers it into the active set, its log identical to its leader's.
func TestBehaviourFollowerDownAndBack(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 1, 3))
		st := status(t, s, "orders", 0)
		follower := st.Followers[0]
		sendVia := st.Leader
		_, err := cluster.NewProducer(s.Via(sendVia), "orders").Send(nil, []byte("before"))
		require.NoError(t, err)

		s.Down(follower)
		_, err = cluster.NewProducer(s.Via(sendVia), "orders").Send(nil, []byte("refused"))
		var re *cluster.ReplicationError
		require.ErrorAs(t, err, &re)
		require.Equal(t, []int{follower}, re.BrokerIDs)

		s.Await("the stopped follower leaves the active set", func() (bool, string) {
			st, err := s.Via(sendVia).Status("orders", 0)
			if err != nil {
				return false, err.Error()
			}
			return !slices.Contains(st.Active, follower), fmt.Sprintf("active %v", st.Active)
		})
		res, err := cluster.NewProducer(s.Via(sendVia), "orders").Send(nil, []byte("without it"))
		require.NoError(t, err)
		require.NotContains(t, res.Brokers, follower)

		s.Up(follower)
		s.Await("the follower recovered into the active set", func() (bool, string) {
			return settled(s, "orders", 0, nil)
		})
		recs, err := s.Via(follower).ReadCommitted("orders", 0, 0, 10)
		require.NoError(t, err)
		var got []string
		for _, r := range recs {
			got = append(got, string(r.Payload))
		}
		require.Equal(t, []string{"before", "refused", "without it"}, got,
			"the leader kept the record no follower acknowledged; it is committed once every active replica holds it")
	})
}

// A leader that stops is replaced by the longest active follower after
// the failover delay, at the next leader epoch; writes and reads go on
// through the new leader, and the old one, back, rejoins as a follower.
func TestBehaviourLeaderDownFailsOver(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 1, 3))
		old := status(t, s, "orders", 0).Leader
		via := 1 + old%3 // a broker that stays up
		for _, p := range []string{"a", "b", "c"} {
			_, err := cluster.NewProducer(s.Via(via), "orders").Send(nil, []byte(p))
			require.NoError(t, err)
		}
		s.Down(old)
		s.Await("a new leader", func() (bool, string) {
			st, err := s.Via(via).Status("orders", 0)
			if err != nil {
				return false, err.Error()
			}
			return st.Leader != old, fmt.Sprintf("leader %d", st.Leader)
		})
		st := status(t, s, "orders", 0)
		require.Equal(t, uint64(1), st.LeaderEpoch)
		require.NotContains(t, st.Active, old)
		res, err := cluster.NewProducer(s.Via(via), "orders").Send(nil, []byte("d"))
		require.NoError(t, err)
		require.Equal(t, uint64(3), res.Offset)
		require.Equal(t, st.Leader, res.LeaderBrokerID)
		entries, err := s.Via(via).Journal(0, 1000)
		require.NoError(t, err)
		var failover *cluster.JournalEntry
		for i, e := range entries {
			if e.Event == cluster.EventFailover && e.Phase == cluster.PhaseDone {
				failover = &entries[i]
			}
		}
		require.NotNil(t, failover, "the failover is journaled")
		require.Equal(t, cluster.ByController, failover.By)
		require.Equal(t, old, failover.Broker)

		s.Up(old)
		s.Await("the old leader rejoins as a follower", func() (bool, string) {
			return settled(s, "orders", 0, func(st cluster.PartitionStatus) error {
				if st.Leader == old {
					return errors.New("led by the old leader again")
				}
				return nil
			})
		})
		recs, err := s.Via(old).ReadCommitted("orders", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, recs, 4)
	})
}

// Records a leader appended but never replicated were never
// acknowledged: after the failover the new leader writes other records at
// their offsets, and when the old leader returns, its recovery cuts them
// into a quarantine file beside its log — kept, never destroyed — and
// journals the cut.
func TestBehaviourUnacknowledgedRecordsQuarantined(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 1, 3))
		old := status(t, s, "orders", 0).Leader
		via := 1 + old%3
		for _, p := range []string{"a", "b", "c"} {
			_, err := cluster.NewProducer(s.Via(via), "orders").Send(nil, []byte(p))
			require.NoError(t, err)
		}
		s.Down(old)
		appendBehind(t, s, old, "orders", "never acknowledged")
		s.Await("a new leader", func() (bool, string) {
			st, err := s.Via(via).Status("orders", 0)
			if err != nil {
				return false, err.Error()
			}
			return st.Leader != old, fmt.Sprintf("leader %d", st.Leader)
		})
		res, err := cluster.NewProducer(s.Via(via), "orders").Send(nil, []byte("d"))
		require.NoError(t, err)
		require.Equal(t, uint64(3), res.Offset, "the new leader's log never held the old leader's last record")

		s.Up(old)
		s.Await("the old leader recovered", func() (bool, string) { return settled(s, "orders", 0, nil) })
		files := quarantineFiles(t, s, old, "orders")
		require.Len(t, files, 1)
		kept, err := os.ReadFile(files[0])
		require.NoError(t, err)
		require.Contains(t, string(kept), "never acknowledged")
		var cut *cluster.JournalEntry
		s.Await("the recovery's cut journaled", func() (bool, string) {
			entries, err := s.Via(via).Journal(0, 1000)
			if err != nil {
				return false, err.Error()
			}
			for i, e := range entries {
				if e.Event == cluster.EventRecover && e.Cut != nil && e.Broker == old && e.Phase == cluster.PhaseDone {
					cut = &entries[i]
				}
			}
			return cut != nil, fmt.Sprint(entries)
		})
		require.Equal(t, cluster.JournalCut{From: 3, To: 4}, *cut.Cut)
		require.True(t, strings.HasSuffix(files[0], cut.Quarantine), "%s names %s", cut.Quarantine, files[0])
	})
}

// A retention pass deletes the leader's oldest sealed segments past
// retention.bytes, and every follower the same; a read below the new log
// start is out of range through any broker.
func TestBehaviourRetention(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopicWithConfig("t", 1, 3, map[string]string{"segment.bytes": "1024", "retention.bytes": "1024"}))
		payload := strings.Repeat("x", 100)
		for range 40 {
			_, err := cluster.NewProducer(s.Via(2), "t").Send(nil, []byte(payload))
			require.NoError(t, err)
		}
		res, err := s.Retention()
		require.NoError(t, err)
		require.Len(t, res, 1)
		start := res[0].To
		require.Positive(t, start)
		var brokers []int
		for _, r := range res[0].Removed {
			if !slices.Contains(brokers, r.Broker) {
				brokers = append(brokers, r.Broker)
			}
		}
		slices.Sort(brokers)
		require.Equal(t, []int{1, 2, 3}, brokers, "every replica dropped its segments below the log start")
		for id := 1; id <= 3; id++ {
			_, err := s.Via(id).ReadCommitted("t", 0, start-1, 1)
			var oor *client.OffsetOutOfRangeError
			require.ErrorAs(t, err, &oor, "through %d", id)
			require.Equal(t, start, oor.LogStart)
			ls, hw, err := s.Via(id).Bounds("t", 0)
			require.NoError(t, err)
			require.Equal(t, start, ls)
			require.Equal(t, uint64(40), hw)
		}
	})
}

// A topic deleted through any broker is gone from every broker, with its
// files and its consumers' offsets; a topic created again under the name
// starts empty.
func TestBehaviourDeleteTopic(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 2, 3))
		_, err := cluster.NewProducer(s.Via(1), "orders").SendBatch(msgs("a", "b", "c", "d"))
		require.NoError(t, err)
		require.NoError(t, s.Via(1).CommitOffset("billing", "orders", 0, 0))
		res, err := s.Via(2).DeleteTopic("orders")
		require.NoError(t, err)
		require.Equal(t, cluster.DeleteTopicResult{Topic: "orders", PartitionCount: 2, ReplicationFactor: 3, OffsetFiles: 1}, res)
		s.Await("the topic and its files gone everywhere", func() (bool, string) {
			for id := 1; id <= 3; id++ {
				if _, err := s.Via(id).Topic("orders"); !errors.Is(err, cluster.ErrUnknownTopic) {
					return false, fmt.Sprintf("through %d: %v", id, err)
				}
				if _, err := os.Stat(cluster.ReplicaDir(s.BrokerRoot(id), id, "orders", 0)); !errors.Is(err, os.ErrNotExist) {
					return false, fmt.Sprintf("broker %d's files: %v", id, err)
				}
			}
			return true, ""
		})
		s.Await("the name free again", func() (bool, string) {
			err := s.Via(3).CreateTopic("orders", 1, 3)
			return err == nil, fmt.Sprint(err)
		})
		for id := 1; id <= 3; id++ {
			hw, err := s.Via(id).HighWatermark("orders", 0)
			require.NoError(t, err)
			require.Zero(t, hw)
			_, ok, err := s.Via(id).LoadOffset("billing", "orders", 0)
			require.NoError(t, err)
			require.False(t, ok, "the deleted topic's offsets are gone")
		}
	})
}

// Everything acknowledged and committed survives a restart of every
// broker.
func TestBehaviourRestartKeepsEverything(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 1, 3))
		_, err := cluster.NewProducer(s.Via(1), "orders").SendBatch(msgs("a", "b", "c", "d", "e"))
		require.NoError(t, err)
		require.NoError(t, s.Via(2).CommitOffset("billing", "orders", 0, 3))
		s.RestartAll()
		s.Await("every broker serves the five records", func() (bool, string) {
			for id := 1; id <= 3; id++ {
				recs, err := s.Via(id).ReadCommitted("orders", 0, 0, 10)
				if err != nil || len(recs) != 5 {
					return false, fmt.Sprintf("through %d: %d records, %v", id, len(recs), err)
				}
			}
			return true, ""
		})
		for id := 1; id <= 3; id++ {
			off, ok, err := s.Via(id).LoadOffset("billing", "orders", 0)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, uint64(3), off)
		}
	})
}

// Committed offsets are read back through any broker; a commit past the
// high watermark, or below the committed offset, is refused and changes
// nothing; a reset may go back; a consumer's offsets are deleted whole,
// or one partition's.
func TestBehaviourOffsets(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 1, 3))
		_, err := cluster.NewProducer(s.Via(1), "orders").SendBatch(msgs("a", "b", "c"))
		require.NoError(t, err)
		require.NoError(t, s.Via(1).CommitOffset("billing", "orders", 0, 2))
		s.Await("the commit visible through every broker", func() (bool, string) {
			for id := 1; id <= 3; id++ {
				off, ok, err := s.Via(id).LoadOffset("billing", "orders", 0)
				if err != nil || !ok || off != 2 {
					return false, fmt.Sprintf("through %d: %d %v %v", id, off, ok, err)
				}
			}
			return true, ""
		})
		var beyond *client.OffsetBeyondEndError
		require.ErrorAs(t, s.Via(2).CommitOffset("billing", "orders", 0, 4), &beyond)
		require.Equal(t, uint64(3), beyond.End)
		var back *client.OffsetRegressionError
		require.ErrorAs(t, s.Via(3).CommitOffset("billing", "orders", 0, 1), &back)
		require.NoError(t, s.Via(3).ResetOffset("billing", "orders", 0, 1))
		list, err := s.Via(3).ListOffsets("billing")
		require.NoError(t, err)
		require.Equal(t, []client.CommittedOffset{{Topic: "orders", Partition: 0, Offset: 1}}, list)
		require.NoError(t, s.Via(1).CommitOffset("audit", "orders", 0, 3))
		deleted, err := s.Via(2).DeleteOffset("audit", "orders", 0)
		require.NoError(t, err)
		require.True(t, deleted)
		deleted, err = s.Via(3).DeleteOffset("audit", "orders", 0)
		require.NoError(t, err)
		require.False(t, deleted, "deleted already")
		_, ok, err := s.Via(3).LoadOffset("audit", "orders", 0)
		require.NoError(t, err)
		require.False(t, ok, "one partition's offset deleted, read through another broker")
		require.NoError(t, s.Via(1).CommitOffset("audit", "orders", 0, 1), "a deleted offset commits afresh, lower too")
		n, err := s.Via(2).DeleteOffsets("billing")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		list, err = s.Via(2).ListOffsets("billing")
		require.NoError(t, err)
		require.Empty(t, list)
	})
}

// The operator's operations work through any broker: a failover of a
// leader that is up is refused; a leader move hands the partition to a
// caught-up follower at the next epoch, and writes follow it.
func TestBehaviourOperatorFailoverAndMove(t *testing.T) {
	eachMode(t, func(t *testing.T, s system) {
		require.NoError(t, s.Via(1).CreateTopic("orders", 1, 3))
		_, err := cluster.NewProducer(s.Via(1), "orders").SendBatch(msgs("a", "b"))
		require.NoError(t, err)
		st := status(t, s, "orders", 0)
		other := st.Followers[0]
		var still *cluster.LeaderStillAvailableError
		_, err = s.Via(other).Failover("orders", 0)
		require.ErrorAs(t, err, &still)
		require.Equal(t, st.Leader, still.BrokerID)

		target := st.Followers[1]
		moved, err := s.Via(other).MoveLeader("orders", 0, target)
		require.NoError(t, err)
		require.Equal(t, cluster.MoveResult{Topic: "orders", Partition: 0, OldLeaderBrokerID: st.Leader, NewLeaderBrokerID: target,
			LeaderEpoch: 1, LogEnd: 2}, moved)
		res, err := cluster.NewProducer(s.Via(st.Leader), "orders").Send(nil, []byte("c"))
		require.NoError(t, err)
		require.Equal(t, target, res.LeaderBrokerID)
		require.Equal(t, uint64(2), res.Offset)
	})
}
