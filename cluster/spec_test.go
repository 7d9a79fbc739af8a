package cluster_test

// Black-box tests of the phase-4 and phase-5 guarantees, written from the
// rules of docs/phase-4-replication.md, docs/phase-5-failover.md and
// docs/design.md. Each test states the rule it pins in our own words. They
// use only the exported API and the files on disk.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// ---- fixtures ----

// specCluster opens a cluster in a fresh root with brokers 1..n started.
func specCluster(t *testing.T, n int) (*cluster.Cluster, string) {
	t.Helper()
	root := t.TempDir()
	c, err := cluster.Open(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= n; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	return c, root
}

// specReplica is the first segment file of broker id's replica of a
// partition under root.
func specReplica(root string, id int, topicName string, partition int) string {
	return filepath.Join(cluster.BrokerDir(root, id), "topics", topicName,
		fmt.Sprintf("partition-%06d", partition), "00000000000000000000.log")
}

// specRecords reads every record of a log file.
func specRecords(t *testing.T, path string) []log.Record {
	t.Helper()
	var out []log.Record
	require.NoError(t, log.ScanFile(path, func(_ int64, r log.Record) error {
		out = append(out, r)
		return nil
	}))
	return out
}

// specFiles returns every file under root with its bytes.
func specFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	}))
	return out
}

// specKey returns a key that routes to partition p of n.
func specKey(p, n int) []byte {
	for i := 0; ; i++ {
		k := []byte("k" + strconv.Itoa(i))
		if topic.PartitionForKey(k, n) == p {
			return k
		}
	}
}

// specRewrite replaces a stopped broker's replica log with recs.
func specRewrite(t *testing.T, path string, recs []log.Record) {
	t.Helper()
	require.NoError(t, os.Remove(path))
	l, err := log.Open(path)
	require.NoError(t, err)
	if len(recs) > 0 {
		require.NoError(t, l.AppendRecords(recs))
	}
	require.NoError(t, l.Close())
}

func specMetaOnDisk(t *testing.T, c *cluster.Cluster) cluster.Metadata {
	t.Helper()
	b, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)
	m, err := cluster.ParseClusterMeta(b)
	require.NoError(t, err)
	return m
}

func specPart(t *testing.T, m cluster.Metadata, topicName string, p int) cluster.PartitionMetadata {
	t.Helper()
	tm, ok := m.Topics[topicName]
	require.True(t, ok)
	require.Less(t, p, len(tm.Partitions))
	return tm.Partitions[p]
}

func specReplicaStatus(t *testing.T, st cluster.PartitionStatus, id int) cluster.ReplicaStatus {
	t.Helper()
	for _, r := range st.Replicas {
		if r.BrokerID == id {
			return r
		}
	}
	t.Fatalf("broker %d not in status %+v", id, st)
	return cluster.ReplicaStatus{}
}

// recordingFS remembers every path a broker's storage touches.
type recordingFS struct {
	durable.FS
	mu    sync.Mutex
	paths []string
}

func (r *recordingFS) note(p string) {
	r.mu.Lock()
	r.paths = append(r.paths, p)
	r.mu.Unlock()
}

func (r *recordingFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	r.note(name)
	return r.FS.OpenFile(name, flag, perm)
}

