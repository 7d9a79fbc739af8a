package controller

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
)

// fixture is a three-broker cluster with a one-partition topic "t" of
// replication factor 3 (leader 1, the preferred replica), and a controller
// on a fake clock.
type fixture struct {
	cl    *cluster.Cluster
	k     *Controller
	clock *logtest.Clock
	reg   *prometheus.Registry
	prod  *cluster.Producer
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	cl := threeBrokers(t, 1)
	st, err := cl.Status("t", 0)
	require.NoError(t, err)
	require.Equal(t, 1, st.Leader)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	k, err := New(cl, cfg)
	require.NoError(t, err)
	clk := logtest.NewClock(time.Unix(1_000_000, 0))
	k.now = clk.Now
	return &fixture{cl: cl, k: k, clock: clk, reg: reg, prod: cluster.NewProducer(cl, "t")}
}

func (f *fixture) send(t *testing.T, n int) error {
	t.Helper()
	var last error
	for range n {
		_, last = f.prod.Send(nil, []byte("v"))
	}
	return last
}

func (f *fixture) status(t *testing.T) cluster.PartitionStatus {
	t.Helper()
	st, err := f.cl.Status("t", 0)
	require.NoError(t, err)
	return st
}

// step makes one pass and lists the kinds of its outcomes, requiring each
// succeeded.
func (f *fixture) step(t *testing.T) []cluster.ActionKind {
	t.Helper()
	out, err := f.k.Step()
	require.NoError(t, err)
	var ks []cluster.ActionKind
	for _, o := range out {
		require.NoError(t, o.Err, "%s %s", o.Action.Kind, o.Action.Reason)
		ks = append(ks, o.Action.Kind)
	}
	return ks
}

// lagFollower leaves broker 3 behind broker 1 by n records, as a crash
// between the leader's fsync and the follower's does: broker 3 stops, n
// writes fail on it (the leader and broker 2 keep them), broker 3 starts.
func (f *fixture) lagFollower(t *testing.T, n int) {
	t.Helper()
	require.NoError(t, f.cl.StopBroker(3))
	require.Error(t, f.send(t, n))
	_, err := f.cl.StartBroker(3)
	require.NoError(t, err)
	st := f.status(t)
	require.Equal(t, uint64(n), *st.Replicas[2].Lag)
}

// histogramCount is the number of observations of the histogram name.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// docs/design.md § The controller: the first pass catches up every lagging
// active follower, and the cluster is not ready before it.
func TestFirstPassCatchesUpAndMakesReady(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: 3 * time.Second, Rebalance: true})
	require.NoError(t, f.send(t, 2))
	f.lagFollower(t, 3)
	require.Error(t, f.send(t, 1), "a lagging active follower refuses writes")

	ready, reasons := f.k.Ready()
	require.False(t, ready)
	require.NotEmpty(t, reasons)

	require.Equal(t, []cluster.ActionKind{cluster.ActionCatchUp}, f.step(t))
	st := f.status(t)
	require.Equal(t, uint64(0), *st.Replicas[2].Lag)
	require.Equal(t, []int{1, 2, 3}, st.Active)
	require.NoError(t, f.send(t, 1), "writes resume with no manual call")
	ready, reasons = f.k.Ready()
	require.True(t, ready, "%v", reasons)
	require.Equal(t, 1.0, testutil.ToFloat64(f.k.metrics.actions.WithLabelValues("catch-up", "ok")))
}

// A follower that lags only because a write is in flight is left alone
// after the first pass; one that has not moved between two passes is
// caught up.
func TestCatchUpWaitsForAStuckFollower(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: 3 * time.Second})
	f.step(t)
	f.lagFollower(t, 2)
	require.Empty(t, f.step(t), "first sight of the lag: maybe a write in flight")
	require.Equal(t, []cluster.ActionKind{cluster.ActionCatchUp}, f.step(t))
	require.NoError(t, f.send(t, 1))
}

