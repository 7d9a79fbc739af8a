package clusternode_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// deadlineMargin is what a call may take past its deadline on the fake
// clock: the answer's way back, a controller pass.
const deadlineMargin = 200 * time.Millisecond

// notLedBy returns a partition of topicName, among its first partitions,
// whose leader (as node via's metadata has it) is none of not.
func notLedBy(t *testing.T, c *clustertest.Cluster, via int, topicName string, partitions int, not ...int) (p, leader int) {
	t.Helper()
	for p := range partitions {
		st := statusVia(t, c, via, topicName, p)
		if !containsInt(not, st.Leader) {
			return p, st.Leader
		}
	}
	t.Fatalf("every partition of %s is led by one of %v", topicName, not)
	return -1, 0
}

func containsInt(ids []int, id int) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestDeadlineForwardedToHeldLeader pins docs/phase-7-processes.md
// § Faults and deadlines: a write and a read sent to a node that forwards
// them to the partition's leader, over a link that holds its bytes
// without closing, are answered within the call deadline
// (clusternode.CallDeadline of the failover delay) with a
// *cluster.LeaderUnavailableError naming the partition and the leader —
// retriable — not after the 15 s a request may otherwise take.
func TestDeadlineForwardedToHeldLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "held"
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic(name, 3, 3))
		p, leader := notLedBy(t, c, ctl, name, 3, ctl)
		via := others(c, ctl, leader)[0]
		send(t, c, via, name, p, "before")

		// The leader's heartbeats reach the controller still: only the
		// forwarding node's requests to it hang.
		c.Hold(via, leader)
		deadline := clusternode.CallDeadline(clustertest.DefaultFailoverAfter)

		began := time.Now()
		_, err := cluster.NewProducer(c.Via(via), name).SendBatchTo(p, msgs("while held"))
		took := time.Since(began)
		var lu *cluster.LeaderUnavailableError
		require.ErrorAs(t, err, &lu, "a write forwarded to a held leader")
		require.Equal(t, name, lu.Topic)
		require.Equal(t, p, lu.Partition)
		require.Equal(t, leader, lu.BrokerID)
		require.LessOrEqual(t, took, deadline+deadlineMargin, "the forwarded write was answered after %v", took)

		began = time.Now()
		_, err = c.Via(via).ReadCommitted(name, p, 0, 10)
		took = time.Since(began)
		require.ErrorIs(t, err, cluster.ErrBrokerUnavailable, "a read forwarded to a held leader")
		require.LessOrEqual(t, took, deadline+deadlineMargin, "the forwarded read was answered after %v", took)

		c.Heal()
		// The requests the hold kept end now, with their connections:
		// let them, so that the next write does not go out on one of them.
		synctest.Wait()
		send(t, c, via, name, p, "healed")
	})
}

// TestDeadlineHeldFollowerOfControllerLeader pins docs/phase-7-processes.md
// § Faults and deadlines: a follower whose links hold their bytes holds a
// write to its partition only until the controller takes it out of the
// active set, at the failover delay — also when the controller's own node
// leads the partition, where the deactivation must not wait for the very
// write that waits for it. The write is acknowledged without the
// follower, within the call deadline.
func TestDeadlineHeldFollowerOfControllerLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "slow"
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic(name, 3, 3))
		p := ledBy(t, c, ctl, name, 3, ctl)
		follower := others(c, ctl)[0]
		send(t, c, ctl, name, p, "before")

		// The follower hears nothing and says nothing on the internal
		// API: no heartbeat, no replication.
		for _, id := range others(c, follower) {
			c.Hold(follower, id)
		}
		began := time.Now()
		_, res := send(t, c, ctl, name, p, "while held")
		took := time.Since(began)
		require.NotContains(t, res[0].Brokers, follower, "acknowledged without the held follower")
		require.LessOrEqual(t, took, clusternode.CallDeadline(clustertest.DefaultFailoverAfter),
			"the write waited %v for the held follower", took)
		c.Heal()
	})
}