func (r *recordingFS) Rename(a, b string) error { r.note(a); r.note(b); return r.FS.Rename(a, b) }
func (r *recordingFS) Remove(n string) error    { r.note(n); return r.FS.Remove(n) }
func (r *recordingFS) Mkdir(n string, p fs.FileMode) error {
	r.note(n)
	return r.FS.Mkdir(n, p)
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ---- phase 4: brokers and placement ----

// Spec: a broker is a storage node that alone reads and writes its own
// directory. Every file a broker creates, opens, renames or removes lies
// inside <root>/broker-<id>/, and the only files of the cluster outside the
// broker directories are cluster.meta and the consumer offsets.
func TestSpecBrokerOwnsOnlyItsDirectory(t *testing.T) {
	root := t.TempDir()
	c, err := cluster.Open(root)
	require.NoError(t, err)
	defer c.Close()
	recs := map[int]*recordingFS{}
	for id := 1; id <= 3; id++ {
		recs[id] = &recordingFS{FS: durable.OS}
		b, err := cluster.OpenBrokerWithOptions(id, root, cluster.BrokerOptions{FS: recs[id]})
		require.NoError(t, err)
		require.Equal(t, cluster.BrokerDir(root, id), b.Dir())
		require.Equal(t, filepath.Dir(specReplica(root, id, "orders", 2)), b.ReplicaDir("orders", 2))
		require.Equal(t, filepath.Dir(specReplica(root, id, "orders", 2)), cluster.ReplicaDir(root, id, "orders", 2))
		require.NoError(t, c.RegisterBroker(b))
	}
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	prod := cluster.NewProducer(c, "orders")
	for i := 0; i < 9; i++ {
		_, err := prod.Send(nil, []byte{byte(i)})
		require.NoError(t, err)
	}
	_, err = c.Status("orders", 0)
	require.NoError(t, err)
	_, err = c.CatchUp("orders", 0, 2)
	require.NoError(t, err)

	for id, r := range recs {
		require.NotEmpty(t, r.paths)
		for _, p := range r.paths {
			require.Truef(t, within(cluster.BrokerDir(root, id), p), "broker %d touched %s", id, p)
		}
	}
	for p := range specFiles(t, root) {
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		first := strings.Split(rel, string(filepath.Separator))[0]
		ok := rel == cluster.MetaFileName || first == "offsets" || first == "journal" || strings.HasPrefix(first, "broker-")
		require.Truef(t, ok, "unexpected file %s", rel)
	}
	// A broker's directory holds replicas only of the partitions assigned
	// to it.
	m := c.Metadata()
	for p, pm := range m.Topics["orders"].Partitions {
		for id := 1; id <= 3; id++ {
			_, err := os.Stat(specReplica(root, id, "orders", p))
			require.Equal(t, contains(pm.Assigned(), id), err == nil, "broker %d partition %d", id, p)
		}
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Spec: 3 brokers, 3 partitions, replication factor 2 give exactly
// partition 0 -> leader 1, follower 2; 1 -> 2, 3; 2 -> 3, 1. Every replica
// starts active.
func TestSpecPlacementTable(t *testing.T) {
	c, _ := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	want := []struct {
		leader    int
		followers []int
		active    []int
	}{{1, []int{2}, []int{1, 2}}, {2, []int{3}, []int{2, 3}}, {3, []int{1}, []int{1, 3}}}
	for p, w := range want {
		st, err := c.Status("orders", p)
		require.NoError(t, err)
		require.Equal(t, w.leader, st.Leader, "partition %d", p)
		require.Equal(t, w.followers, st.Followers, "partition %d", p)
		require.Equal(t, w.active, st.Active, "partition %d", p)
		pm := specPart(t, specMetaOnDisk(t, c), "orders", p)
		require.Equal(t, w.leader, pm.Leader)
		require.Equal(t, w.followers, pm.Followers())
		require.Equal(t, w.active, pm.Active)
	}
	// The pure function agrees.
	a, err := cluster.Placement([]int{3, 1, 2}, 3, 2)
	require.NoError(t, err)
	require.Equal(t, []cluster.Assignment{{Leader: 1, Followers: []int{2}}, {Leader: 2, Followers: []int{3}}, {Leader: 3, Followers: []int{1}}}, a)
}

// Spec: placement is computed once, persisted and never recomputed. A new
// broker does not move existing partitions, and a reopened cluster restores
// the recorded placement even when it is not what Placement would compute
// today.
func TestSpecPlacementPersistedNeverRecomputed(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	before := c.Metadata().Topics["orders"]

	_, err := c.StartBroker(4)
	require.NoError(t, err)
	require.Equal(t, before, c.Metadata().Topics["orders"])
	require.NoError(t, c.Close())

	c2, err := cluster.Open(root)
	require.NoError(t, err)
	defer c2.Close()
	for _, id := range []int{4, 3, 2, 1} {
		_, err := c2.StartBroker(id)
		require.NoError(t, err)
	}
	require.Equal(t, before, c2.Metadata().Topics["orders"])
	require.Equal(t, []int{1, 2, 3, 4}, c2.Metadata().Brokers)
	require.NoError(t, c2.Close())

	// A recorded placement that differs from the formula is restored as is.
	root2 := t.TempDir()
	odd := cluster.Metadata{Brokers: []int{1, 2, 3}, Topics: map[string]cluster.TopicMetadata{
		"orders": {PartitionCount: 1, ReplicationFactor: 2, Partitions: []cluster.PartitionMetadata{
			{Partition: 0, Leader: 3, Replicas: []int{3, 1}, Active: []int{1, 3}},
		}},
	}}
	b, err := cluster.EncodeClusterMeta(odd)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root2, cluster.MetaFileName), b, 0o644))
	c3, err := cluster.Open(root2)
	require.NoError(t, err)
	defer c3.Close()
	require.Equal(t, odd.Topics, c3.Metadata().Topics)
	after, err := os.ReadFile(filepath.Join(root2, cluster.MetaFileName))
	require.NoError(t, err)
	require.Equal(t, b, after)
}

// ---- phase 4: leader writes ----

// Spec: writes are accepted only through the partition's leader. With the
// leader unavailable a write fails, and no follower receives anything.
func TestSpecWritesOnlyThroughLeader(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := cluster.NewProducer(c, "orders")
	res, err := prod.Send(nil, []byte("a"))
	require.NoError(t, err)
	require.Equal(t, 1, res.LeaderBrokerID)

	require.NoError(t, c.StopBroker(1))
	before := specFiles(t, root)
	_, err = prod.Send(nil, []byte("b"))
	var lu *cluster.LeaderUnavailableError
	require.ErrorAs(t, err, &lu)
	require.Equal(t, 1, lu.BrokerID)
	require.Equal(t, "orders", lu.Topic)
	require.ErrorIs(t, err, cluster.ErrLeaderUnavailable)
	require.Equal(t, before, specFiles(t, root))
}

// Spec: every replica stores the leader's exact record — same offset, same
// timestamp, same payload — so the replica files are byte-identical. A
// follower never invents a timestamp: each broker here has its own clock,
// and every stored timestamp is the leader's.
func TestSpecReplicasHoldLeaderRecordsByteForByte(t *testing.T) {
	root := t.TempDir()
	c, err := cluster.Open(root)
	require.NoError(t, err)
	defer c.Close()
	var ticks atomic.Int64
	for id := 1; id <= 3; id++ {
		base := int64(id) * 1_000_000_000_000
		b, err := cluster.OpenBrokerWithOptions(id, root, cluster.BrokerOptions{
			Now: func() time.Time { return time.Unix(0, base+ticks.Add(1)) },
		})
		require.NoError(t, err)
		require.NoError(t, c.RegisterBroker(b))
	}
	require.NoError(t, c.CreateTopic("orders", 3, 3))
	prod := cluster.NewProducer(c, "orders")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				res, err := prod.Send(nil, []byte{byte(g), byte(i)})
				if err != nil {
					t.Error(err)
					return
				}
				if res.Timestamp/1_000_000_000_000 != int64(res.LeaderBrokerID) {
					t.Errorf("timestamp %d not from leader %d's clock", res.Timestamp, res.LeaderBrokerID)
				}
			}
		}(g)
	}
	wg.Wait()
	for p := 0; p < 3; p++ {
		leader := specReplica(root, p+1, "orders", p)
		lb, err := os.ReadFile(leader)
		require.NoError(t, err)
		require.NotEmpty(t, lb)
		for _, r := range specRecords(t, leader) {
			require.Equal(t, int64(p+1), r.Timestamp/1_000_000_000_000)
		}
		for id := 1; id <= 3; id++ {
			fb, err := os.ReadFile(specReplica(root, id, "orders", p))
			require.NoError(t, err)
			require.True(t, bytes.Equal(lb, fb), "partition %d broker %d differs from leader", p, id)
		}
	}
}

