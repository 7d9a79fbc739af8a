package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// crashBrokers is how many brokers every crash simulation runs.
const crashBrokers = 3

// openCrashSim opens a cluster at <base>/cluster on fsys with brokers
// 1..crashBrokers started. The cluster root is new, so its creation is part
// of what a crash must keep.
func openCrashSim(t *testing.T, base string, fsys *logtest.FaultFS, c *logtest.CrashFS, edit ...func(*Options)) *Cluster {
	t.Helper()
	opts := Options{FS: c}
	if fsys != nil {
		opts.FS = fsys
	}
	for _, e := range edit {
		e(&opts)
	}
	cl, err := OpenWithOptions(filepath.Join(base, "cluster"), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	for id := 1; id <= crashBrokers; id++ {
		_, err := cl.StartBroker(id)
		require.NoError(t, err)
	}
	return cl
}

// openCrashed opens the crashed copy of a cluster (made by Crash(dst)) on
// the real file system, with brokers 1..crashBrokers registered at its root.
func openCrashed(t *testing.T, dst string) *Cluster {
	t.Helper()
	return openCrashedWithOptions(t, dst, Options{})
}

// openCrashedWithOptions is openCrashed with explicit cluster options.
func openCrashedWithOptions(t *testing.T, dst string, opts Options) *Cluster {
	t.Helper()
	root := filepath.Join(dst, "cluster")
	cl, err := OpenWithOptions(root, opts)
	require.NoError(t, err, "the crashed cluster opens")
	t.Cleanup(func() { _ = cl.Close() })
	for id := 1; id <= crashBrokers; id++ {
		b, err := OpenBrokerWithOptions(id, root, cl.opts.Broker)
		require.NoError(t, err)
		require.NoError(t, cl.RegisterBroker(b))
	}
	return cl
}

// crashInto writes the image of a power loss now into a fresh directory.
func crashInto(t *testing.T, c *logtest.CrashFS) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	return dst
}

// TestCrashSimClusterKeepsAcknowledgedRecords pins the promise of
// docs/phase-4-replication.md § Leader writes and synchronous replication
// under a simulated power loss: a record is acknowledged only once every
// active replica holds it durably, and cluster.meta records every decision
// before it is reported. After a crash, the crashed copy reopens with its
// brokers, the topic and its placement, and every acknowledged record,
// byte-identical, on every active replica. It holds whether the replicas'
// appends share syncs of the file system (the default,
// docs/design.md § One sync for many partitions), each fsyncs its file,
// or each broker's go through its commit journal, which the crashed
// copy's brokers replay when they open
// (docs/design.md § The commit journal).
func TestCrashSimClusterKeepsAcknowledgedRecords(t *testing.T) {
	t.Run("shared syncs", func(t *testing.T) { crashSimKeepsAcknowledged(t, syncShared) })
	t.Run("one fsync per file", func(t *testing.T) { crashSimKeepsAcknowledged(t, syncPerFile) })
	t.Run("commit journal", func(t *testing.T) { crashSimKeepsAcknowledged(t, syncJournal) })
}

// How the replicas of a crash simulation make their appends durable.
type syncMode int

const (
	syncShared syncMode = iota
	syncPerFile
	syncJournal
)