// TestDeadlineForwardedCallEndsAtFailover pins docs/phase-7-processes.md
// § Faults and deadlines: a read and a write forwarded to a leader that
// went silent (every link of its internal API held) stop waiting as soon
// as the failover is applied on the forwarding node, before their call
// deadline: the read is served by the new leader, the write is told
// unavailable (it may have reached the old leader, so it is not sent
// again) and succeeds when the client retries.
func TestDeadlineForwardedCallEndsAtFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "moved"
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic(name, 3, 3))
		p, leader := notLedBy(t, c, ctl, name, 3, ctl)
		via := others(c, ctl, leader)[0]
		before, _ := send(t, c, via, name, p, "before")

		for _, id := range others(c, leader) {
			c.Hold(leader, id)
		}
		deadline := clusternode.CallDeadline(clustertest.DefaultFailoverAfter)
		began := time.Now()
		type outcome struct {
			took time.Duration
			err  error
		}
		read, write := make(chan outcome, 1), make(chan outcome, 1)
		go func() {
			recs, err := c.Via(via).ReadCommitted(name, p, 0, 10)
			if err == nil {
				sameRecords(t, before, recs)
			}
			read <- outcome{time.Since(began), err}
		}()
		go func() {
			_, err := cluster.NewProducer(c.Via(via), name).SendBatchTo(p, msgs("while silent"))
			write <- outcome{time.Since(began), err}
		}()
		r, w := <-read, <-write
		require.NoError(t, r.err, "the read is served by the new leader")
		require.Less(t, r.took, deadline, "the read waited for the old leader until its deadline")
		var lu *cluster.LeaderUnavailableError
		require.ErrorAs(t, w.err, &lu, "the write is told its leader is unavailable")
		require.Equal(t, leader, lu.BrokerID)
		require.Less(t, w.took, deadline, "the write waited for the old leader until its deadline")
		require.NotEqual(t, leader, statusVia(t, c, via, name, p).Leader)
		send(t, c, via, name, p, "retried")
		c.Heal()
	})
}

// TestDeadlineHeldLeaderFailsOverOnTime pins docs/phase-7-processes.md
// § Faults and deadlines: a leader of several partitions whose links
// hold their bytes fails over at the failover delay, as one that is
// killed does. The controller's pass reads every status, and a status
// asks the partition's leader for its bounds: asked while its heartbeats
// still count it up, a held leader answers nothing, so the question is
// bounded by the heartbeat window and the statuses are read together —
// else each of its partitions would hold the pass, and the failovers,
// for a second more.
func TestDeadlineHeldLeaderFailsOverOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "spread"
		const partitions = 6
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		require.NoError(t, c.Via(ctl).CreateTopic(name, partitions, 3))
		c.AwaitReady()
		leader := others(c, ctl)[0]
		var led []int
		for p := range partitions {
			if statusVia(t, c, ctl, name, p).Leader == leader {
				led = append(led, p)
			}
		}
		require.GreaterOrEqual(t, len(led), 2, "broker %d leads several partitions", leader)

		for _, id := range others(c, leader) {
			c.Hold(leader, id)
		}
		held := time.Now()
		window := clusternode.HeartbeatWindow(clustertest.DefaultFailoverAfter)
		st, err := c.Via(ctl).Status(name, led[0])
		require.NoError(t, err)
		require.Equal(t, leader, st.Leader)
		require.LessOrEqual(t, time.Since(held), window+deadlineMargin,
			"a status asks the held leader no longer than the heartbeat window, after which it counts down anyway")
		c.Await("every partition of the held leader failed over", func() (bool, string) {
			for _, p := range led {
				if st := statusVia(t, c, ctl, name, p); st.Leader == leader {
					return false, "still led by the held broker"
				}
			}
			return true, ""
		})
		took := time.Since(held)
		t.Logf("%d partitions failed over %v after the hold", len(led), took)
		require.LessOrEqual(t, took, clustertest.DefaultFailoverAfter+window+deadlineMargin,
			"a held leader fails over at the failover delay, as a killed one does")
		c.Heal()
	})
}