// Spec: a write succeeds only once every active replica holds it. When
// Send returns, each active replica's file already has the record, and the
// result names exactly the active set.
func TestSpecSuccessOnlyWhenAllActiveHold(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := cluster.NewProducer(c, "orders")
	for i := 0; i < 5; i++ {
		payload := []byte("v" + strconv.Itoa(i))
		res, err := prod.Send(nil, payload)
		require.NoError(t, err)
		require.Equal(t, uint64(i), res.Offset)
		require.Equal(t, []int{1, 2, 3}, res.Brokers)
		for _, id := range res.Brokers {
			recs := specRecords(t, specReplica(root, id, "orders", 0))
			require.Len(t, recs, i+1)
			require.Equal(t, log.Record{Offset: res.Offset, Timestamp: res.Timestamp, Payload: payload}, recs[i])
		}
	}
}

// Spec: when the leader stores a record but a follower cannot, the caller
// gets a ReplicationError naming exactly the failed brokers; the leader's
// record stays; the follower's lag is visible; an unavailable replica's log
// end and lag are unknown (nil), never zero.
func TestSpecFollowerFailure(t *testing.T) {
	t.Run("stopped follower", func(t *testing.T) {
		c, root := specCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 1, 3))
		prod := cluster.NewProducer(c, "orders")
		_, err := prod.Send(nil, []byte("a"))
		require.NoError(t, err)
		require.NoError(t, c.StopBroker(3))

		_, err = prod.Send(nil, []byte("b"))
		var re *cluster.ReplicationError
		require.ErrorAs(t, err, &re)
		require.ErrorIs(t, err, cluster.ErrReplicationFailed)
		require.Equal(t, []int{3}, re.BrokerIDs)
		require.Equal(t, "orders", re.Topic)
		require.Equal(t, 0, re.Partition)
		require.Equal(t, uint64(1), re.Offset)
		require.Equal(t, 1, re.Count)
		require.Len(t, specRecords(t, specReplica(root, 1, "orders", 0)), 2, "leader keeps the record")
		require.Len(t, specRecords(t, specReplica(root, 2, "orders", 0)), 2, "the healthy follower has it")

		st, err := c.Status("orders", 0)
		require.NoError(t, err)
		r3 := specReplicaStatus(t, st, 3)
		require.False(t, r3.Available)
		require.Nil(t, r3.LogEnd)
		require.Nil(t, r3.Lag)
		r2 := specReplicaStatus(t, st, 2)
		require.NotNil(t, r2.Lag)
		require.Equal(t, uint64(0), *r2.Lag)

		_, err = c.StartBroker(3)
		require.NoError(t, err)
		st, err = c.Status("orders", 0)
		require.NoError(t, err)
		r3 = specReplicaStatus(t, st, 3)
		require.NotNil(t, r3.LogEnd)
		require.Equal(t, uint64(1), *r3.LogEnd)
		require.NotNil(t, r3.Lag)
		require.Equal(t, uint64(1), *r3.Lag)
		require.True(t, r3.Active, "lagging never deactivates a replica")
	})
	t.Run("two stopped followers", func(t *testing.T) {
		c, _ := specCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 1, 3))
		require.NoError(t, c.StopBroker(2))
		require.NoError(t, c.StopBroker(3))
		_, err := cluster.NewProducer(c, "orders").Send(nil, []byte("a"))
		var re *cluster.ReplicationError
		require.ErrorAs(t, err, &re)
		require.Equal(t, []int{2, 3}, re.BrokerIDs)
	})
	for _, op := range []logtest.Op{logtest.OpWrite, logtest.OpSync} {
		t.Run("follower "+string(op)+" fails", func(t *testing.T) {
			root := t.TempDir()
			c, err := cluster.Open(root)
			require.NoError(t, err)
			defer c.Close()
			faults := map[int]*logtest.FaultFS{}
			for id := 1; id <= 3; id++ {
				faults[id] = logtest.NewFaultFS(nil)
				b, err := cluster.OpenBrokerWithOptions(id, root, cluster.BrokerOptions{FS: faults[id]})
				require.NoError(t, err)
				require.NoError(t, c.RegisterBroker(b))
			}
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			prod := cluster.NewProducer(c, "orders")
			_, err = prod.Send(nil, []byte("a"))
			require.NoError(t, err)
			faults[2].SetFault(logtest.FailFrom(op, 1))
			_, err = prod.Send(nil, []byte("b"))
			var re *cluster.ReplicationError
			require.ErrorAs(t, err, &re)
			require.Equal(t, []int{2}, re.BrokerIDs)
			require.ErrorIs(t, err, logtest.ErrInjected)
			require.Len(t, specRecords(t, specReplica(root, 1, "orders", 0)), 2)
			require.Len(t, specRecords(t, specReplica(root, 3, "orders", 0)), 2)
		})
	}
}