// docs/design.md § The controller: a leader unavailable for
// FailoverAfter fails over, not before; the epoch moves; the returning
// broker is recovered, then leadership moves back to it, the preferred
// replica.
func TestFailoverRecoverAndRebalance(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: 3 * time.Second, Rebalance: true})
	require.NoError(t, f.send(t, 3))
	f.step(t)
	epoch := f.status(t).LeaderEpoch

	require.NoError(t, f.cl.StopBroker(1))
	require.Empty(t, f.step(t))
	ready, reasons := f.k.Ready()
	require.False(t, ready)
	require.NotEmpty(t, reasons)
	f.clock.Advance(2900 * time.Millisecond)
	require.Empty(t, f.step(t), "2.9s < 3s: no failover yet")
	f.clock.Advance(100 * time.Millisecond)
	require.Equal(t, []cluster.ActionKind{cluster.ActionFailover}, f.step(t))
	st := f.status(t)
	require.Equal(t, 2, st.Leader)
	require.Equal(t, epoch+1, st.LeaderEpoch)
	require.NoError(t, f.send(t, 2))
	f.step(t)
	ready, reasons = f.k.Ready()
	require.True(t, ready, "%v", reasons)
	require.Equal(t, uint64(1), histogramCount(t, f.reg, "pystream_controller_leader_recovery_seconds"))

	_, err := f.cl.StartBroker(1)
	require.NoError(t, err)
	require.Equal(t, []cluster.ActionKind{cluster.ActionRecover}, f.step(t))
	require.Equal(t, []int{1, 2, 3}, f.status(t).Active)
	require.Equal(t, []cluster.ActionKind{cluster.ActionMoveLeader}, f.step(t))
	st = f.status(t)
	require.Equal(t, 1, st.Leader, "leadership back on the preferred replica")
	require.Equal(t, epoch+2, st.LeaderEpoch)
	require.NoError(t, f.send(t, 1))
	require.Empty(t, f.step(t), "nothing left to do")
}

// With rebalancing off, the recovered preferred replica stays a follower.
func TestNoRebalanceWhenOff(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: time.Second})
	f.step(t)
	require.NoError(t, f.cl.StopBroker(1))
	f.step(t)
	f.clock.Advance(time.Second)
	require.Equal(t, []cluster.ActionKind{cluster.ActionFailover}, f.step(t))
	_, err := f.cl.StartBroker(1)
	require.NoError(t, err)
	require.Equal(t, []cluster.ActionKind{cluster.ActionRecover}, f.step(t))
	require.Empty(t, f.step(t))
	require.Equal(t, 2, f.status(t).Leader)
}

// An active follower unavailable for FailoverAfter leaves the active set,
// so writes resume without it.
func TestUnavailableFollowerLeavesActiveSet(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: time.Second})
	f.step(t)
	require.NoError(t, f.cl.StopBroker(3))
	require.Error(t, f.send(t, 1))
	f.step(t)
	f.clock.Advance(time.Second)
	require.Equal(t, []cluster.ActionKind{cluster.ActionDeactivate}, f.step(t))
	require.Equal(t, []int{1, 2}, f.status(t).Active)
	require.NoError(t, f.send(t, 1))
	require.Equal(t, 1.0, testutil.ToFloat64(f.k.metrics.inactive))
}

// docs/design.md § The controller: with FailoverAfter 0 the controller
// changes no metadata — no failover, no shrink, no recovery, no leader
// move — however long a broker stays down. It still catches up.
func TestManualModeChangesNoMetadata(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: 0, Rebalance: true})
	require.NoError(t, f.send(t, 1))
	f.lagFollower(t, 2)
	require.Equal(t, []cluster.ActionKind{cluster.ActionCatchUp}, f.step(t))
	before := f.cl.Metadata()
	require.NoError(t, f.cl.StopBroker(1))
	f.clock.Advance(time.Hour)
	require.Empty(t, f.step(t))
	require.NoError(t, f.cl.StopBroker(3))
	f.clock.Advance(time.Hour)
	require.Empty(t, f.step(t))
	require.Equal(t, before, f.cl.Metadata())
	ready, _ := f.k.Ready()
	require.False(t, ready, "a partition without a leader is not ready")
	require.Equal(t, 1.0, testutil.ToFloat64(f.k.metrics.notReady), "one partition not ready")
}

// Automatic healing switched off at run time is manual mode from the next
// pass on, and switched on again it fails over a leader that has been
// down since before the switch: the delay counts from when the controller
// first saw the broker unavailable (docs/design.md § The controller).
func TestSetFailoverAfterAtRunTime(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: time.Second, Rebalance: true})
	f.step(t)
	require.NoError(t, f.k.SetFailoverAfter(0))
	require.Zero(t, f.k.FailoverAfter())
	before := f.cl.Metadata()
	require.NoError(t, f.cl.StopBroker(1))
	f.step(t)
	f.clock.Advance(time.Hour)
	require.Empty(t, f.step(t), "manual mode: no failover")
	require.Equal(t, before, f.cl.Metadata())

	require.NoError(t, f.k.SetFailoverAfter(time.Second))
	require.Equal(t, time.Second, f.k.FailoverAfter())
	require.Contains(t, f.step(t), cluster.ActionFailover, "down for an hour already")
	require.NotEqual(t, 1, f.status(t).Leader)
	require.ErrorIs(t, f.k.SetFailoverAfter(-time.Second), ErrNegativeDelay)
}

