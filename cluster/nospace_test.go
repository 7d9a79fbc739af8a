package cluster

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// A full disk, injected through the file-system seam at every write path
// of the cluster (docs/design.md § Sticky failure): each failing call
// returns an error that wraps ENOSPC (durable.NoSpace), nothing
// acknowledged changes, and once space returns (the fault removed) the
// partition serves again without a restart — through ReopenBroker, or the
// catch-up or recovery that reopens a failed follower itself.

// newFullDiskCluster is newCluster over one FaultFS for every file.
func newFullDiskCluster(t *testing.T, n int) (*Cluster, string, *logtest.FaultFS) {
	t.Helper()
	root := t.TempDir()
	ffs := logtest.NewFaultFS(nil)
	c, err := OpenWithOptions(root, Options{FS: ffs})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= n; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	return c, root, ffs
}

// under matches the paths inside one directory of root ("broker-000002",
// "journal") or one file (cluster.meta).
func under(root string, parts ...string) func(string) bool {
	dir := filepath.Join(append([]string{root}, parts...)...)
	return func(p string) bool {
		return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || strings.HasPrefix(p, dir+".")
	}
}

func brokerDir(id int) string { return filepath.Base(BrokerDir("", id)) }

func TestNoSpaceLeaderAppend(t *testing.T) {
	c, root, ffs := newFullDiskCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)
	leader := mustStatus(t, c).Leader
	acked := payloads(t, c, "orders", 0)

	ffs.SetFault(logtest.FullDisk(under(root, brokerDir(leader))))
	_, err := prod.Send(nil, []byte("lost"))
	require.True(t, durable.NoSpace(err), "%v", err)
	ffs.SetFault(nil) // space returns
	_, err = prod.Send(nil, []byte("still refused"))
	require.True(t, durable.NoSpace(err), "the sticky failure keeps its cause: %v", err)
	require.Equal(t, acked, payloads(t, c, "orders", 0))

	res, err := c.ReopenBroker(leader)
	require.NoError(t, err)
	require.Equal(t, []ReplicaRef{{"orders", 0}}, res.Reopened)
	_, err = prod.Send(nil, []byte("new"))
	require.NoError(t, err)
	require.Equal(t, append(acked, "new"), payloads(t, c, "orders", 0))
	res, err = c.ReopenBroker(leader)
	require.NoError(t, err)
	require.Empty(t, res.Reopened, "nothing failed, nothing reopened")
}

func TestNoSpaceFollowerAppend(t *testing.T) {
	for _, how := range []string{"reopen then catch-up", "catch-up alone"} {
		t.Run(how, func(t *testing.T) {
			c, root, ffs := newFullDiskCluster(t, 3)
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			prod := NewProducer(c, "orders")
			sendN(t, prod, "k", 1)
			st := mustStatus(t, c)
			follower := st.Followers[0]

			ffs.SetFault(logtest.FullDisk(under(root, brokerDir(follower))))
			_, err := prod.Send(nil, []byte("not acked"))
			var re *ReplicationError
			require.ErrorAs(t, err, &re)
			require.Equal(t, []int{follower}, re.BrokerIDs)
			require.True(t, durable.NoSpace(err), "%v", err)
			require.Equal(t, []string{"a"}, payloads(t, c, "orders", 0), "nothing unacknowledged is served")
			ffs.SetFault(nil)

			if how == "reopen then catch-up" {
				res, err := c.ReopenBroker(follower)
				require.NoError(t, err)
				require.Equal(t, []ReplicaRef{{"orders", 0}}, res.Reopened)
			}
			cu, err := c.CatchUp("orders", 0, follower)
			require.NoError(t, err)
			require.Equal(t, 1, cu.Copied)
			_, err = prod.Send(nil, []byte("b"))
			require.NoError(t, err)
			require.Equal(t, []string{"a", "not acked", "b"}, payloads(t, c, "orders", 0))
		})
	}
}