// Spec: a follower never invents an offset. A follower that lags (here,
// after it was stopped during a write) cannot take the next record at its
// own log end: the write fails naming it and its log is left as it was,
// until CatchUp copies the missing records in order.
func TestSpecFollowerNeverInventsOffsets(t *testing.T) {
	c, root := specCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := cluster.NewProducer(c, "orders")
	_, err := prod.Send(nil, []byte("a"))
	require.NoError(t, err)
	require.NoError(t, c.StopBroker(2))
	_, err = prod.Send(nil, []byte("b"))
	require.ErrorIs(t, err, cluster.ErrReplicationFailed)
	_, err = c.StartBroker(2)
	require.NoError(t, err)

	follower := specReplica(root, 2, "orders", 0)
	before, err := os.ReadFile(follower)
	require.NoError(t, err)
	_, err = prod.Send(nil, []byte("c"))
	var re *cluster.ReplicationError
	require.ErrorAs(t, err, &re)
	require.Equal(t, []int{2}, re.BrokerIDs)
	after, err := os.ReadFile(follower)
	require.NoError(t, err)
	require.Equal(t, before, after)

	cu, err := c.CatchUp("orders", 0, 2)
	require.NoError(t, err)
	require.Equal(t, 2, cu.Copied)
	require.Equal(t, uint64(3), cu.LogEnd)
	lb, err := os.ReadFile(specReplica(root, 1, "orders", 0))
	require.NoError(t, err)
	fb, err := os.ReadFile(follower)
	require.NoError(t, err)
	require.Equal(t, lb, fb)
	res, err := prod.Send(nil, []byte("d"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), res.Offset)
}

// Spec: catch-up first proves the follower is an exact prefix of the
// leader — offset, timestamp and payload of every shared record, equal
// offsets being no proof of equal data — and refuses a mismatch or a
// follower longer than its leader with a ReplicaDivergenceError, changing
// nothing on either side.
func TestSpecCatchUpValidatesWholePrefix(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(leader []log.Record) []log.Record
		offset uint64
	}{
		{"payload differs, same size", func(l []log.Record) []log.Record {
			f := cloneRecs(l[:3])
			f[1].Payload = []byte("X")
			return f
		}, 1},
		{"timestamp differs", func(l []log.Record) []log.Record {
			f := cloneRecs(l[:3])
			f[0].Timestamp++
			return f
		}, 0},
		{"last shared record differs", func(l []log.Record) []log.Record {
			f := cloneRecs(l)
			f[4].Payload = []byte("Z")
			return f
		}, 4},
		{"follower longer than leader", func(l []log.Record) []log.Record {
			f := cloneRecs(l)
			return append(f, log.Record{Offset: 5, Timestamp: l[4].Timestamp + 1, Payload: []byte("f")})
		}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, root := specCluster(t, 2)
			require.NoError(t, c.CreateTopic("orders", 1, 2))
			prod := cluster.NewProducer(c, "orders")
			for _, p := range []string{"a", "b", "c", "d", "e"} {
				_, err := prod.Send(nil, []byte(p))
				require.NoError(t, err)
			}
			require.NoError(t, c.StopBroker(2))
			follower := specReplica(root, 2, "orders", 0)
			specRewrite(t, follower, tc.mutate(specRecords(t, specReplica(root, 1, "orders", 0))))
			_, err := c.StartBroker(2)
			require.NoError(t, err)

			before := specFiles(t, root)
			_, err = c.CatchUp("orders", 0, 2)
			var de *cluster.ReplicaDivergenceError
			require.ErrorAs(t, err, &de)
			require.ErrorIs(t, err, cluster.ErrReplicaDivergence)
			require.Equal(t, 2, de.BrokerID)
			require.Equal(t, tc.offset, de.Offset)
			require.Equal(t, before, specFiles(t, root))
		})
	}
}

func cloneRecs(rs []log.Record) []log.Record {
	out := make([]log.Record, len(rs))
	for i, r := range rs {
		out[i] = log.Record{Offset: r.Offset, Timestamp: r.Timestamp, Payload: append([]byte(nil), r.Payload...)}
	}
	return out
}

// Spec: consumers are served only records below the high watermark, the
// end of the prefix every active replica holds, so they never see a record
// that was not acknowledged — and thus never one a failover or recovery
// drops.
func TestSpecConsumerNeverPastHighWatermark(t *testing.T) {
	root := t.TempDir()
	c, err := cluster.Open(root)
	require.NoError(t, err)
	defer c.Close()
	f2 := logtest.NewFaultFS(nil)
	for id := 1; id <= 2; id++ {
		opts := cluster.BrokerOptions{}
		if id == 2 {
			opts.FS = f2
		}
		b, err := cluster.OpenBrokerWithOptions(id, root, opts)
		require.NoError(t, err)
		require.NoError(t, c.RegisterBroker(b))
	}
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := cluster.NewProducer(c, "orders")
	for _, p := range []string{"a", "b"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}
	cons, err := c.NewConsumer("reader", "orders", 0)
	require.NoError(t, err)

	f2.SetFault(logtest.FailFrom(logtest.OpWrite, 1))
	_, err = prod.Send(nil, []byte("unacked"))
	require.ErrorIs(t, err, cluster.ErrReplicationFailed)

	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), hw)
	got, err := cons.Fetch(100)
	require.NoError(t, err)
	require.Len(t, got, 2)
	rc, err := c.ReadCommitted("orders", 0, 2, 10)
	require.NoError(t, err)
	require.Empty(t, rc)

	// Leader fails; the follower (reopened healthy) takes over and the next
	// write reuses offset 2; the consumer sees that record, never "unacked".
	require.NoError(t, c.StopBroker(1))
	require.NoError(t, c.StopBroker(2))
	b2, err := cluster.OpenBroker(2, root)
	require.NoError(t, err)
	require.NoError(t, c.RegisterBroker(b2))
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(2), fo.LogEndOffset)
	res, err := prod.Send(nil, []byte("new"))
	require.NoError(t, err)
	require.Equal(t, uint64(2), res.Offset)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	rr, err := c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, 1, rr.Dropped)

	got, err = cons.Fetch(100)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, uint64(2), got[0].Offset)
	require.Equal(t, []byte("new"), got[0].Payload)
}

