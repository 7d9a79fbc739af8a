package cluster

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrashSimCreateTopic pins the crash safety of CreateTopic (create.go):
// a process creating a topic is killed before each of its file-system
// steps in turn. For every step, a power loss at the kill, the next
// process, and a power loss after that next process opened must each open
// without error and find the topic whole (in cluster.meta, every partition
// readable, empty, and writable) or absent — and then a creation of the
// same name succeeds with empty partitions. No kill leaves a half topic
// that blocks either. Another topic is never touched.
func TestCrashSimCreateTopic(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	const partitions = 3
	c, prepared := prepareOrders(t)
	kept := sendN(t, NewProducer(c, "orders"), "k", 2)
	require.NoError(t, c.Close())

	life := crashLife(1, func(cl *Cluster) { _ = cl.CreateTopic("fresh", partitions, crashBrokers) })
	check := func(t *testing.T, cl *Cluster) bool {
		t.Helper()
		got, err := cl.ReadCommitted("orders", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, got, len(kept))
		_, inMeta := cl.Metadata().Topics["fresh"]
		info, err := cl.Topic("fresh")
		require.Equal(t, inMeta, err == nil, "memory agrees with cluster.meta")
		if !inMeta {
			return false
		}
		require.Equal(t, partitions, info.PartitionCount)
		for p := range partitions {
			recs, err := cl.ReadCommitted("fresh", p, 0, 10)
			require.NoError(t, err, "partition %d whole", p)
			require.Empty(t, recs)
		}
		return true
	}
	requireCreatable := func(t *testing.T, cl *Cluster, whole bool) {
		t.Helper()
		err := cl.CreateTopic("fresh", partitions, crashBrokers)
		if whole {
			var exists *TopicExistsError
			require.ErrorAs(t, err, &exists)
			require.True(t, exists.SameSettings)
		} else {
			require.NoError(t, err, "a crashed creation does not block the next")
		}
		for p := range partitions {
			hw, err := cl.HighWatermark("fresh", p)
			require.NoError(t, err)
			require.Zero(t, hw)
		}
		res, err := NewProducer(cl, "fresh").Send(nil, []byte("after"))
		require.NoError(t, err)
		require.Zero(t, res.Offset)
	}

	steps := countSteps(t, prepared, life)
	var mu sync.Mutex
	seen := map[bool]bool{}
	// The runs are independent (each in its own directories) and mostly
	// wait for fsyncs, so they run in parallel; the group returns once all
	// have.
	t.Run("every step", func(t *testing.T) {
		for n := 1; n <= steps+1; n++ {
			t.Run(fmt.Sprintf("dies before step %d of %d", n, steps), func(t *testing.T) {
				t.Parallel()
				root, crash := killDuring(t, prepared, n, life)

				lost := openCrashed(t, crashInto(t, crash))
				requireCreatable(t, lost, check(t, lost))
				require.NoError(t, lost.Close())

				cl := openAfterKill(t, root, crash)
				whole := check(t, cl)
				mu.Lock()
				seen[whole] = true
				mu.Unlock()
				require.NoError(t, cl.Close())

				after := openCrashed(t, crashInto(t, crash))
				require.Equal(t, whole, check(t, after), "what the next process saw is durable")
				requireCreatable(t, after, whole)
			})
		}
	})
	require.True(t, seen[true] && seen[false], "kills before and after the commit point: %v", seen)
}
