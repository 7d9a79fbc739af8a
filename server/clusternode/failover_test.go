package clusternode

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// failoverMargin is how long past FailoverAfter a failover may take: a
// new metadata leader may have to be elected first (its controller counts
// silences from its own start), and the machine may be busy.
const failoverMargin = 25 * time.Second

// TestFailoverLeaderCrash pins doc.go's failover across processes
// (docs/phase-7-processes.md): when the broker that leads a partition
// stops (a crash, to the others), the controller — on whichever node
// leads the metadata group — hands the partition to an active follower at
// the next leader epoch within FailoverAfter and takes the silent broker
// out of every active set; writes through the survivors go on; every
// record acknowledged before is still readable at its offset. When the
// broker comes back on its data directory it proves its replicas
// prefixes of their leaders', catches up, and the controller lets it
// rejoin every active set.
func TestFailoverLeaderCrash(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "payments"
	const partitions = 3
	c.createTopic(c.follower(), name, partitions, 3)
	acked := map[int][]string{}
	send := func(via *Node, p int, payload string, brokers []int) {
		t.Helper()
		res, err := via.Send(name, &p, []topic.Message{{Payload: []byte(payload)}})
		require.NoError(t, err, "send to %s/%d through node %d", name, p, via.ID())
		require.Equal(t, uint64(len(acked[p])), res[0].Offset, "%s/%d", name, p)
		require.Equal(t, brokers, res[0].Brokers, "%s/%d", name, p)
		acked[p] = append(acked[p], payload)
	}
	for i := range 4 {
		for p := range partitions {
			send(c.node(i%3+1), p, fmt.Sprintf("before #%d", i), []int{1, 2, 3})
		}
	}

	before := partitionOf(t, c.node(1), name, 0)
	victim := before.Leader
	stopped := time.Now()
	c.stop(victim)
	var survivors []int
	for _, n := range c.running() {
		survivors = append(survivors, n.ID())
	}

	waitFor(t, testFailoverAfter+failoverMargin, "a failover of "+name+"/0 seen by every survivor", func() (bool, string) {
		for _, n := range c.running() {
			st, err := n.Status(name, 0)
			if err != nil {
				return false, fmt.Sprintf("node %d: %v", n.ID(), err)
			}
			if st.Leader == victim || st.LeaderEpoch != before.LeaderEpoch+1 || slices.Contains(st.Active, victim) {
				return false, fmt.Sprintf("node %d: leader %d epoch %d active %v", n.ID(), st.Leader, st.LeaderEpoch, st.Active)
			}
			if !slices.Contains(survivors, st.Leader) || !slices.Equal(st.Active, survivors) {
				return false, fmt.Sprintf("node %d: leader %d active %v", n.ID(), st.Leader, st.Active)
			}
		}
		return true, ""
	})
	t.Logf("%s/0 failed over %v after broker %d stopped", name, time.Since(stopped).Round(time.Millisecond), victim)
	// Its other partitions too: the victim leaves every active set.
	waitFor(t, testFailoverAfter+failoverMargin, "broker out of every active set", func() (bool, string) {
		for _, n := range c.running() {
			for p := range partitions {
				if pm := partitionOf(t, n, name, p); slices.Contains(pm.Active, victim) || pm.Leader == victim {
					return false, fmt.Sprintf("node %d: %s/%d: %+v", n.ID(), name, p, pm)
				}
			}
		}
		return true, ""
	})

	for _, n := range c.running() {
		for p := range partitions {
			send(n, p, fmt.Sprintf("without %d via %d", victim, n.ID()), survivors)
		}
	}
	for p := range partitions {
		for _, n := range c.running() {
			recs := readAll(t, n, name, p)
			require.Equal(t, acked[p], payloads(recs), "%s/%d through node %d: every acknowledged record at its offset", name, p, n.ID())
		}
	}
	entries, err := c.node(survivors[0]).Journal(0, 0)
	require.NoError(t, err)
	i := slices.IndexFunc(entries, func(e cluster.JournalEntry) bool {
		return e.Event == cluster.EventFailover && e.By == cluster.ByController && e.Topic == name && e.Partition == 0
	})
	require.GreaterOrEqual(t, i, 0, "the journal records the controller's failover: %v", entries)
	fo := entries[i]
	require.NotEmpty(t, fo.Candidates, "the failover names the candidates it compared")
	require.Equal(t, fo.After.Leader, fo.Candidates[0].Broker, "the winner first")

	// The victim returns on its own data directory and address.
	c.restart(victim)
	back := time.Now()
	waitFor(t, waitLong, fmt.Sprintf("broker %d active again everywhere", victim), func() (bool, string) {
		for _, n := range c.running() {
			for p := range partitions {
				st, err := n.Status(name, p)
				if err != nil {
					return false, fmt.Sprintf("node %d: %v", n.ID(), err)
				}
				if !slices.Equal(st.Active, []int{1, 2, 3}) {
					return false, fmt.Sprintf("node %d: %s/%d: leader %d epoch %d active %v", n.ID(), name, p, st.Leader, st.LeaderEpoch, st.Active)
				}
			}
		}
		return true, ""
	})
	t.Logf("broker %d rejoined every active set %v after it restarted", victim, time.Since(back).Round(time.Millisecond))
	for p := range partitions {
		pm := partitionOf(t, c.node(victim), name, p)
		leaderLog := c.replicaLog(pm.Leader, name, p)
		require.Equal(t, acked[p], payloads(leaderLog), "%s/%d: the leader's log", name, p)
		sameRecords(t, leaderLog, c.replicaLog(victim, name, p), "%s/%d: the returned broker's log equals its leader's", name, p)
	}
	// Writes reach it again.
	for p := range partitions {
		send(c.node(victim), p, "after the return", []int{1, 2, 3})
		got := c.replicaLog(victim, name, p)
		require.Equal(t, acked[p], payloads(got), "%s/%d on the returned broker", name, p)
	}
}