// ---- phase 5: failover ----

// Spec: nothing fails over by itself. With the leader gone, writes fail and
// keep failing, status and reads observe, and leadership and cluster.meta
// stay exactly as they were until Failover is called.
func TestSpecNothingFailsOverByItself(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := cluster.NewProducer(c, "orders")
	_, err := prod.Send(nil, []byte("a"))
	require.NoError(t, err)
	require.NoError(t, c.StopBroker(1))
	meta, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		_, err := prod.Send(nil, []byte("b"))
		require.ErrorIs(t, err, cluster.ErrLeaderUnavailable)
		_, err = c.Status("orders", 0)
		require.NoError(t, err)
		_, err = c.ReadCommitted("orders", 0, 0, 10)
		require.ErrorIs(t, err, cluster.ErrLeaderUnavailable)
	}
	require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)
	after, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)
	require.Equal(t, meta, after)

	c2, err := cluster.Open(root)
	require.NoError(t, c.Close())
	require.NoError(t, err)
	defer c2.Close()
	require.Equal(t, 1, c2.Metadata().Topics["orders"].Partitions[0].Leader)
}

// Spec: failover replaces a failed leader; while the leader is usable it
// refuses with LeaderStillAvailableError and changes nothing.
func TestSpecFailoverRefusesWhileLeaderUsable(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	_, err := cluster.NewProducer(c, "orders").Send(nil, []byte("a"))
	require.NoError(t, err)
	before := specFiles(t, root)
	_, err = c.Failover("orders", 0)
	var ls *cluster.LeaderStillAvailableError
	require.ErrorAs(t, err, &ls)
	require.ErrorIs(t, err, cluster.ErrLeaderStillAvailable)
	require.Equal(t, 1, ls.BrokerID)
	require.Equal(t, before, specFiles(t, root))
	require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)
}

// Spec: selection is deterministic — among active followers on available
// brokers, the most surviving history wins, ties to the lowest broker id
// (not the next broker round the ring).
func TestSpecFailoverSelection(t *testing.T) {
	t.Run("tie goes to lowest id", func(t *testing.T) {
		// Partition 1 of 3 with rf 3: leader 2, followers 1 and 3, equal.
		c, _ := specCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 3, 3))
		prod := cluster.NewProducer(c, "orders")
		_, err := prod.Send(specKey(1, 3), []byte("a"))
		require.NoError(t, err)
		require.NoError(t, c.StopBroker(2))
		fo, err := c.Failover("orders", 1)
		require.NoError(t, err)
		require.Equal(t, 2, fo.OldLeaderBrokerID)
		require.Equal(t, 1, fo.NewLeaderBrokerID)
		require.Equal(t, uint64(1), fo.LogEndOffset)
	})
	t.Run("most history beats a lower id", func(t *testing.T) {
		c, _ := specCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 3, 3))
		prod := cluster.NewProducer(c, "orders")
		k := specKey(1, 3)
		_, err := prod.Send(k, []byte("a"))
		require.NoError(t, err)
		require.NoError(t, c.StopBroker(1))
		_, err = prod.Send(k, []byte("b"))
		require.ErrorIs(t, err, cluster.ErrReplicationFailed)
		_, err = c.StartBroker(1) // back, active, one record behind
		require.NoError(t, err)
		require.NoError(t, c.StopBroker(2))
		fo, err := c.Failover("orders", 1)
		require.NoError(t, err)
		require.Equal(t, 3, fo.NewLeaderBrokerID)
		require.Equal(t, uint64(2), fo.LogEndOffset)
	})
	t.Run("pure choice", func(t *testing.T) {
		w, ok := cluster.ChooseLeader([]cluster.Candidate{
			{BrokerID: 5, LogEnd: 7, Active: true, Available: true},
			{BrokerID: 2, LogEnd: 7, Active: true, Available: true},
			{BrokerID: 1, LogEnd: 9, Active: false, Available: true},
			{BrokerID: 3, LogEnd: 9, Active: true, Available: false},
		})
		require.True(t, ok)
		require.Equal(t, 2, w.BrokerID)
		_, ok = cluster.ChooseLeader([]cluster.Candidate{{BrokerID: 1, LogEnd: 3, Active: false, Available: true}})
		require.False(t, ok)
	})
}

// Spec: candidates are checked against each other before anyone is
// promoted; two followers holding different records at a shared offset make
// failover fail with ReplicaDivergenceError and change nothing.
func TestSpecFailoverRefusesDivergentCandidates(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(rs []log.Record) []log.Record
	}{
		{"same length, payload differs", func(rs []log.Record) []log.Record {
			f := cloneRecs(rs)
			f[1].Payload = []byte("X")
			return f
		}},
		{"shorter candidate, timestamp differs", func(rs []log.Record) []log.Record {
			f := cloneRecs(rs[:2])
			f[0].Timestamp--
			return f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, root := specCluster(t, 3)
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			prod := cluster.NewProducer(c, "orders")
			for _, p := range []string{"a", "b", "c"} {
				_, err := prod.Send(nil, []byte(p))
				require.NoError(t, err)
			}
			for id := 1; id <= 3; id++ {
				require.NoError(t, c.StopBroker(id))
			}
			p3 := specReplica(root, 3, "orders", 0)
			specRewrite(t, p3, tc.mutate(specRecords(t, p3)))
			for _, id := range []int{2, 3} {
				_, err := c.StartBroker(id)
				require.NoError(t, err)
			}
			before := specFiles(t, root)
			_, err := c.Failover("orders", 0)
			require.ErrorIs(t, err, cluster.ErrReplicaDivergence)
			var de *cluster.ReplicaDivergenceError
			require.ErrorAs(t, err, &de)
			require.Equal(t, 3, de.BrokerID)
			require.Equal(t, before, specFiles(t, root))
			require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)
			require.Equal(t, []int{1, 2, 3}, c.Metadata().Topics["orders"].Partitions[0].Active)
		})
	}
}

