package cluster

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// stoppedLeaderCluster is a 3-broker cluster whose cluster.meta goes
// through ffs, with topic orders (1 partition, rf 3) and its leader
// stopped.
func stoppedLeaderCluster(t *testing.T) (*Cluster, *logtest.FaultFS) {
	t.Helper()
	ffs := logtest.NewFaultFS(nil)
	c, err := OpenWithOptions(t.TempDir(), Options{FS: ffs, Broker: BrokerOptions{FS: durable.OS}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendN(t, NewProducer(c, "orders"), "k", 1)
	require.NoError(t, c.StopBroker(1))
	return c, ffs
}

func diskLeader(t *testing.T, c *Cluster) int {
	t.Helper()
	b, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)
	m, err := ParseClusterMeta(b)
	require.NoError(t, err)
	return m.Topics["orders"].Partitions[0].Leader
}

// docs/phase-5-failover.md § Candidate selection and safety checks: every
// leadership change is committed by writing it, so metadata and memory never
// disagree: if the write fails, the failover is not reported and the old
// leader stays recorded. A write of cluster.meta can fail after its rename,
// when only the directory fsync is left: the new file is then already in
// place. The cluster must not keep the old leader in memory while the file
// names the new one; it puts the old content back, so that a failed failover
// is not half done.
func TestMetaWriteFailureAfterRenameRestoresFile(t *testing.T) {
	c, ffs := stoppedLeaderCluster(t)
	before, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)

	ffs.SetFault(logtest.FailNth(logtest.OpSyncDir, 1))
	_, err = c.Failover("orders", 0)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)
	require.Equal(t, 1, diskLeader(t, c), "cluster.meta and memory must agree")
	after, err := os.ReadFile(c.MetaPath())
	require.NoError(t, err)
	require.Equal(t, before, after)

	// Nothing is left half done: the failover can simply be retried.
	ffs.SetFault(nil)
	fo, err := c.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 2, fo.NewLeaderBrokerID)
	require.Equal(t, 2, diskLeader(t, c))
}

// When even putting the old content back fails, the file's content is no longer
// known to match memory. Like every writer after a failed fsync
// (docs/design.md § Sticky failure), the cluster then refuses every later
// change of cluster.meta until it is reopened, instead of deciding on a state
// it cannot vouch for.
func TestMetaWriteFailureUnrecoverableIsSticky(t *testing.T) {
	c, ffs := stoppedLeaderCluster(t)
	ffs.SetFault(logtest.FailFrom(logtest.OpSyncDir, 1))
	_, err := c.Failover("orders", 0)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)

	ffs.SetFault(nil)
	_, err = c.Failover("orders", 0)
	require.ErrorIs(t, err, ErrMetadataFailed)
	_, err = c.StartBroker(4) // a new id is a change of cluster.meta
	require.ErrorIs(t, err, ErrMetadataFailed)
	require.Equal(t, []int{1, 2, 3}, c.Metadata().Brokers)
	require.Equal(t, 1, c.Metadata().Topics["orders"].Partitions[0].Leader)

	// Reopening reads whatever the file holds and starts afresh.
	root := c.Root()
	require.NoError(t, c.Close())
	c2, err := Open(root)
	require.NoError(t, err)
	defer c2.Close()
	for id := 2; id <= 3; id++ {
		_, err := c2.StartBroker(id)
		require.NoError(t, err)
	}
	fo, err := c2.Failover("orders", 0)
	require.NoError(t, err)
	require.Equal(t, 2, fo.NewLeaderBrokerID)
}
