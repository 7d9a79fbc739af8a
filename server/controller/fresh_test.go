package controller

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/logtest"
)

// reportingCluster is one partition, leader 1 read now, followers 2 and
// 3 known by their last reports as in cluster mode: each with a log end
// and the time its report reached the controller. Apply records the
// actions and answers err.
type reportingCluster struct {
	epoch     uint64
	leaderEnd uint64
	ends      map[int]uint64
	at        map[int]time.Time
	active3   bool
	err       error
	applied   []cluster.Action
}

func (r *reportingCluster) Brokers() []cluster.BrokerInfo {
	return []cluster.BrokerInfo{{ID: 1, Available: true}, {ID: 2, Available: true}, {ID: 3, Available: true}}
}

func (r *reportingCluster) Topics() []cluster.TopicInfo {
	return []cluster.TopicInfo{{Name: "t", PartitionCount: 1, ReplicationFactor: 3}}
}

func (r *reportingCluster) Observe(string, int) (cluster.PartitionStatus, error) {
	leaderEnd := r.leaderEnd
	st := cluster.PartitionStatus{Topic: "t", Partition: 0, Leader: 1, LeaderEpoch: r.epoch, Preferred: 1,
		Replicas: []cluster.ReplicaStatus{{BrokerID: 1, Active: true, Available: true, LogEnd: &leaderEnd}}}
	for _, id := range []int{2, 3} {
		end := r.ends[id]
		st.Replicas = append(st.Replicas, cluster.ReplicaStatus{BrokerID: id, Active: id == 2 || r.active3, Available: true,
			LogEnd: &end, ReportedAt: r.at[id]})
	}
	return st, nil
}

func (r *reportingCluster) Apply(a cluster.Action) (cluster.ApplyResult, error) {
	r.applied = append(r.applied, a)
	return cluster.ApplyResult{Changed: r.err == nil, Journaled: r.err == nil}, r.err
}

func (r *reportingCluster) JournalRefusal(cluster.Action, error) error { return nil }

func (r *reportingCluster) kinds() []string {
	var out []string
	for _, a := range r.applied {
		out = append(out, string(a.Kind)+" "+string(rune('0'+a.Broker)))
	}
	r.applied = nil
	return out
}

// newReporting is a controller over a reportingCluster whose followers
// are level with the leader at 5, reported a moment ago, after a first
// pass.
func newReporting(t *testing.T) (*reportingCluster, *Controller, *logtest.Clock) {
	t.Helper()
	clk := logtest.NewClock(time.Unix(1_000_000, 0))
	r := &reportingCluster{epoch: 1, leaderEnd: 5, ends: map[int]uint64{2: 5, 3: 5},
		at: map[int]time.Time{2: clk.Now(), 3: clk.Now()}, active3: true}
	k, err := New(r, Config{FailoverAfter: 3 * time.Second})
	require.NoError(t, err)
	k.now = clk.Now
	clk.Advance(DefaultInterval)
	_, err = k.Step()
	require.NoError(t, err)
	require.Empty(t, r.kinds())
	return r, k, clk
}

// report is follower id's report of end reaching the controller, a
// millisecond from now.
func (r *reportingCluster) report(clk *logtest.Clock, id int, end uint64) {
	clk.Advance(time.Millisecond)
	r.ends[id], r.at[id] = end, clk.Now()
}

// passes makes n passes, DefaultInterval apart.
func passes(t *testing.T, k *Controller, clk *logtest.Clock, n int) {
	t.Helper()
	for range n {
		clk.Advance(DefaultInterval)
		_, err := k.Step()
		require.NoError(t, err)
	}
}

