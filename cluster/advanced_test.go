package cluster

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// TestAdvancedToldWhenHighWatermarkRises pins Options.Advanced: every rise
// of a partition's high watermark — an acknowledged write, a catch-up that
// lets a read see records the active replicas now all hold — is told, in
// order, and nothing is told when it does not rise.
func TestAdvancedToldWhenHighWatermarkRises(t *testing.T) {
	type rise struct {
		topic     string
		partition int
		hw        uint64
	}
	var mu sync.Mutex
	var told []rise
	c, err := OpenWithOptions(t.TempDir(), Options{Advanced: func(topic string, partition int, hw uint64) {
		mu.Lock()
		told = append(told, rise{topic, partition, hw})
		mu.Unlock()
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("t", 2, 3))
	p := NewProducer(c, "t")
	_, err = p.SendBatchTo(1, []topic.Message{{Payload: []byte("a")}, {Payload: []byte("b")}})
	require.NoError(t, err)
	_, err = p.SendBatchTo(1, []topic.Message{{Payload: []byte("c")}})
	require.NoError(t, err)
	_, err = c.HighWatermark("t", 1) // a read that finds nothing new
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []rise{{"t", 1, 2}, {"t", 1, 3}}, told)
}
