package raftmeta

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// The multi-node tests below run three nodes in this process on a
// rafttest.Network, inside a synctest bubble: every timer of Raft, of the
// in-memory transports and of the tests is on the bubble's fake clock, so
// an election that takes one to two seconds takes no real time, and
// synctest.Test fails a test that leaves a goroutine behind.

// TestRaftmetaInmemElectAndReplicate: three nodes on an in-memory network
// bootstrap and elect exactly one leader (Raft §5.2), which is told of its
// leadership; every command applied on it reaches the three state machines
// in the same order (Raft §5.3, log matching); a follower refuses Apply
// with a *NotLeaderError naming the leader's in-memory address.
func TestRaftmetaInmemElectAndReplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := newInmemCluster(t, 3, nil)
		leader := c.waitLeader(5 * time.Second)
		took := time.Since(start)
		t.Logf("node %d elected %v (fake time) after Open", leader.id, took)
		require.GreaterOrEqual(t, took, DefaultHeartbeatTimeout, "no follower stands before its heartbeat timeout")
		select {
		case became := <-leader.node.Leadership():
			require.True(t, became)
		default:
			t.Fatal("the leader was not told of its leadership")
		}

		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		res, err := leader.node.Apply(ctx, []byte("first"))
		require.NoError(t, err)
		require.Equal(t, "first#1", string(res), "the result is the leader's state machine's")
		want := append([]string{"first"}, applyN(t, leader.node, "cmd", 20)...)
		c.waitConverged(want)

		for _, n := range c.running() {
			if n == leader {
				continue
			}
			_, err := n.node.Apply(ctx, []byte("from a follower"))
			var nle *NotLeaderError
			require.ErrorAs(t, err, &nle)
			require.Equal(t, NotLeaderError{LeaderID: leader.id, LeaderAddr: rafttest.Addr(leader.id)}, *nle)
		}
	})
}

// TestRaftmetaInmemFailover: when the leader is closed, the other two
// elect a new leader (Raft §5.2) and go on committing with a majority of
// two.
func TestRaftmetaInmemFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		old := c.waitLeader(5 * time.Second)
		want := applyN(t, old.node, "before", 5)

		start := time.Now()
		c.stop(old)
		leader := c.waitLeader(5 * time.Second)
		took := time.Since(start)
		t.Logf("node %d elected %v (fake time) after node %d closed", leader.id, took, old.id)
		require.NotEqual(t, old.id, leader.id)
		// A follower stands only once it has heard nothing for its
		// heartbeat timeout, and the leader's last heartbeat left at most
		// two tenths of it before the close (hashicorp sends one every
		// tenth to two tenths of the timeout). Its timer, re-armed for
		// one to two timeouts, may have just missed the mark.
		require.GreaterOrEqual(t, took, DefaultHeartbeatTimeout*8/10)
		require.Less(t, took, 3*DefaultHeartbeatTimeout+DefaultElectionTimeout, "one round of elections")

		want = append(want, applyN(t, leader.node, "after", 5)...)
		c.waitConverged(want)
	})
}

// TestRaftmetaInmemRestartCatchesUp: the leader is closed, the other two
// elect a new one and commit more; the old leader, opened again on its
// Dir with a fresh transport at the same address, recovers its log from
// bolt and catches up from the new leader's log, without disturbing it.
func TestRaftmetaInmemRestartCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		old := c.waitLeader(5 * time.Second)
		want := applyN(t, old.node, "before", 5)
		c.waitConverged(want)
		c.stop(old)
		leader := c.waitLeader(5 * time.Second)
		want = append(want, applyN(t, leader.node, "missed", 5)...)

		c.start(old, nil, nil, false) // Peers ignored on restart
		require.Zero(t, old.fsm.restoreCount(), "no snapshot was taken")
		c.waitConverged(want)
		require.Equal(t, leader.id, c.waitLeader(5*time.Second).id, "the rejoining node does not disturb the leader")
		want = append(want, applyN(t, leader.node, "after", 3)...)
		c.waitConverged(want)
	})
}