// Spec: with no safe, available candidate failover raises
// NoEligibleReplicaError and the partition keeps its recorded leader; it is
// never left leaderless. An inactive follower is no candidate even when it
// is available and complete.
func TestSpecFailoverNoCandidateKeepsLeader(t *testing.T) {
	t.Run("rf 1", func(t *testing.T) {
		c, root := specCluster(t, 2)
		require.NoError(t, c.CreateTopic("orders", 1, 1))
		require.NoError(t, c.StopBroker(1))
		before := specFiles(t, root)
		_, err := c.Failover("orders", 0)
		var ne *cluster.NoEligibleReplicaError
		require.ErrorAs(t, err, &ne)
		require.Equal(t, 1, ne.LeaderBrokerID)
		require.Equal(t, before, specFiles(t, root))
		st, err := c.Status("orders", 0)
		require.NoError(t, err)
		require.Equal(t, 1, st.Leader)
	})
	t.Run("every follower unavailable", func(t *testing.T) {
		c, root := specCluster(t, 3)
		require.NoError(t, c.CreateTopic("orders", 1, 3))
		for id := 1; id <= 3; id++ {
			require.NoError(t, c.StopBroker(id))
		}
		before := specFiles(t, root)
		_, err := c.Failover("orders", 0)
		require.ErrorIs(t, err, cluster.ErrNoEligibleReplica)
		require.Equal(t, before, specFiles(t, root))
		pm := c.Metadata().Topics["orders"].Partitions[0]
		require.Equal(t, 1, pm.Leader)
		require.Equal(t, []int{1, 2, 3}, pm.Active)
	})
	t.Run("only an inactive follower is available", func(t *testing.T) {
		c, root := specCluster(t, 2)
		require.NoError(t, c.CreateTopic("orders", 1, 2))
		require.NoError(t, c.StopBroker(1))
		_, err := c.Failover("orders", 0)
		require.NoError(t, err)
		_, err = c.StartBroker(1) // back but not recovered: inactive
		require.NoError(t, err)
		require.NoError(t, c.StopBroker(2))
		before := specFiles(t, root)
		_, err = c.Failover("orders", 0)
		require.ErrorIs(t, err, cluster.ErrNoEligibleReplica)
		require.Equal(t, before, specFiles(t, root))
		require.Equal(t, 2, c.Metadata().Topics["orders"].Partitions[0].Leader)
	})
}

// The whole story of docs/phase-5-failover.md § Worked example, one guarantee
// per step: the failed leader becomes an inactive follower; writes continue
// with the reduced active set; the next write reuses the unacknowledged
// offset; recovery truncates only the recovering replica, copies, verifies
// and only then reactivates; the returning leader never reclaims leadership,
// also after the cluster is reopened; and a later failover still works.
func TestSpecFailoverAndRecoveryStory(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := cluster.NewProducer(c, "orders")
	for _, p := range []string{"r0", "r1", "r2"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}
	for id := 1; id <= 3; id++ {
		require.NoError(t, c.StopBroker(id))
	}
	// Offset 3 reached only the old leader: never acknowledged.
	p1 := specReplica(root, 1, "orders", 0)
	old := specRecords(t, p1)
	l, err := log.Open(p1)
	require.NoError(t, err)
	require.NoError(t, l.AppendRecord(log.Record{Offset: 3, Timestamp: old[2].Timestamp + 1, Payload: []byte("lost")}))
	require.NoError(t, l.Close())
	for _, id := range []int{2, 3} {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}

	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 1, fo.OldLeaderBrokerID)
	require.Equal(t, 2, fo.NewLeaderBrokerID)
	require.Equal(t, uint64(3), fo.LogEndOffset)
	// Written before reported.
	pm := specPart(t, specMetaOnDisk(t, c), "orders", 0)
	require.Equal(t, cluster.PartitionMetadata{Partition: 0, Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{2, 3}}, pm)
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	r1 := specReplicaStatus(t, st, 1)
	require.Equal(t, cluster.RoleFollower, r1.Role)
	require.False(t, r1.Active)
	require.Equal(t, []int{1, 2, 3}, st.Assigned)
	require.Equal(t, []int{2, 3}, st.Active)

	// Writes continue with two copies; offset 3 is reused.
	oldLeaderBytes, err := os.ReadFile(p1)
	require.NoError(t, err)
	res, err := prod.Send(nil, []byte("r3"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), res.Offset)
	require.Equal(t, 2, res.LeaderBrokerID)
	require.Equal(t, []int{2, 3}, res.Brokers)
	nowBytes, err := os.ReadFile(p1)
	require.NoError(t, err)
	require.Equal(t, oldLeaderBytes, nowBytes)

	// Recovery: only broker 1's log changes.
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	p2, p3 := specReplica(root, 2, "orders", 0), specReplica(root, 3, "orders", 0)
	b2, err := os.ReadFile(p2)
	require.NoError(t, err)
	b3, err := os.ReadFile(p3)
	require.NoError(t, err)
	rr, err := c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(3), rr.CommonPrefix)
	require.Equal(t, 1, rr.Dropped)
	require.Equal(t, uint64(3), rr.DroppedFrom)
	require.Equal(t, uint64(4), rr.DroppedTo)
	require.Equal(t, 1, rr.Copied)
	require.Equal(t, uint64(4), rr.LogEnd)
	require.Equal(t, []int{1, 2, 3}, rr.Active)
	after2, err := os.ReadFile(p2)
	require.NoError(t, err)
	after3, err := os.ReadFile(p3)
	require.NoError(t, err)
	require.Equal(t, b2, after2)
	require.Equal(t, b3, after3)
	after1, err := os.ReadFile(p1)
	require.NoError(t, err)
	require.Equal(t, b2, after1, "recovered replica is an exact copy")
	require.Equal(t, []int{1, 2, 3}, specPart(t, specMetaOnDisk(t, c), "orders", 0).Active)
	require.Equal(t, 2, c.Metadata().Topics["orders"].Partitions[0].Leader)

	// Reopen: still a follower.
	require.NoError(t, c.Close())
	c2, err := cluster.Open(root)
	require.NoError(t, err)
	defer c2.Close()
	for id := 1; id <= 3; id++ {
		_, err := c2.StartBroker(id)
		require.NoError(t, err)
	}
	pm = c2.Metadata().Topics["orders"].Partitions[0]
	require.Equal(t, 2, pm.Leader)
	require.Equal(t, []int{1, 3}, pm.Followers())
	require.Equal(t, []int{1, 2, 3}, pm.Active)
	_, err = c2.Failover("orders", 0)
	require.ErrorIs(t, err, cluster.ErrLeaderStillAvailable)
	prod2 := cluster.NewProducer(c2, "orders")
	res, err = prod2.Send(nil, []byte("r4"))
	require.NoError(t, err)
	require.Equal(t, 2, res.LeaderBrokerID)
	require.Equal(t, uint64(4), res.Offset)
	require.Equal(t, []int{1, 2, 3}, res.Brokers)

	// A second failover after recovery works: tie between 1 and 3 -> 1.
	require.NoError(t, c2.StopBroker(2))
	fo, err = c2.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 1, fo.NewLeaderBrokerID)
	require.Equal(t, uint64(5), fo.LogEndOffset)
}