// Run makes passes until its context ends; Wake makes one at once.
func TestRunStopsWithContext(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: time.Second, Interval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.k.Run(ctx)
	}()
	require.Eventually(t, func() bool { ready, _ := f.k.Ready(); return ready }, 5*time.Second, time.Millisecond)
	f.lagFollower(t, 1)
	require.Eventually(t, func() bool {
		f.k.Wake()
		f.k.Wake() // a second wake while one is pending is dropped, not blocked on
		return f.send(t, 1) == nil
	}, 5*time.Second, 5*time.Millisecond)
	cancel()
	<-done
}

// New refuses a negative delay.
func TestNewRefusesNegativeDelay(t *testing.T) {
	cl, err := cluster.Open(t.TempDir())
	require.NoError(t, err)
	defer cl.Close()
	_, err = New(cl, Config{FailoverAfter: -time.Second})
	require.ErrorIs(t, err, ErrNegativeDelay)
}

// A deleted topic is no longer planned, and ForgetTopic drops what the
// controller remembered of it, so that a topic created again under the
// name starts afresh (docs/design.md § Deleting a topic).
func TestDeletedTopicIsForgotten(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: time.Hour})
	require.NoError(t, f.cl.StopBroker(1))
	f.step(t)
	f.k.mu.Lock()
	require.Contains(t, f.k.leaderLost, partKey{"t", 0})
	f.k.diverged[replicaKey{partKey{"t", 0}, 2}] = true
	f.k.mu.Unlock()

	_, err := f.cl.DeleteTopic("t")
	require.NoError(t, err)
	f.k.ForgetTopic("t")
	f.k.mu.Lock()
	require.Empty(t, f.k.leaderLost)
	require.Empty(t, f.k.diverged)
	f.k.mu.Unlock()
	require.Empty(t, f.step(t))
	ready, reasons := f.k.Ready()
	require.True(t, ready, "%v", reasons)
}

// docs/design.md § The controller's rules: a follower whose catch-ups keep
// failing (here every write to its log fails) is stuck; the cluster is not
// ready while it holds every write up, and after FailoverAfter it leaves the
// active set, so writes resume without it — Kafka's replica.lag.time.max.ms.
func TestStuckFollowerLeavesActiveSet(t *testing.T) {
	cl, ffs := faultyCluster(t)
	k, err := New(cl, Config{FailoverAfter: 3 * time.Second})
	require.NoError(t, err)
	clk := logtest.NewClock(time.Unix(1_000_000, 0))
	k.now = clk.Now
	prod := cluster.NewProducer(cl, "t")
	_, err = prod.Send(nil, []byte("a"))
	require.NoError(t, err)
	k.Step()

	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpWrite && strings.Contains(path, "broker-000003") {
			return logtest.ErrInjected
		}
		return nil
	})
	_, err = prod.Send(nil, []byte("b"))
	require.Error(t, err, "broker 3 refuses the write")
	for range 3 {
		_, err := k.Step()
		require.NoError(t, err)
		clk.Advance(time.Second)
	}
	ready, reasons := k.Ready()
	require.False(t, ready)
	require.Contains(t, strings.Join(reasons, "; "), "follower 3 is stuck at log end 1 behind the leader's 2")
	_, err = k.Step()
	require.NoError(t, err)
	st, err := cl.Status("t", 0)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, st.Active, "stuck for 3 s: out of the active set")
	_, err = prod.Send(nil, []byte("c"))
	require.NoError(t, err, "writes resume without it")
	_, err = k.Step()
	require.NoError(t, err)
	ready, reasons = k.Ready()
	require.True(t, ready, "%v", reasons)
}