func crashSimKeepsAcknowledged(t *testing.T, mode syncMode) {
	const partitions, sequential, writers, perWriter = 3, 9, 4, 5
	base := t.TempDir()
	c, err := logtest.NewCrashFS(base)
	require.NoError(t, err)
	cl := openCrashSim(t, base, nil, c, func(o *Options) {
		switch mode {
		case syncPerFile:
			o.Broker.Sync = durable.File.Sync
		case syncJournal:
			o.Broker.Journal = true
		}
	})
	if mode != syncJournal {
		require.Equal(t, mode == syncShared, cl.SyncsShared())
	}
	require.NoError(t, cl.CreateTopic("orders", partitions, crashBrokers))
	p := NewProducer(cl, "orders")

	want := make([][]log.Record, partitions)
	var mu sync.Mutex // guards want while writers run
	keep := func(r SendResult, payload []byte) {
		mu.Lock()
		defer mu.Unlock()
		want[r.Partition] = append(want[r.Partition], log.Record{Offset: r.Offset, Timestamp: r.Timestamp, Payload: payload})
	}
	for i := range sequential {
		payload := []byte(fmt.Sprintf("order %d", i))
		r, err := p.Send([]byte(fmt.Sprintf("key-%d", i)), payload)
		require.NoError(t, err)
		keep(r, payload)
	}
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var msgs []topic.Message
			for i := range perWriter {
				msgs = append(msgs, topic.Message{Key: []byte(fmt.Sprintf("w%d-%d", w, i)), Payload: []byte(fmt.Sprintf("batch %d/%d", w, i))})
			}
			// Half the writers send one by one, half in a batch.
			if w%2 == 0 {
				for _, m := range msgs {
					r, err := p.Send(m.Key, m.Payload)
					if err != nil {
						errs <- err
						return
					}
					keep(r, m.Payload)
				}
				return
			}
			rs, err := p.SendBatch(msgs)
			if err != nil {
				errs <- err
				return
			}
			for i, r := range rs {
				keep(r, msgs[i].Payload)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for part := range want {
		slices.SortFunc(want[part], func(a, b log.Record) int { return int(a.Offset) - int(b.Offset) })
	}
	meta := cl.Metadata()

	dst := crashInto(t, c)
	crashedRoot := filepath.Join(dst, "cluster")
	if mode == syncJournal {
		// The journals alone hold the records: no checkpoint ran, so no
		// segment file was synced with any of them in it, and only the
		// brokers' replay at open brings them back.
		for part := range partitions {
			for id := 1; id <= crashBrokers; id++ {
				require.Empty(t, readAll(t, replicaPath(crashedRoot, id, "orders", part)),
					"partition %d on broker %d before replay", part, id)
			}
		}
	}
	{
		// Before anything is registered: cluster.meta alone knows the brokers.
		bare, err := Open(crashedRoot)
		require.NoError(t, err)
		require.Equal(t, meta, bare.Metadata(), "cluster.meta survived whole")
		require.NoError(t, bare.Close())
	}
	crashed := openCrashed(t, dst)
	require.Equal(t, meta, crashed.Metadata(), "registering known brokers changes nothing")
	info, err := crashed.Topic("orders")
	require.NoError(t, err)
	require.Equal(t, TopicInfo{Name: "orders", PartitionCount: partitions, ReplicationFactor: crashBrokers}, info)
	total := 0
	for part := range partitions {
		total += len(want[part])
		pm := meta.Topics["orders"].Partitions[part]
		require.Len(t, pm.Active, crashBrokers)
		var first []byte
		for _, id := range pm.Active {
			path := replicaPath(crashedRoot, id, "orders", part)
			if len(want[part]) == 0 {
				require.Empty(t, readAll(t, path))
				continue
			}
			require.Equal(t, want[part], readAll(t, path), "partition %d on broker %d", part, id)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			if first == nil {
				first = raw
			}
			require.Equal(t, first, raw, "partition %d: broker %d's file is byte-identical to the leader's", part, id)
		}
		hw, err := crashed.HighWatermark("orders", part)
		require.NoError(t, err)
		require.Equal(t, uint64(len(want[part])), hw, "partition %d", part)
		if len(want[part]) > 0 {
			got, err := crashed.ReadCommitted("orders", part, 0, len(want[part])+1)
			require.NoError(t, err)
			require.Equal(t, want[part], got, "partition %d served after the crash", part)
		}
	}
	require.Equal(t, sequential+writers*perWriter, total)
}

// TestCrashSimClusterFailoverIsDurable: Failover writes the new leadership to
// cluster.meta before it returns
// (docs/phase-5-failover.md § Candidate selection and safety checks). A crash
// right after it returns reopens with the new leader recorded and the old one
// out of the active set, and the new leader still holds every acknowledged
// record.
func TestCrashSimClusterFailoverIsDurable(t *testing.T) {
	base := t.TempDir()
	c, err := logtest.NewCrashFS(base)
	require.NoError(t, err)
	cl := openCrashSim(t, base, nil, c)
	require.NoError(t, cl.CreateTopic("payments", 1, crashBrokers))
	sent := sendN(t, NewProducer(cl, "payments"), "k", 4)
	oldLeader := cl.Metadata().Topics["payments"].Partitions[0].Leader
	require.NoError(t, cl.StopBroker(oldLeader))
	res, err := cl.Failover("payments", 0)
	require.NoError(t, err)
	require.NotEqual(t, oldLeader, res.NewLeaderBrokerID)

	crashed := openCrashed(t, crashInto(t, c))
	tm, ok := crashed.Metadata().Topics["payments"]
	require.True(t, ok, "the topic survived")
	require.Len(t, tm.Partitions, 1)
	pm := tm.Partitions[0]
	require.Equal(t, res.NewLeaderBrokerID, pm.Leader, "the new leader is durable")
	require.Contains(t, pm.Followers(), oldLeader)
	require.Equal(t, res.Active, pm.Active)
	require.NotContains(t, pm.Active, oldLeader)
	got, err := crashed.ReadCommitted("payments", 0, 0, len(sent)+1)
	require.NoError(t, err)
	require.Len(t, got, len(sent))
	for i, r := range sent {
		require.Equal(t, r.Offset, got[i].Offset)
		require.Equal(t, r.Timestamp, got[i].Timestamp)
		require.Equal(t, []byte{byte('a' + i)}, got[i].Payload, "sendN's payload")
	}
}

// TestCrashSimClusterCreateTopicAtEveryStep crashes before each file-system
// operation of CreateTopic in turn (docs/phase-4-replication.md § Placement:
// creation is written to cluster.meta before it is reported;
// docs/design.md § Invariants, 2: a crash at any point of creation leaves
// either no topic or a complete one). Every crashed copy reopens without
// error; it has no topic, and then the same CreateTopic succeeds on it, or
// the whole topic with every replica's empty log.
func TestCrashSimClusterCreateTopicAtEveryStep(t *testing.T) {
	const partitions = 1
	// The cluster and its registered brokers, made once and copied into
	// every run: only CreateTopic's steps are crashed, and what was made
	// before it counts as durable (the first test covers that part).
	template := t.TempDir()
	setup := openCrashSim(t, template, logtest.NewFaultFS(nil), nil)
	require.NoError(t, setup.Close())
	fresh := func(t *testing.T) string {
		base := t.TempDir()
		require.NoError(t, os.CopyFS(base, os.DirFS(template)))
		return base
	}

	counter := logtest.NewFaultFS(nil)
	cl := openCrashSim(t, fresh(t), counter, nil)
	before := counter.Total()
	require.NoError(t, cl.CreateTopic("events", partitions, crashBrokers))
	want := cl.Metadata().Topics["events"]
	steps := counter.Total() - before
	require.Positive(t, steps)

	var sawNone, sawWhole atomic.Bool
	// Step steps+1 is the crash right after CreateTopic returned. The runs
	// are independent, so they run in parallel; the group returns when all
	// are done.
	t.Run("steps", func(t *testing.T) {
		for n := 1; n <= steps+1; n++ {
			t.Run(fmt.Sprint("before step ", n), func(t *testing.T) {
				t.Parallel()
				base := fresh(t)
				c, err := logtest.NewCrashFS(base)
				require.NoError(t, err)
				ffs := logtest.NewFaultFS(c)
				cl := openCrashSim(t, base, ffs, c)
				dst := filepath.Join(t.TempDir(), "crashed")
				seen := 0
				ffs.SetFault(func(logtest.Op, string) error {
					seen++
					if seen == n {
						require.NoError(t, c.Crash(dst))
					}
					return nil
				})
				require.NoError(t, cl.CreateTopic("events", partitions, crashBrokers))
				ffs.SetFault(nil)
				require.Equal(t, steps, seen, "the run takes the steps counted")
				if n == steps+1 {
					require.NoError(t, c.Crash(dst))
				}
				require.DirExists(t, dst, "the crash happened")

				crashed := openCrashedWithOptions(t, dst, Options{FS: logtest.NoSyncFS{FS: durable.OS}})
				got, ok := crashed.Metadata().Topics["events"]
				if !ok {
					sawNone.Store(true)
					require.Empty(t, crashed.Topics())
					require.NoError(t, crashed.CreateTopic("events", partitions, crashBrokers), "no topic: creating it again works")
					return
				}
				sawWhole.Store(true)
				require.Equal(t, want, got)
				for part := range partitions {
					st, err := crashed.Status("events", part)
					require.NoError(t, err)
					require.Len(t, st.Replicas, crashBrokers)
					for _, rs := range st.Replicas {
						require.NoError(t, rs.Err, "partition %d broker %d", part, rs.BrokerID)
						require.NotNil(t, rs.LogEnd, "partition %d broker %d: replica log present", part, rs.BrokerID)
						require.Zero(t, *rs.LogEnd)
					}
				}
			})
		}
	})
	require.True(t, sawNone.Load(), "an early crash leaves no topic")
	require.True(t, sawWhole.Load(), "the crash after CreateTopic returned leaves the whole topic")
}

// TestCrashSimClusterRestartAfterProcessCrash kills a cluster's first life
// (topic creation, a send, a failover) before each of its file-system
// operations in turn, the way a process dies: what it wrote stays in the page
// cache. A second life opens the cluster, starts every broker and sends;
// then the power fails. The crashed copy must show the leadership the second
// life acted on and every record it acknowledged. In a second variant the
// second life only opens the cluster and reports its metadata (starting a
// broker would sync the root as a side effect): the crashed copy must hold
// exactly what it reported.
func TestCrashSimClusterRestartAfterProcessCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	firstLife := func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys})
		if err != nil {
			return
		}
		defer func() { _ = cl.Close() }() // the process is dead; its errors are moot
		for id := 1; id <= crashBrokers; id++ {
			if _, err := cl.StartBroker(id); err != nil {
				return
			}
		}
		if err := cl.CreateTopic("orders", 1, crashBrokers); err != nil {
			return
		}
		if _, err := NewProducer(cl, "orders").Send(nil, []byte("first")); err != nil {
			return
		}
		if err := cl.StopBroker(cl.Metadata().Topics["orders"].Partitions[0].Leader); err != nil {
			return
		}
		_, _ = cl.Failover("orders", 0)
	}
	counter := logtest.NewFaultFS(nil)
	firstLife(counter, filepath.Join(t.TempDir(), "cluster"))
	steps := counter.Total()
	require.Greater(t, steps, 20)

	for n := 1; n <= steps+1; n++ {
		for _, metadataOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("dies before step %d/metadata only=%v", n, metadataOnly), func(t *testing.T) {
				t.Parallel() // independent runs that mostly wait for fsyncs
				restartAfterProcessCrash(t, firstLife, n, metadataOnly)
			})
		}
	}
}