// Spec: recovery activates a replica only after it matches the leader. If
// copying fails, the replica stays inactive in memory and in cluster.meta,
// and the leader is untouched.
func TestSpecRecoveryActivatesOnlyAfterMatch(t *testing.T) {
	root := t.TempDir()
	c, err := cluster.Open(root)
	require.NoError(t, err)
	defer c.Close()
	for id := 1; id <= 2; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := cluster.NewProducer(c, "orders")
	_, err = prod.Send(nil, []byte("a"))
	require.NoError(t, err)
	require.NoError(t, c.StopBroker(1))
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	_, err = prod.Send(nil, []byte("b"))
	require.NoError(t, err)

	f1 := logtest.NewFaultFS(nil)
	b1, err := cluster.OpenBrokerWithOptions(1, root, cluster.BrokerOptions{FS: f1})
	require.NoError(t, err)
	require.NoError(t, c.RegisterBroker(b1))
	f1.SetFault(logtest.FailFrom(logtest.OpWrite, 1))
	leader, err := os.ReadFile(specReplica(root, 2, "orders", 0))
	require.NoError(t, err)
	meta, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)

	_, err = c.RecoverReplica("orders", 0, 1)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.Equal(t, []int{2}, c.Metadata().Topics["orders"].Partitions[0].Active)
	after, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)
	require.Equal(t, meta, after)
	afterLeader, err := os.ReadFile(specReplica(root, 2, "orders", 0))
	require.NoError(t, err)
	require.Equal(t, leader, afterLeader)
	res, err := prod.Send(nil, []byte("c"))
	require.NoError(t, err)
	require.Equal(t, []int{2}, res.Brokers)
}

// Spec: recovery is for a returning, inactive replica. Recovering an
// active replica, the leader, an unassigned or unknown broker, or an id
// that cannot be a broker is refused with the documented sentinel (which
// an HTTP layer maps to a status) and changes nothing. CatchUp refuses the
// same ids the same way.
func TestSpecRecoveryRefusals(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	_, err := cluster.NewProducer(c, "orders").Send(nil, []byte("a"))
	require.NoError(t, err)
	before := specFiles(t, root)
	for _, tc := range []struct {
		id   int
		want error
	}{
		{2, cluster.ErrReplicaActive},
		{1, cluster.ErrReplicaIsLeader},
		{0, cluster.ErrInvalidBrokerID},
		{-4, cluster.ErrInvalidBrokerID},
		{3, cluster.ErrNotAssigned},
		{9, cluster.ErrUnknownBroker},
	} {
		_, err := c.RecoverReplica("orders", 0, tc.id)
		require.ErrorIs(t, err, tc.want, "recover broker %d", tc.id)
		if tc.want != cluster.ErrReplicaActive {
			_, err = c.CatchUp("orders", 0, tc.id)
			require.ErrorIs(t, err, tc.want, "catch up broker %d", tc.id)
		}
	}
	require.ErrorIs(t, c.StopBroker(0), cluster.ErrInvalidBrokerID)
	require.Equal(t, before, specFiles(t, root))
}