// A controller decision its operation refuses — here a failover whose two
// candidates hold different records at one offset — is journaled once, as
// refused with the reason, and not retried until max(FailoverAfter, 1 s)
// has passed; the same refusal again is not journaled again.
func TestRefusedDecisionJournaledOnceAndBackedOff(t *testing.T) {
	f := newFixture(t, Config{FailoverAfter: time.Second})
	require.NoError(t, f.send(t, 2))
	f.step(t)
	root := f.cl.Root()
	for id, payload := range map[int]string{2: "two", 3: "three"} {
		require.NoError(t, f.cl.StopBroker(id))
		l, err := segment.Open(cluster.ReplicaDir(root, id, "t", 0), segment.Options{MustExist: true})
		require.NoError(t, err)
		require.NoError(t, l.AppendRecords([]log.Record{{Offset: 2, Timestamp: 7, Payload: []byte(payload)}}))
		require.NoError(t, l.Close())
		_, err = f.cl.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, f.cl.StopBroker(1))
	f.clock.Advance(500 * time.Millisecond)
	_, err := f.k.Step()
	require.NoError(t, err)
	f.clock.Advance(time.Second)

	refusals := func() []cluster.JournalEntry {
		entries, err := f.cl.Journal(0, 1000)
		require.NoError(t, err)
		var out []cluster.JournalEntry
		for _, e := range entries {
			if e.Phase == cluster.PhaseRefused {
				out = append(out, e)
			}
		}
		return out
	}
	out, err := f.k.Step()
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, cluster.ActionFailover, out[0].Action.Kind)
	require.ErrorIs(t, out[0].Err, cluster.ErrReplicaDivergence)
	got := refusals()
	require.Len(t, got, 1)
	require.Equal(t, cluster.EventFailover, got[0].Event)
	require.Contains(t, got[0].Reason, "leader 1 unavailable for 1.0s")
	require.Contains(t, got[0].Error, "diverges")

	out, err = f.k.Step()
	require.NoError(t, err)
	require.Empty(t, out, "backing off: not tried again at once")
	f.clock.Advance(time.Second)
	out, err = f.k.Step()
	require.NoError(t, err)
	require.Len(t, out, 1, "tried again after the back-off")
	require.Len(t, refusals(), 1, "the same refusal is journaled once")
}

// Ready answers while a pass waits behind an operation that holds a
// partition (here a catch-up stalled in its write): the controller reads
// every status before it takes the lock Ready needs.
func TestReadyDoesNotWaitForAPass(t *testing.T) {
	cl, ffs := faultyCluster(t)
	k, err := New(cl, Config{})
	require.NoError(t, err)
	_, err = k.Step()
	require.NoError(t, err)
	// Broker 3 misses a write while stopped, and lags when it returns.
	require.NoError(t, cl.StopBroker(3))
	_, err = cluster.NewProducer(cl, "t").Send(nil, []byte("a"))
	require.Error(t, err)
	_, err = cl.StartBroker(3)
	require.NoError(t, err)
	onBroker3 := func(op logtest.Op, path string) bool {
		return op == logtest.OpWrite && strings.Contains(path, "broker-000003")
	}
	release, stalled := make(chan struct{}), make(chan struct{}, 1)
	ffs.SetFault(func(op logtest.Op, path string) error {
		if onBroker3(op, path) {
			select {
			case stalled <- struct{}{}:
			default:
			}
			<-release
		}
		return nil
	})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = cl.CatchUp("t", 0, 3) })
	<-stalled // the catch-up holds the partition, stalled in its write
	wg.Go(func() { _, _ = k.Step() })
	// Give the pass time to reach the stalled partition (a pass that held
	// Ready's lock would hold it from then on).
	time.Sleep(200 * time.Millisecond)
	answered := make(chan struct{})
	go func() {
		k.Ready()
		close(answered)
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Error("Ready waited for the pass stuck behind the partition")
	}
	close(release)
	wg.Wait()
}

// faultyCluster is three brokers whose replica logs live on a FaultFS, and a
// one-partition topic "t" on all three.
func faultyCluster(t *testing.T) (*cluster.Cluster, *logtest.FaultFS) {
	t.Helper()
	ffs := logtest.NewFaultFS(nil)
	cl, err := cluster.OpenWithOptions(t.TempDir(), cluster.Options{Broker: cluster.BrokerOptions{FS: ffs}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	for id := 1; id <= 3; id++ {
		_, err := cl.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, cl.CreateTopic("t", 1, 3))
	return cl, ffs
}

// A pass's length sets the rest before the next: ten times as long for
// each processor its status readers keep busy, at most a second, so that
// passes over many partitions take at most an eleventh of the CPU; a short
// pass leaves Interval alone.
func TestPassRestBoundsTheControllersShare(t *testing.T) {
	for _, tt := range []struct {
		spent time.Duration
		cores int
		want  time.Duration
	}{
		{0, 1, 0},
		{time.Millisecond, 1, 10 * time.Millisecond},
		{20 * time.Millisecond, 1, 200 * time.Millisecond},
		{20 * time.Millisecond, 2, 400 * time.Millisecond},
		{time.Millisecond, 8, 80 * time.Millisecond},
		{time.Millisecond, 0, 10 * time.Millisecond},
		{100 * time.Millisecond, 1, time.Second},
		{60 * time.Millisecond, 2, time.Second},
		{5 * time.Second, 8, time.Second},
	} {
		if got := passRest(tt.spent, tt.cores); got != tt.want {
			t.Errorf("passRest(%v, %d) = %v, want %v", tt.spent, tt.cores, got, tt.want)
		}
	}
	require.Equal(t, min(statusReaders, runtime.GOMAXPROCS(0)), passCores())
}