// restartAfterProcessCrash is one run of
// TestCrashSimClusterRestartAfterProcessCrash: the first life dies before
// step n.
func restartAfterProcessCrash(t *testing.T, firstLife func(durable.FS, string), n int, metadataOnly bool) {
	base := t.TempDir()
	root := filepath.Join(base, "cluster")
	c, err := logtest.KillBefore(base, n, func(fsys durable.FS) { firstLife(fsys, root) })
	require.NoError(t, err)

	cl, err := OpenWithOptions(root, Options{FS: c})
	require.NoError(t, err, "the second life opens what the first left")
	if metadataOnly {
		reported := cl.Metadata()
		require.NoError(t, cl.Close())
		crashed, err := OpenWithOptions(filepath.Join(crashInto(t, c), "cluster"), Options{FS: logtest.NoSyncFS{FS: durable.OS}})
		require.NoError(t, err)
		require.Equal(t, reported, crashed.Metadata(), "the metadata the second life reported is durable")
		return
	}
	for id := 1; id <= crashBrokers; id++ {
		_, err := cl.StartBroker(id)
		require.NoError(t, err)
	}
	if _, ok := cl.Metadata().Topics["orders"]; !ok {
		require.NoError(t, cl.CreateTopic("orders", 1, crashBrokers))
	}
	pm := cl.Metadata().Topics["orders"].Partitions[0]
	var acked []log.Record
	// The first life may have died between the leader's append
	// and its followers': catch them up, as an operator would.
	for _, id := range pm.Active {
		if id != pm.Leader {
			_, err := cl.CatchUp("orders", 0, id)
			require.NoError(t, err)
		}
	}
	res, err := NewProducer(cl, "orders").Send(nil, []byte("second"))
	require.NoError(t, err)
	acked = append(acked, log.Record{Offset: res.Offset, Timestamp: res.Timestamp, Payload: []byte("second")})
	served, err := cl.ReadCommitted("orders", 0, 0, 10)
	require.NoError(t, err)
	require.NoError(t, cl.Close())

	crashed := openCrashed(t, crashInto(t, c))
	got := crashed.Metadata().Topics["orders"].Partitions
	require.Len(t, got, 1, "the topic survived")
	require.Equal(t, pm, got[0], "the leadership the second life acted on is durable")
	after, err := crashed.ReadCommitted("orders", 0, 0, 10)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(after), len(served))
	for i, r := range served {
		require.Equal(t, r, after[i], "record %d the second life served", i)
	}
	for _, r := range acked {
		require.Contains(t, after, r, "an acknowledged record survives")
	}
}