// Spec: every leadership change is committed by writing it. When writing
// cluster.meta fails, the failover is not reported, and memory and disk
// both keep the old leader.
func TestSpecFailoverMetadataWriteFailureChangesNothing(t *testing.T) {
	for _, op := range []logtest.Op{logtest.OpWrite, logtest.OpSync, logtest.OpRename} {
		t.Run(string(op), func(t *testing.T) {
			root := t.TempDir()
			ffs := logtest.NewFaultFS(nil)
			c, err := cluster.OpenWithOptions(root, cluster.Options{FS: ffs})
			require.NoError(t, err)
			defer c.Close()
			for id := 1; id <= 3; id++ {
				b, err := cluster.OpenBroker(id, root)
				require.NoError(t, err)
				require.NoError(t, c.RegisterBroker(b))
			}
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			prod := cluster.NewProducer(c, "orders")
			_, err = prod.Send(nil, []byte("a"))
			require.NoError(t, err)
			require.NoError(t, c.StopBroker(1))
			meta, err := os.ReadFile(c.MetaPath())
			require.NoError(t, err)

			ffs.SetFault(logtest.FailFrom(op, 1))
			_, err = c.Failover("orders", 0)
			require.ErrorIs(t, err, logtest.ErrInjected)
			pm := c.Metadata().Topics["orders"].Partitions[0]
			require.Equal(t, 1, pm.Leader)
			require.Equal(t, []int{1, 2, 3}, pm.Active)
			st, err := c.Status("orders", 0)
			require.NoError(t, err)
			require.Equal(t, 1, st.Leader)
			after, err := os.ReadFile(c.MetaPath())
			require.NoError(t, err)
			require.Equal(t, meta, after)
			_, err = prod.Send(nil, []byte("b"))
			var lu *cluster.LeaderUnavailableError
			require.ErrorAs(t, err, &lu)
			require.Equal(t, 1, lu.BrokerID)
		})
	}
}

// docs/design.md § Invariants, 4: bad input returns an error, never
// panics, and changes nothing on disk — negative or out-of-range partitions,
// unknown topics, broker ids of zero or below.
func TestSpecBadInputNeverPanics(t *testing.T) {
	c, root := specCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 2, 2))
	_, err := cluster.NewProducer(c, "orders").Send(nil, []byte("a"))
	require.NoError(t, err)
	before := specFiles(t, root)
	calls := map[string]func() error{
		"status -1":            func() error { _, err := c.Status("orders", -1); return err },
		"status 2":             func() error { _, err := c.Status("orders", 2); return err },
		"status unknown":       func() error { _, err := c.Status("nope", 0); return err },
		"hw -1":                func() error { _, err := c.HighWatermark("orders", -1); return err },
		"catchup -1":           func() error { _, err := c.CatchUp("orders", -1, 2); return err },
		"catchup broker 0":     func() error { _, err := c.CatchUp("orders", 0, 0); return err },
		"catchup broker -3":    func() error { _, err := c.CatchUp("orders", 0, -3); return err },
		"catchup unknown":      func() error { _, err := c.CatchUp("nope", 0, 2); return err },
		"failover -1":          func() error { _, err := c.Failover("orders", -1); return err },
		"failover 99":          func() error { _, err := c.Failover("orders", 99); return err },
		"failover unknown":     func() error { _, err := c.Failover("nope", 0); return err },
		"recover -1":           func() error { _, err := c.RecoverReplica("orders", -1, 2); return err },
		"recover broker 0":     func() error { _, err := c.RecoverReplica("orders", 0, 0); return err },
		"recover broker -1":    func() error { _, err := c.RecoverReplica("orders", 0, -1); return err },
		"read -1":              func() error { _, err := c.ReadCommitted("orders", -1, 0, 1); return err },
		"read max 0":           func() error { _, err := c.ReadCommitted("orders", 0, 0, 0); return err },
		"read unknown":         func() error { _, err := c.ReadCommitted("nope", 0, 0, 1); return err },
		"consumer -1":          func() error { _, err := c.NewConsumer("x", "orders", -1); return err },
		"consumer 2":           func() error { _, err := c.NewConsumer("x", "orders", 2); return err },
		"consumer unknown":     func() error { _, err := c.NewConsumer("x", "nope", 0); return err },
		"consumer bad id":      func() error { _, err := c.NewConsumer("../x", "orders", 0); return err },
		"send unknown":         func() error { _, err := cluster.NewProducer(c, "nope").Send(nil, nil); return err },
		"source unknown":       func() error { _, err := c.Source("nope"); return err },
		"start broker 0":       func() error { _, err := c.StartBroker(0); return err },
		"start broker -2":      func() error { _, err := c.StartBroker(-2); return err },
		"stop broker 0":        func() error { return c.StopBroker(0) },
		"stop broker -1":       func() error { return c.StopBroker(-1) },
		"open broker 0":        func() error { _, err := cluster.OpenBroker(0, root); return err },
		"open broker -1":       func() error { _, err := cluster.OpenBroker(-1, root); return err },
		"register nil":         func() error { return c.RegisterBroker(nil) },
		"create bad name":      func() error { return c.CreateTopic("../x", 1, 1) },
		"create 0 partitions":  func() error { return c.CreateTopic("t", 0, 1) },
		"create -1 partitions": func() error { return c.CreateTopic("t", -1, 1) },
		"create rf 0":          func() error { return c.CreateTopic("t", 1, 0) },
		"create rf 4":          func() error { return c.CreateTopic("t", 1, 4) },
		"create exists":        func() error { return c.CreateTopic("orders", 2, 2) },
		"topic unknown":        func() error { _, err := c.Topic("nope"); return err },
	}
	for name, call := range calls {
		var err error
		require.NotPanics(t, func() { err = call() }, name)
		require.Error(t, err, name)
	}
	require.Equal(t, before, specFiles(t, root))
}
