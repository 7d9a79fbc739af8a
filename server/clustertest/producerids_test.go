package clustertest_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clustertest"
)

// TestClustertestProducerIDs: producer ids are unique across the cluster
// (docs/design.md § Producer id blocks). Callers on every node at once get
// ids no other caller gets; once the metadata group's leader stops, every
// block reserved after it starts above every id handed out before, and a
// node that restarts skips its unused ids.
func TestClustertestProducerIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clustertest.Start(t, 3, clustertest.Options{})
		var mu sync.Mutex // guards owner
		owner := map[int64]int{}
		take := func(node int) (int64, error) {
			id, err := c.Via(node).NewProducerID(c.Ctx())
			if err != nil {
				return 0, err
			}
			mu.Lock()
			defer mu.Unlock()
			if other, ok := owner[id]; ok {
				return 0, fmt.Errorf("producer id %d handed out by node %d and by node %d", id, other, node)
			}
			owner[id] = node
			return id, nil
		}
		highest := func() int64 {
			mu.Lock()
			defer mu.Unlock()
			return slices.Max(slices.Collect(maps.Keys(owner)))
		}

		// Three callers on each node at once.
		var wg sync.WaitGroup
		errs := make(chan error, 9)
		for _, node := range c.IDs() {
			for range 3 {
				wg.Go(func() {
					for range 20 {
						if _, err := take(node); err != nil {
							errs <- err
							return
						}
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, owner, 180)
		require.Less(t, highest(), int64(3*cluster.ProducerIDBlock), "one block per node")

		// The metadata group's leader stops: the rest reserve their next
		// blocks through the new one.
		ctl := c.Controller()
		before := highest()
		c.Stop(ctl)
		c.Await("a new controller", func() (bool, string) {
			now := c.Controller()
			return now != 0 && now != ctl, fmt.Sprintf("controller %d", now)
		})
		for _, node := range c.Running() {
			// A node has handed out at least one id of its block, so a
			// whole block more takes it into a new one.
			var last int64
			for range cluster.ProducerIDBlock {
				id, err := take(node)
				require.NoError(t, err)
				last = id
			}
			require.Greater(t, last, before, "node %d's block after the failover", node)
		}

		// The old leader comes back as a new process: its unused ids are
		// skipped.
		before = highest()
		c.Restart(ctl)
		c.AwaitReady()
		id, err := take(ctl)
		require.NoError(t, err)
		require.Greater(t, id, before, "node %d after its restart", ctl)
		require.Len(t, owner, 180+2*cluster.ProducerIDBlock+1)
	})
}
