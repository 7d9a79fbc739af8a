package cluster

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// TestCrashSimDeleteTopic pins docs/design.md § Deleting a topic under
// crashes: a process deleting a topic is killed before each of its
// file-system steps in turn. For every step, three starts must each find
// the topic whole or gone and open without error:
//
//   - a power loss at the kill (only what was synced survives);
//   - the next process, which sees what the killed one left in the page
//     cache;
//   - a power loss right after that next process opened.
//
// Whole: in cluster.meta, readable, every acknowledged record and the
// committed offset still there, the journal's intent (if any) failed or
// rolled back. Gone: not in cluster.meta, no broker directory or offset
// file of it left once the cluster is open, the intent done or completed;
// created again, it is empty and no consumer has an offset on it. Another
// topic is never touched.
func TestCrashSimDeleteTopic(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	c, prepared := prepareOrders(t)
	require.NoError(t, c.CreateTopic("keep", 1, crashBrokers))
	sent := sendN(t, NewProducer(c, "orders"), "k", 3)
	kept := sendN(t, NewProducer(c, "keep"), "k", 1)
	commit(t, c, "billing", "orders", 0, 2)
	commit(t, c, "billing", "keep", 0, 1)
	require.NoError(t, c.Close())

	life := crashLife(1, func(cl *Cluster) { _, _ = cl.DeleteTopic("orders") })
	check := func(t *testing.T, cl *Cluster, root string) (JournalPhase, bool) {
		t.Helper()
		phase, gone := checkDeletion(t, cl, "orders")
		if gone {
			requireNoTopicFiles(t, root, crashBrokers, "orders")
			_, ok := loadOffset(t, cl, "billing", "orders", 0)
			require.False(t, ok)
		} else {
			got, err := cl.ReadCommitted("orders", 0, 0, 10)
			require.NoError(t, err)
			require.Len(t, got, len(sent))
			for i, r := range sent {
				require.Equal(t, r.Offset, got[i].Offset)
				require.Equal(t, r.Timestamp, got[i].Timestamp)
			}
			off, ok := loadOffset(t, cl, "billing", "orders", 0)
			require.True(t, ok)
			require.Equal(t, uint64(2), off)
		}
		got, err := cl.ReadCommitted("keep", 0, 0, 10)
		require.NoError(t, err)
		require.Len(t, got, len(kept))
		off, ok := loadOffset(t, cl, "billing", "keep", 0)
		require.True(t, ok)
		require.Equal(t, uint64(1), off)
		return phase, gone
	}

	steps := countSteps(t, prepared, life)
	seen := map[JournalPhase]bool{}
	defer func() { requireEveryOutcome(t, seen) }()
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprintf("dies before step %d of %d", n, steps), func(t *testing.T) {
			root, crash := killDuring(t, prepared, n, life)

			// A power loss at the kill.
			lost := openCrashed(t, crashInto(t, crash))
			check(t, lost, lost.Root())
			require.NoError(t, lost.Close())

			// The next process.
			cl := openAfterKill(t, root, crash)
			phase, gone := check(t, cl, root)
			seen[phase] = true
			require.NoError(t, cl.Close())

			// A power loss after it opened: it decided on durable ground.
			after := openCrashed(t, crashInto(t, crash))
			phase2, gone2 := check(t, after, after.Root())
			require.Equal(t, gone, gone2, "what the next process saw is durable")
			require.Equal(t, phase, phase2)

			if gone {
				require.NoError(t, after.CreateTopic("orders", 1, crashBrokers))
				hw, err := after.HighWatermark("orders", 0)
				require.NoError(t, err)
				require.Zero(t, hw, "created again: empty")
				_, ok := loadOffset(t, after, "billing", "orders", 0)
				require.False(t, ok, "created again: no old offset")
			} else {
				_, err := after.DeleteTopic("orders")
				require.NoError(t, err, "a topic left whole can be deleted")
			}
			res, err := NewProducer(after, "orders").Send(nil, []byte("after"))
			if gone {
				require.NoError(t, err)
				require.Zero(t, res.Offset)
			} else {
				require.ErrorIs(t, err, ErrUnknownTopic)
			}
		})
	}
}

// checkDeletion is the promise of docs/design.md § The journal for a
// deletion after a crash: the deletion's intent, if written, has exactly
// one outcome, and it agrees with cluster.meta — done or completed when
// the topic is gone from it, failed or rolled back when it is there. It
// returns the outcome's phase ("" when there was no intent) and whether
// the topic is gone.
func checkDeletion(t *testing.T, c *Cluster, name string) (JournalPhase, bool) {
	t.Helper()
	_, present := c.Metadata().Topics[name]
	_, err := c.Topic(name)
	require.Equal(t, present, err == nil, "memory agrees with cluster.meta")
	entries := journalOf(t, c)
	var intent *JournalEntry
	for i, e := range entries {
		if e.Event == EventDeleteTopic && e.Phase == PhaseIntent {
			require.Nil(t, intent, "one intent")
			intent = &entries[i]
		}
	}
	if intent == nil {
		require.True(t, present, "no intent: nothing deleted")
		return "", false
	}
	require.Equal(t, name, intent.Topic)
	out := oneOutcome(t, entries, intent.Offset)
	require.Equal(t, name, out.Topic)
	switch out.Phase {
	case PhaseDone, PhaseCompleted:
		require.False(t, present, "%s: the topic is gone from cluster.meta", out.Phase)
		return out.Phase, true
	case PhaseFailed, PhaseRolledBack:
		require.True(t, present, "%s: the topic is in cluster.meta", out.Phase)
		return out.Phase, false
	}
	t.Fatalf("outcome phase %q", out.Phase)
	return out.Phase, false
}

// A process killed while it finishes, at start-up, a deletion an earlier
// process committed opens again with the topic gone: the removal is
// repeated until an Open gets through it.
func TestCrashSimDeleteTopicFinishedAtOpen(t *testing.T) {
	c, prepared := prepareOrders(t)
	sendN(t, NewProducer(c, "orders"), "k", 2)
	commit(t, c, "billing", "orders", 0, 2)
	require.NoError(t, c.Close())
	// The first process stops right after the commit point: the process
	// that wrote cluster.meta got no further.
	first := crashLife(1, func(cl *Cluster) { _, _ = cl.DeleteTopic("orders") })
	committed := filepath.Join(t.TempDir(), "committed")
	{
		steps := countSteps(t, prepared, first)
		// Find the first kill that leaves the topic gone.
		for n := 1; n <= steps; n++ {
			root, crash := killDuring(t, prepared, n, first)
			m, found, err := ReadClusterMeta(crash, filepath.Join(root, MetaFileName))
			require.NoError(t, err)
			require.True(t, found)
			if _, ok := m.Topics["orders"]; !ok {
				committed = filepath.Dir(root)
				break
			}
		}
	}
	prepared = filepath.Join(committed, "cluster")
	reopenOnly := func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys})
		if err == nil {
			_ = cl.Close()
		}
	}
	steps := countSteps(t, prepared, reopenOnly)
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprintf("open dies before step %d of %d", n, steps), func(t *testing.T) {
			root, crash := killDuring(t, prepared, n, reopenOnly)
			cl := openAfterKill(t, root, crash)
			phase, gone := checkDeletion(t, cl, "orders")
			require.True(t, gone)
			require.Equal(t, PhaseCompleted, phase)
			requireNoTopicFiles(t, root, crashBrokers, "orders")
		})
	}
}