// The controller decides about a replica only on a report that reached
// it after its last decision about it (docs/phase-7-processes.md
// § Failure detection). A write lands on the leader and its followers;
// the followers' last reports, from before it, show them behind. Seeing
// a follower behind, the controller decides to wait for the write in
// flight: passes on those same reports catch nobody up, however many.
// The next reports show them level: nothing to do. A follower whose next
// report still shows it at that log end missed the write, and is caught
// up — once: passes on that report after the catch-up do nothing again.
func TestControllerDecidesOnlyOnNewerReports(t *testing.T) {
	r, k, clk := newReporting(t)
	r.leaderEnd = 8 // a write, acknowledged by both followers
	passes(t, k, clk, 10)
	require.Empty(t, r.kinds(), "no catch-up on reports older than the write")

	r.report(clk, 2, 8)
	r.report(clk, 3, 5) // 3 missed it
	passes(t, k, clk, 1)
	require.Equal(t, []string{"catch-up 3"}, r.kinds(), "a newer report still behind: caught up")
	passes(t, k, clk, 10)
	require.Empty(t, r.kinds(), "not again on the report the catch-up was decided on")

	r.report(clk, 3, 8)
	passes(t, k, clk, 3)
	require.Empty(t, r.kinds())
}

// A change of a replica's metadata is a decision too: after a new leader
// epoch, or a change of the active set, reports from before it are not
// decided on.
func TestControllerStaleAfterMetadataChange(t *testing.T) {
	r, k, clk := newReporting(t)
	r.active3 = false // deactivated: a recovery is due, on a report that follows
	passes(t, k, clk, 5)
	require.Empty(t, r.kinds(), "no recovery on a report from before the deactivation")
	r.report(clk, 3, 5)
	passes(t, k, clk, 1)
	require.Equal(t, []string{"recover 3"}, r.kinds())

	r.active3, r.epoch, r.leaderEnd = true, 2, 9
	r.report(clk, 2, 5)
	passes(t, k, clk, 5)
	require.Empty(t, r.kinds(), "no catch-up on reports from before the new epoch")
}

// A recovery refused because the replica's broker has not yet applied the
// epoch it was planned at (a node back from a cut, replaying its Raft log)
// is tried again after EpochAheadRetry, not after the full back-off of
// max(FailoverAfter, 1 s): the node is active again within moments of
// catching up.
func TestControllerEpochAheadRetriedSoon(t *testing.T) {
	r, k, clk := newReporting(t)
	r.active3 = false
	passes(t, k, clk, 1)
	r.err = &cluster.EpochAheadError{Topic: "t", Partition: 0, Epoch: 0, Asked: 1}
	r.report(clk, 3, 5)
	passes(t, k, clk, 1)
	require.Equal(t, []string{"recover 3"}, r.kinds())
	r.err = nil
	r.report(clk, 3, 5)
	clk.Advance(EpochAheadRetry)
	passes(t, k, clk, 1)
	require.Equal(t, []string{"recover 3"}, r.kinds(), "tried again after EpochAheadRetry")
}

// A pass whose only actions are catch-ups of followers trailing a write in
// flight is quiet — the controller passes over them, and under writes to
// many partitions there is one almost every pass — while one with a
// follower stuck at the same log end is not.
func TestPassQuietWithFollowersMoving(t *testing.T) {
	r, k, clk := newReporting(t)
	r.leaderEnd, r.ends[2], r.ends[3] = 7, 6, 7
	clk.Advance(DefaultInterval)
	r.at[2], r.at[3] = clk.Now(), clk.Now()
	out, quiet, err := k.pass()
	require.NoError(t, err)
	require.Empty(t, out, "a follower seen behind for the first time is moving")
	require.Empty(t, r.kinds())
	require.True(t, quiet)

	clk.Advance(DefaultInterval)
	r.at[2], r.at[3] = clk.Now(), clk.Now()
	out, quiet, err = k.pass()
	require.NoError(t, err)
	require.Equal(t, []string{"catch-up 2"}, r.kinds(), "at the same log end again it is stuck")
	require.Len(t, out, 1)
	require.False(t, quiet)
}
