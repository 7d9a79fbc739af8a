package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// docs/design.md § The controller, leader moves: leadership goes to an
// active replica holding the leader's whole log, the epoch goes up by one,
// the old leader stays an active follower, and nothing is lost.
func TestMoveLeaderHandsOverWithNothingLost(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	p := NewProducer(c, "orders")
	sendN(t, p, "k", 5)

	res, err := c.MoveLeader("orders", 0, 2)
	require.NoError(t, err)
	require.Equal(t, MoveResult{Topic: "orders", Partition: 0, OldLeaderBrokerID: 1, NewLeaderBrokerID: 2,
		LeaderEpoch: 1, LogEnd: 5}, res)
	onDisk, found, err := ReadClusterMeta(durable.OS, filepath.Join(root, MetaFileName))
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, PartitionMetadata{Partition: 0, Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}},
		onDisk.Topics["orders"].Partitions[0], "written before reported")

	sent := sendN(t, p, "k", 3)
	require.Equal(t, uint64(5), sent[0].Offset, "the new leader continues the offsets")
	require.Len(t, payloads(t, c, "orders", 0), 8)
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), st.LeaderEpoch)
	require.Equal(t, 1, st.Preferred)
	require.Equal(t, []int{1, 2, 3}, st.Placement)
	for _, r := range st.Replicas {
		require.Equal(t, uint64(8), *r.LogEnd, "broker %d holds every record", r.BrokerID)
	}

	// And back: the epoch counts every change.
	res, err = c.MoveLeader("orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(2), res.LeaderEpoch)
}

// A manual move to a lagging active follower first gives it the leader's
// missing records, with writes paused, then switches.
func TestMoveLeaderCatchesUpTheTarget(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendN(t, NewProducer(c, "orders"), "k", 2)
	require.NoError(t, c.StopBroker(1))
	writeBehind(t, replicaPath(root, 1, "orders", 0), log.Record{Offset: 2, Timestamp: 7, Payload: []byte("late")})
	_, err := c.StartBroker(1)
	require.NoError(t, err)

	res, err := c.MoveLeader("orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, 1, res.Copied)
	require.Equal(t, uint64(3), res.LogEnd)
	require.Equal(t, readAll(t, replicaPath(root, 1, "orders", 0)), readAll(t, replicaPath(root, 3, "orders", 0)))
}

// Every refusal of MoveLeader changes no metadata: only an active,
// available follower holding a prefix of the leader's log can lead, and
// only while the leader is up (a failed leader is Failover's job).
func TestMoveLeaderRefusals(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, c *Cluster, root string)
		target int
		want   error
	}{
		{"the leader itself", nil, 1, ErrReplicaIsLeader},
		{"id zero", nil, 0, ErrInvalidBrokerID},
		{"unknown broker", nil, 9, ErrUnknownBroker},
		{"not assigned", nil, 4, ErrNotAssigned},
		{"inactive", func(t *testing.T, c *Cluster, _ string) {
			_, err := c.Deactivate("orders", 0, 2)
			require.NoError(t, err)
		}, 2, ErrReplicaInactive},
		{"unavailable", func(t *testing.T, c *Cluster, _ string) { require.NoError(t, c.StopBroker(2)) }, 2, ErrBrokerUnavailable},
		{"leader unavailable", func(t *testing.T, c *Cluster, _ string) { require.NoError(t, c.StopBroker(1)) }, 2, ErrBrokerUnavailable},
		{"target ahead of the leader", func(t *testing.T, c *Cluster, root string) {
			require.NoError(t, c.StopBroker(2))
			writeBehind(t, replicaPath(root, 2, "orders", 0), log.Record{Offset: 1, Timestamp: 7, Payload: []byte("x")})
			_, err := c.StartBroker(2)
			require.NoError(t, err)
		}, 2, ErrReplicaDivergence},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, root := newCluster(t, 4)
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			sendN(t, NewProducer(c, "orders"), "k", 1)
			if tc.setup != nil {
				tc.setup(t, c, root)
			}
			before := c.Metadata()
			_, err := c.MoveLeader("orders", 0, tc.target)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, before, c.Metadata())
			onDisk, _, err := ReadClusterMeta(durable.OS, filepath.Join(root, MetaFileName))
			require.NoError(t, err)
			require.Equal(t, before, onDisk)
		})
	}
}