// TestFailoverControllerCrash pins the same failover when the broker that
// stops also leads the metadata group, so runs the controller: the
// survivors elect a new metadata leader, whose controller counts the
// silent broker's silence from its own start and fails its partition over
// to an active follower at the next epoch; acknowledged records stay
// readable and writes go on.
func TestFailoverControllerCrash(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "ledger"
	const partitions = 3
	c.createTopic(c.node(1), name, partitions, 3)
	acked := map[int][]string{}
	for i := range 2 {
		for p := range partitions {
			payload := fmt.Sprintf("before #%d", i)
			_, err := c.node(i+1).Send(name, &p, []topic.Message{{Payload: []byte(payload)}})
			require.NoError(t, err)
			acked[p] = append(acked[p], payload)
		}
	}
	var victim int
	waitFor(t, waitLong, "a metadata leader every node agrees on", func() (bool, string) {
		victim = c.controller()
		return victim != 0, ""
	})
	q := -1
	for p := range partitions {
		if partitionOf(t, c.node(victim), name, p).Leader == victim {
			q = p
		}
	}
	require.NotEqual(t, -1, q, "broker %d leads one of the partitions (three brokers, three partitions)", victim)
	before := partitionOf(t, c.node(victim), name, q)

	stopped := time.Now()
	c.stop(victim)
	waitFor(t, testFailoverAfter+failoverMargin, fmt.Sprintf("a new metadata leader and a failover of %s/%d", name, q), func() (bool, string) {
		for _, n := range c.running() {
			if id, _ := n.raft.Leader(); id == 0 || id == victim {
				return false, fmt.Sprintf("node %d: metadata leader %d", n.ID(), id)
			}
			st, err := n.Status(name, q)
			if err != nil {
				return false, fmt.Sprintf("node %d: %v", n.ID(), err)
			}
			if st.Leader == victim || st.LeaderEpoch != before.LeaderEpoch+1 || slices.Contains(st.Active, victim) {
				return false, fmt.Sprintf("node %d: leader %d epoch %d active %v", n.ID(), st.Leader, st.LeaderEpoch, st.Active)
			}
		}
		return true, ""
	})
	t.Logf("%s/%d failed over %v after broker %d, the metadata leader, stopped", name, q, time.Since(stopped).Round(time.Millisecond), victim)
	waitFor(t, testFailoverAfter+failoverMargin, "broker out of every active set", func() (bool, string) {
		for _, n := range c.running() {
			for p := range partitions {
				if pm := partitionOf(t, n, name, p); slices.Contains(pm.Active, victim) {
					return false, fmt.Sprintf("node %d: %s/%d: %+v", n.ID(), name, p, pm)
				}
			}
		}
		return true, ""
	})
	for _, n := range c.running() {
		for p := range partitions {
			payload := fmt.Sprintf("after via %d", n.ID())
			res, err := n.Send(name, &p, []topic.Message{{Payload: []byte(payload)}})
			require.NoError(t, err, "send to %s/%d through node %d", name, p, n.ID())
			require.Equal(t, uint64(len(acked[p])), res[0].Offset)
			require.NotContains(t, res[0].Brokers, victim)
			acked[p] = append(acked[p], payload)
		}
	}
	for _, n := range c.running() {
		for p := range partitions {
			require.Equal(t, acked[p], payloads(readAll(t, n, name, p)), "%s/%d through node %d", name, p, n.ID())
		}
	}
}
