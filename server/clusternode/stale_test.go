package clusternode_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
)

// TestStaleReportNoCatchUp pins the controller's rule on its inputs
// (docs/phase-7-processes.md § Failure detection): it decides about a
// replica only on a report that reached it after its last decision about
// that replica — here, after it first saw the follower behind and chose to
// wait for the write in flight. Right after writes to a new topic, each
// follower's last heartbeat still shows the log end it had before them,
// while the leader's log end is asked of it now; every write reached every
// active follower before it was acknowledged, so no follower needs a
// catch-up: the controller attempts none (its actions counter) and the
// journal holds none, neither done nor refused.
func TestStaleReportNoCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		regs := map[int]*prometheus.Registry{}
		c := start(t, 3, clustertest.Options{FailoverAfter: 3 * time.Second, Configure: func(cfg *clusternode.Config) {
			reg := prometheus.NewRegistry()
			mu.Lock()
			regs[cfg.ID] = reg
			mu.Unlock()
			cfg.Registerer = reg
		}})
		ids := c.IDs()
		for round := range 3 {
			name := fmt.Sprintf("fresh-%d", round)
			require.NoError(t, c.Via(ids[round%3]).CreateTopic(name, 3, 3))
			for i := range 10 {
				for p := range 3 {
					send(t, c, ids[(i+p)%3], name, p, fmt.Sprintf("r%d", i))
				}
				time.Sleep(100 * time.Millisecond) // a pass or two between writes, a heartbeat every three
			}
			time.Sleep(time.Second)
			for p := range 3 {
				awaitEvery(c, "every replica level", ids, name, p, settled)
			}
		}

		mu.Lock()
		defer mu.Unlock()
		for id, reg := range regs {
			require.Empty(t, controllerActions(t, reg), "node %d's controller acted", id)
		}
		for _, id := range ids {
			for _, e := range journal(t, c, id) {
				require.NotEqual(t, cluster.EventCatchUp, e.Event, "a catch-up journaled on node %d: %+v", id, e)
			}
		}
	})
}

// controllerActions counts the controller's actions as its metrics
// registry has them, by "kind result"; only the counts above zero.
func controllerActions(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "pystream_controller_actions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key += l.GetValue() + " "
			}
			if v := m.GetCounter().GetValue(); v > 0 {
				out[key] = v
			}
		}
	}
	return out
}