// Deactivate shrinks the active set, durably: writes stop waiting for the
// follower (here a stopped one, which otherwise fails every write), and
// only RecoverReplica brings it back.
func TestDeactivateLetsWritesResume(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	p := NewProducer(c, "orders")
	sendN(t, p, "k", 2)
	require.NoError(t, c.StopBroker(3))
	_, err := p.Send(nil, []byte("refused"))
	require.ErrorIs(t, err, ErrReplicationFailed, "a stopped active follower fails the write")

	res, err := c.Deactivate("orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, DeactivateResult{Topic: "orders", Partition: 0, BrokerID: 3, Active: []int{1, 2}}, res)
	onDisk, _, err := ReadClusterMeta(durable.OS, filepath.Join(root, MetaFileName))
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, onDisk.Topics["orders"].Partitions[0].Active)
	sendN(t, p, "k", 2)

	_, err = c.Deactivate("orders", 0, 3)
	require.ErrorIs(t, err, ErrReplicaInactive)
	_, err = c.Deactivate("orders", 0, 1)
	require.ErrorIs(t, err, ErrReplicaIsLeader)
	_, err = c.Deactivate("orders", 0, 9)
	require.ErrorIs(t, err, ErrUnknownBroker)
	_, err = c.Deactivate("nope", 0, 2)
	require.ErrorIs(t, err, ErrUnknownTopic)

	_, err = c.StartBroker(3)
	require.NoError(t, err)
	rec, err := c.RecoverReplica("orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, rec.Active)
}

// docs/design.md § cluster.meta: a version-1 file upgrades on open to
// version 2 — replicas are the leader then the followers, epoch 0 — and
// the upgrade is the same atomic replace as every change.
func TestMetadataUpgradesVersion1(t *testing.T) {
	v1, err := os.ReadFile(filepath.Join("testdata", "cluster-v1.meta"))
	require.NoError(t, err)
	v2, err := os.ReadFile(filepath.Join("testdata", "cluster.meta"))
	require.NoError(t, err)
	root := t.TempDir()
	path := filepath.Join(root, MetaFileName)
	require.NoError(t, os.WriteFile(path, v1, 0o644))
	c, err := Open(root)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(v2), string(got), "rewritten as version 2, same leadership")

	m1, err := ParseClusterMeta(v1)
	require.NoError(t, err)
	m2, err := ParseClusterMeta(v2)
	require.NoError(t, err)
	require.Equal(t, m2, m1, "both versions read the same")
}

// A crash at every step of the upgrade leaves a file that opens to the
// same metadata: the old version or the new, never a mix.
func TestCrashSimMetadataUpgrade(t *testing.T) {
	v1, err := os.ReadFile(filepath.Join("testdata", "cluster-v1.meta"))
	require.NoError(t, err)
	want, err := ParseClusterMeta(v1)
	require.NoError(t, err)
	life := func(fsys durable.FS, root string) {
		if c, err := OpenWithOptions(root, Options{FS: fsys}); err == nil {
			_ = c.Close()
		}
	}
	counter := logtest.NewFaultFS(nil)
	counterRoot := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(counterRoot, MetaFileName), v1, 0o644))
	life(counter, counterRoot)
	steps := counter.Total()
	require.Greater(t, steps, 3)
	for n := 1; n <= steps+1; n++ {
		base := t.TempDir()
		root := filepath.Join(base, "cluster")
		require.NoError(t, os.MkdirAll(root, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, MetaFileName), v1, 0o644))
		crash, err := logtest.KillBefore(base, n, func(fsys durable.FS) { life(fsys, root) })
		require.NoError(t, err)
		dst := crashInto(t, crash)
		c, err := Open(filepath.Join(dst, "cluster"))
		require.NoError(t, err, "dies before step %d", n)
		require.Equal(t, want, c.Metadata(), "dies before step %d", n)
		require.NoError(t, c.Close())
	}
}
