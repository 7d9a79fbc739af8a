package cluster

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// Options.ParallelLeaderWrite keeps every guarantee of the ordered write:
// the leader assigns offsets and timestamps and every replica ends up
// byte-identical under concurrent producers.
func TestParallelLeaderWriteReplicasIdentical(t *testing.T) {
	root := t.TempDir()
	c, err := OpenWithOptions(root, Options{ParallelLeaderWrite: true})
	require.NoError(t, err)
	defer c.Close()
	for id := 1; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 2, 3))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for i := 0; i < 30; i++ {
				_, err := NewProducer(c, "orders").Send(nil, []byte(fmt.Sprint(w, "-", i)))
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	for p := 0; p < 2; p++ {
		first, err := os.ReadFile(replicaPath(root, 1, "orders", p))
		require.NoError(t, err)
		require.Len(t, readAll(t, replicaPath(root, 1, "orders", p)), 120)
		for id := 2; id <= 3; id++ {
			other, err := os.ReadFile(replicaPath(root, id, "orders", p))
			require.NoError(t, err)
			require.True(t, bytes.Equal(first, other))
		}
	}
}

// When the leader's own write fails in parallel mode, the followers that
// stored the batch are cut back, so no follower holds a record its leader
// lacks; the write is not acknowledged.
func TestParallelLeaderWriteLeaderFailureCutsBack(t *testing.T) {
	root := t.TempDir()
	c, err := OpenWithOptions(root, Options{ParallelLeaderWrite: true})
	require.NoError(t, err)
	defer c.Close()
	ffs := logtest.NewFaultFS(nil)
	b1, err := OpenBrokerWithOptions(1, root, BrokerOptions{FS: ffs})
	require.NoError(t, err)
	require.NoError(t, c.RegisterBroker(b1))
	for id := 2; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 2)

	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpSync && strings.Contains(path, "broker-000001") {
			return logtest.ErrInjected
		}
		return nil
	})
	_, err = prod.Send(nil, []byte("lost"))
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.NotErrorIs(t, err, ErrReplicationFailed)
	st := mustStatus(t, c)
	for _, r := range st.Replicas[1:] {
		require.Equal(t, u64(2), r.LogEnd, "broker %d cut back to the leader's acknowledged end", r.BrokerID)
	}
	require.Equal(t, uint64(2), st.HighWatermark)
}
