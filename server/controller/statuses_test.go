package controller

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
)

// slowStatus is a cluster whose partitions' statuses each take wait to
// read, as in cluster mode when their leader is paused or its link holds
// its bytes: the status waits for the leader's answer until its bound.
type slowStatus struct {
	*cluster.Cluster
	wait time.Duration
}

func (s slowStatus) Observe(topicName string, partition int) (cluster.PartitionStatus, error) {
	time.Sleep(s.wait)
	return s.Cluster.Observe(topicName, partition)
}

// threeBrokers is a cluster of brokers 1 to 3 with topic "t" of
// partitions partitions, replication factor 3, closed when the test ends.
func threeBrokers(t *testing.T, partitions int) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.Open(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cl.Close()) })
	for id := 1; id <= 3; id++ {
		_, err := cl.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, cl.CreateTopic("t", partitions, 3))
	return cl
}

// A pass reads the statuses of many partitions at once: partitions whose
// leader answers nothing cost the pass one status wait, not one each, so
// that the failovers the pass decides are not held back by them. Time is
// synctest's.
func TestPassReadsStatusesTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const partitions = 6
		cl := threeBrokers(t, partitions)
		const wait = time.Second
		k, err := New(slowStatus{cl, wait}, Config{})
		require.NoError(t, err)

		start := time.Now()
		in, err := k.observe()
		require.NoError(t, err)
		require.Len(t, in.Partitions, partitions, "every partition's status, in order")
		for i, p := range in.Partitions {
			require.Equal(t, i, p.Partition)
		}
		require.Equal(t, wait, time.Since(start), "%d slow statuses cost one wait, not %d", partitions, partitions)
	})
}

// slowApply is a cluster whose every operation takes wait, as a failover
// in cluster mode takes a journal entry and a Raft commit or two.
type slowApply struct {
	*cluster.Cluster
	wait time.Duration
}

func (s slowApply) Apply(a cluster.Action) (cluster.ApplyResult, error) {
	time.Sleep(s.wait)
	return s.Cluster.Apply(a)
}

// A pass carries out different partitions' actions side by side: a
// broker that led or followed many partitions costs the pass one
// operation's time, not one each, and the outcomes come back in the
// plan's order. Time is synctest's.
func TestPassActsOnPartitionsTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const partitions = 6
		cl := threeBrokers(t, partitions)
		const wait = 100 * time.Millisecond
		k, err := New(slowApply{cl, wait}, Config{FailoverAfter: time.Second})
		require.NoError(t, err)
		_, err = k.Step()
		require.NoError(t, err)

		require.NoError(t, cl.StopBroker(1))
		_, err = k.Step() // sees broker 1 down
		require.NoError(t, err)
		time.Sleep(time.Second)
		start := time.Now()
		out, err := k.Step()
		require.NoError(t, err)
		require.Len(t, out, partitions, "every partition loses broker 1: a failover or a deactivation each")
		for i, o := range out {
			require.NoError(t, o.Err)
			require.Equal(t, i, o.Action.Partition, "in the plan's order")
		}
		require.Equal(t, wait, time.Since(start), "%d operations side by side cost one operation's time", partitions)
	})
}