// TestRaftmetaInmemRestartFromSnapshot: a node that comes back after the
// leader compacted its log catches up by InstallSnapshot (Raft §7) over
// the in-memory transport.
func TestRaftmetaInmemRestartFromSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, func(cfg *Config) { cfg.TrailingLogs = 1 })
		leader := c.waitLeader(5 * time.Second)
		want := applyN(t, leader.node, "before", 5)
		c.waitConverged(want)

		var follower *testNode
		for _, n := range c.running() {
			if n != leader {
				follower = n
				break
			}
		}
		c.stop(follower)
		want = append(want, applyN(t, leader.node, "missed", 10)...)
		require.NoError(t, leader.node.raft.Snapshot().Error())

		c.start(follower, nil, nil, false)
		c.waitConverged(want)
		require.Equal(t, 1, follower.fsm.restoreCount(), "the follower got the leader's snapshot")
	})
}

// TestRaftmetaInmemIsolatedMinority: a leader cut off from the other two
// cannot commit: it steps down after its leader lease and its proposer
// learns ErrLeadershipLost. The majority elects a new leader and commits;
// after Heal the old leader follows it and its uncommitted entry is
// replaced by the majority's log (Raft §5.3, §5.4.1).
func TestRaftmetaInmemIsolatedMinority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		old := c.waitLeader(5 * time.Second)
		want := applyN(t, old.node, "before", 3)
		c.waitConverged(want)

		c.network.Isolate(old.id)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := old.node.Apply(ctx, []byte("minority"))
		require.ErrorIs(t, err, ErrLeadershipLost)
		require.Less(t, time.Since(start), DefaultHeartbeatTimeout, "a leader cut off steps down after its lease")
		require.False(t, old.node.IsLeader())

		var majority []*testNode
		for _, n := range c.running() {
			if n != old {
				majority = append(majority, n)
			}
		}
		leader := c.waitLeaderAmong(5*time.Second, majority)
		want = append(want, applyN(t, leader.node, "majority", 3)...)
		c.waitConvergedAmong(want, majority)
		require.Equal(t, want[:3], old.fsm.list(), "the isolated node applied nothing more")
		_, err = old.node.Apply(ctx, []byte("still cut off"))
		require.ErrorIs(t, err, ErrNotLeader)

		c.network.Heal()
		require.Equal(t, leader.id, c.waitLeader(5*time.Second).id)
		c.waitConverged(want)
	})
}

// TestRaftmetaInmemCutFollower: a follower cut from the leader alone
// cannot unseat it (pre-vote: the other follower still hears the leader),
// the leader commits with the other follower, and after Heal the cut
// follower catches up.
func TestRaftmetaInmemCutFollower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		leader := c.waitLeader(5 * time.Second)
		var cut *testNode
		for _, n := range c.running() {
			if n != leader {
				cut = n
				break
			}
		}
		c.network.Cut(leader.id, cut.id)
		want := applyN(t, leader.node, "cut", 5)
		time.Sleep(5 * DefaultElectionTimeout)
		require.True(t, leader.node.IsLeader(), "the cut follower's elections do not unseat the leader")
		require.Empty(t, cut.fsm.list())

		c.network.Heal()
		c.waitConverged(want)
		require.Equal(t, leader.id, c.waitLeader(5*time.Second).id)
	})
}

// TestRaftmetaInmemRemoveLeader: a leader that removes itself commits
// the change with the others, steps down and shuts its Raft down; Close
// then still releases everything it held: its goroutines are gone and
// its transport is off the network. The other two elect a new leader.
func TestRaftmetaInmemRemoveLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		old := c.waitLeader(5 * time.Second)
		require.NotEmpty(t, raftGoroutines(old.node))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		require.NoError(t, old.node.RemoveVoter(ctx, old.id))
		_, err := old.node.Apply(ctx, []byte("x"))
		require.ErrorIs(t, err, ErrClosed)

		removed := old.node
		c.stop(old)
		synctest.Wait()
		require.Empty(t, raftGoroutines(removed), "goroutines of the removed node's Raft")
		for _, n := range c.running() {
			require.False(t, c.network.Reachable(old.id, n.id), "the removed node's transport is closed")
		}
		leader := c.waitLeader(5 * time.Second)
		servers, err := leader.node.Servers()
		require.NoError(t, err)
		require.NotContains(t, ids(servers), old.id)
		c.waitConverged(applyN(t, leader.node, "after", 2))
	})
}

