package cluster

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Keyed writes to a topic go on while partitions are added to it: every
// write succeeds on a partition the topic has, and the topic ends with
// the new count.
func TestAddPartitionsDuringWrites(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := NewProducer(c, "orders")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				if _, err := prod.Send([]byte{byte(w), byte(i)}, []byte("x")); err != nil {
					errs <- err
				}
			}
		}()
	}
	require.NoError(t, c.AddPartitions("orders", 4))
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 4, c.Metadata().Topics["orders"].PartitionCount)
}
