package cluster

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrashSimAddPartitions pins the crash safety of AddPartitions
// (grow.go), as TestCrashSimCreateTopic does CreateTopic's: a process
// growing a topic from 1 to 3 partitions is killed before each of its
// file-system steps in turn. For every step, a power loss at the kill,
// the next process, and a power loss after that next process opened must
// each open without error and find the topic with its old count (its
// records whole) or the new one with every new partition readable, empty
// and writable — and then a growth to the same count succeeds or finds
// the count reached. No kill leaves a half-grown topic that blocks either.
func TestCrashSimAddPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	const grown = 3
	c, prepared := prepareOrders(t)
	kept := sendN(t, NewProducer(c, "orders"), "k", 2)
	require.NoError(t, c.Close())

	life := crashLife(1, func(cl *Cluster) { _ = cl.AddPartitions("orders", grown) })
	check := func(t *testing.T, cl *Cluster) bool {
		t.Helper()
		got, err := cl.ReadCommitted("orders", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, got, len(kept))
		count := cl.Metadata().Topics["orders"].PartitionCount
		info, err := cl.Topic("orders")
		require.NoError(t, err)
		require.Equal(t, count, info.PartitionCount, "memory agrees with cluster.meta")
		if count == 1 {
			return false
		}
		require.Equal(t, grown, count)
		for p := 1; p < grown; p++ {
			recs, err := cl.ReadCommitted("orders", p, 0, 10)
			require.NoError(t, err, "partition %d whole", p)
			require.Empty(t, recs)
		}
		return true
	}
	requireGrowable := func(t *testing.T, cl *Cluster, whole bool) {
		t.Helper()
		err := cl.AddPartitions("orders", grown)
		if whole {
			require.ErrorIs(t, err, ErrInvalidPartitionCount, "grown already")
		} else {
			require.NoError(t, err, "a crashed growth does not block the next")
		}
		for p := range grown {
			hw, err := cl.HighWatermark("orders", p)
			require.NoError(t, err)
			if p > 0 {
				require.Zero(t, hw)
			}
		}
		res, err := NewProducer(cl, "orders").Send([]byte(keyFor(t, grown-1, grown)), []byte("after"))
		require.NoError(t, err)
		require.Equal(t, grown-1, res.Partition)
		require.Zero(t, res.Offset)
	}

	steps := countSteps(t, prepared, life)
	var mu sync.Mutex
	seen := map[bool]bool{}
	t.Run("every step", func(t *testing.T) {
		for n := 1; n <= steps+1; n++ {
			t.Run(fmt.Sprintf("dies before step %d of %d", n, steps), func(t *testing.T) {
				t.Parallel()
				root, crash := killDuring(t, prepared, n, life)

				lost := openCrashed(t, crashInto(t, crash))
				requireGrowable(t, lost, check(t, lost))
				require.NoError(t, lost.Close())

				cl := openAfterKill(t, root, crash)
				whole := check(t, cl)
				mu.Lock()
				seen[whole] = true
				mu.Unlock()
				require.NoError(t, cl.Close())

				after := openCrashed(t, crashInto(t, crash))
				require.Equal(t, whole, check(t, after), "what the next process saw is durable")
				requireGrowable(t, after, whole)
			})
		}
	})
	require.True(t, seen[true] && seen[false], "kills before and after the commit point: %v", seen)
}
