package cluster

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBrokerReplicaConcurrentCreate pins Broker's "safe for concurrent
// use" for Replica: callers that find a replica's log missing at the same
// moment and create it all get the one log, none an error that the file
// exists. The cluster-mode broker process (server/clusternode) opens a
// new partition's replica from its replica loop and from the first write
// at once.
func TestBrokerReplicaConcurrentCreate(t *testing.T) {
	b, err := OpenBroker(1, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	for p := range 20 {
		const callers = 8
		var wg sync.WaitGroup
		logs := make([]any, callers)
		errs := make([]error, callers)
		start := make(chan struct{})
		for i := range callers {
			wg.Go(func() {
				<-start
				l, err := b.Replica("orders", p, true)
				logs[i], errs[i] = l, err
			})
		}
		close(start)
		wg.Wait()
		for i := range callers {
			require.NoError(t, errs[i], "partition %d, caller %d", p, i)
			require.Same(t, logs[0], logs[i], "partition %d: one log per replica", p)
		}
	}
}