func TestNoSpaceCatchUpCopy(t *testing.T) {
	c, root, ffs := newFullDiskCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 1)
	follower := mustStatus(t, c).Followers[0]
	require.NoError(t, c.StopBroker(follower))
	_, err := prod.Send(nil, []byte("missed"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	_, err = c.StartBroker(follower)
	require.NoError(t, err)

	ffs.SetFault(logtest.FullDisk(under(root, brokerDir(follower))))
	_, err = c.CatchUp("orders", 0, follower)
	require.True(t, durable.NoSpace(err), "%v", err)
	ffs.SetFault(nil)
	cu, err := c.CatchUp("orders", 0, follower)
	require.NoError(t, err, "the catch-up reopens the failed follower itself")
	require.Equal(t, 1, cu.Copied)
	require.Equal(t, uint64(2), *mustStatus(t, c).Replicas[0].LogEnd)
}

func TestNoSpaceRecovery(t *testing.T) {
	for _, where := range []string{"quarantine", "truncate"} {
		t.Run(where, func(t *testing.T) {
			c, root, ffs := newFullDiskCluster(t, 3)
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			prod := NewProducer(c, "orders")
			sendN(t, prod, "k", 2)
			leader := mustStatus(t, c).Leader
			others := mustStatus(t, c).Followers
			for _, id := range others {
				require.NoError(t, c.StopBroker(id))
			}
			_, err := prod.Send(nil, []byte("unacked"))
			require.ErrorIs(t, err, ErrReplicationFailed)
			require.NoError(t, c.StopBroker(leader))
			for _, id := range others {
				_, err := c.StartBroker(id)
				require.NoError(t, err)
			}
			_, err = c.Failover("orders", 0)
			require.NoError(t, err)
			_, err = c.StartBroker(leader)
			require.NoError(t, err)

			logFile := replicaPath(root, leader, "orders", 0)
			match := func(p string) bool { return strings.Contains(p, "quarantine-") }
			if where == "truncate" {
				match = func(p string) bool { return p == logFile }
			}
			ffs.SetFault(logtest.FullDisk(match))
			_, err = c.RecoverReplica("orders", 0, leader)
			require.True(t, durable.NoSpace(err), "%v", err)
			require.NotContains(t, mustStatus(t, c).Active, leader)
			ffs.SetFault(nil)
			rr, err := c.RecoverReplica("orders", 0, leader)
			require.NoError(t, err)
			require.Equal(t, 1, rr.Dropped)
			require.Contains(t, mustStatus(t, c).Active, leader)
			require.Len(t, readAll(t, logFile), 2)
		})
	}
}

func TestNoSpaceClusterMeta(t *testing.T) {
	c, root, ffs := newFullDiskCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	ffs.SetFault(logtest.FullDisk(under(root, MetaFileName)))
	_, err := c.Deactivate("orders", 0, mustStatus(t, c).Followers[0])
	require.True(t, durable.NoSpace(err), "%v", err)
	require.Len(t, mustStatus(t, c).Active, 3, "nothing changed")
	ffs.SetFault(nil)
	_, err = c.Deactivate("orders", 0, mustStatus(t, c).Followers[0])
	require.NoError(t, err, "cluster.meta was restored: not sticky")
	require.Len(t, mustStatus(t, c).Active, 2)
}

func TestNoSpaceJournal(t *testing.T) {
	c, root, ffs := newFullDiskCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	follower := mustStatus(t, c).Followers[0]
	_, err := c.Deactivate("orders", 0, follower) // the journal exists
	require.NoError(t, err)
	_, err = c.RecoverReplica("orders", 0, follower)
	require.NoError(t, err)

	ffs.SetFault(logtest.FullDisk(under(root, "journal")))
	_, err = c.Deactivate("orders", 0, follower)
	require.True(t, durable.NoSpace(err), "%v", err)
	require.Len(t, mustStatus(t, c).Active, 3, "nothing changed: the intent comes first")
	ffs.SetFault(nil)
	// Space is back: the next entry opens the journal anew from disk and
	// is written, without an operator reopening anything (the controller
	// journals what it does to heal after the disk).
	_, err = c.Deactivate("orders", 0, follower)
	require.NoError(t, err)
	require.Len(t, mustStatus(t, c).Active, 2)
	res, err := c.ReopenBroker(1)
	require.NoError(t, err)
	require.False(t, res.Journal, "nothing left to reopen")
	entries, err := c.Journal(0, 100)
	require.NoError(t, err)
	require.Equal(t, EventDeactivate, entries[len(entries)-1].Event, "the entry written after the disk came back is read back")
}

func TestNoSpaceCreateTopic(t *testing.T) {
	c, root, ffs := newFullDiskCluster(t, 3)
	ffs.SetFault(logtest.FullDisk(under(root, brokerDir(2))))
	err := c.CreateTopic("orders", 3, 3)
	require.True(t, durable.NoSpace(err), "%v", err)
	_, err = c.Topic("orders")
	require.ErrorIs(t, err, ErrUnknownTopic)
	ffs.SetFault(nil)
	require.NoError(t, c.CreateTopic("payments", 1, 3))
}

func TestReopenBrokerRefusals(t *testing.T) {
	c, _ := newCluster(t, 2)
	_, err := c.ReopenBroker(0)
	require.ErrorIs(t, err, ErrInvalidBrokerID)
	_, err = c.ReopenBroker(9)
	require.ErrorIs(t, err, ErrUnknownBroker)
	require.NoError(t, c.StopBroker(2))
	_, err = c.ReopenBroker(2)
	require.ErrorIs(t, err, ErrBrokerUnavailable)
}
