package backend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// woken reports whether ch holds a wake-up, taking it.
func woken(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A watcher is woken by the partitions it watches and no other; a watcher
// of every partition by any; after stop, by none.
func TestHubWakesWatchers(t *testing.T) {
	h := NewHub()
	orders0, all := make(chan struct{}, 1), make(chan struct{}, 1)
	stop := h.Watch(orders0, Partition{"orders", 0}, Partition{"audit", 2})
	stopAll := h.WatchAll(all)

	h.Advanced("orders", 1, 5)
	require.False(t, woken(orders0), "another partition")
	require.True(t, woken(all))
	h.Advanced("orders", 0, 6)
	require.True(t, woken(orders0))
	require.True(t, woken(all))
	h.Advanced("audit", 2, 1)
	require.True(t, woken(orders0))
	require.True(t, woken(all))

	stop()
	stopAll()
	h.Advanced("orders", 0, 7)
	require.False(t, woken(orders0))
	require.False(t, woken(all))
	require.Empty(t, h.byPartition, "stop leaves nothing behind")
}

// Advanced never blocks (it runs under the cluster's partition lock):
// wake-ups a watcher has not taken coalesce into the one it holds.
func TestHubAdvancedNeverBlocks(t *testing.T) {
	h := NewHub()
	ch := make(chan struct{}, 1)
	defer h.Watch(ch, Partition{"orders", 0})()
	for i := range 100 {
		h.Advanced("orders", 0, uint64(i))
	}
	require.True(t, woken(ch))
	require.False(t, woken(ch), "a hundred rises, one wake-up")
}