// TestRaftmetaInmemApplyDeadline: Apply honours its context's deadline on
// the bubble's clock: on a leader that cannot commit, it returns
// DeadlineExceeded at the deadline, and the goroutine it leaves waiting on
// Raft's future ends when the leader steps down after its lease.
func TestRaftmetaInmemApplyDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		leader := c.waitLeader(5 * time.Second)
		c.network.Isolate(leader.id)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := leader.node.Apply(ctx, []byte("late"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 100*time.Millisecond, time.Since(start))

		synctest.Wait()
		require.Len(t, bubbleGoroutines("raftmeta.wait"), 1, "Apply's wait for the future")
		time.Sleep(DefaultLeaderLeaseTimeout)
		synctest.Wait()
		require.False(t, leader.node.IsLeader())
		require.Empty(t, bubbleGoroutines("raftmeta.wait"), "the step-down answered the future")
	})
}

// TestRaftmetaInmemDirInUse: bolt's file lock timeout runs on the fake
// clock: a second Open of a Dir in use fails after exactly the lock
// timeout, and closes the transport it was given.
func TestRaftmetaInmemDirInUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 1, nil)
		other := rafttest.NewNetwork()
		trans := other.Transport(1)
		other.Transport(2)
		require.True(t, other.Reachable(1, 2))
		start := time.Now()
		_, err := Open(Config{ID: 1, Dir: c.nodes[1].dir, Join: true, Transport: trans, FSM: &listFSM{}})
		require.ErrorIs(t, err, bbolt.ErrTimeout)
		require.Equal(t, dbOpenTimeout, time.Since(start), "bolt retries every 50 ms until its timeout")
		require.False(t, other.Reachable(1, 2), "Open closed the transport it failed with")
	})
}

// TestRaftmetaInmemCloseStopsGoroutines: once every node is closed, no
// goroutine of Raft, of its transports or of this package is left, even
// the one an Apply left waiting on a leader that could not commit.
// synctest.Test fails a bubble that does not end empty; this names the
// goroutine that would be left, and shows they are gone at Close, not
// some time later.
func TestRaftmetaInmemCloseStopsGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInmemCluster(t, 3, nil)
		leader := c.waitLeader(5 * time.Second)
		c.waitConverged(applyN(t, leader.node, "cmd", 3))
		c.network.Isolate(leader.id)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		_, err := leader.node.Apply(ctx, []byte("abandoned"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		synctest.Wait()
		require.NotEmpty(t, bubbleGoroutines("github.com/hashicorp/raft"))
		require.Len(t, bubbleGoroutines("raftmeta.wait"), 1)

		c.stopAll()
		synctest.Wait()
		require.Empty(t, bubbleGoroutines("github.com/hashicorp/raft", "go.etcd.io/bbolt", "raftmeta.(*Node)", "raftmeta.wait", "raftmeta/rafttest."),
			"goroutines left after every node closed")
	})
}

// raftGoroutines returns the stacks of the goroutines of n's Raft: those
// with a hashicorp method of the *raft.Raft among their frames (its
// raftState is its first field, so both have its address).
func raftGoroutines(n *Node) []string {
	return bubbleGoroutines(fmt.Sprintf("(%p)", n.raft), fmt.Sprintf("(%p, ", n.raft))
}

// bubbleGoroutines returns the stacks of the goroutines of the caller's
// synctest bubble whose stack mentions any of funcs, the caller's
// excepted. It assumes no other bubble runs (no test here is parallel).
func bubbleGoroutines(funcs ...string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if i == 0 || !strings.Contains(header, "synctest bubble") {
			continue // the first is the caller's
		}
		for _, f := range funcs {
			if strings.Contains(g, f) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}
