package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// tree lists everything under root, directories with a trailing slash.
func tree(t *testing.T, root string) []string {
	t.Helper()
	out, err := logtest.Tree(root)
	require.NoError(t, err)
	return out
}

// fixture is a topic with records and an offset store, in temp dirs.
type fixture struct {
	topic      *topic.Topic
	store      *OffsetStore
	offsetRoot string
}

// newFixture creates topic "orders" with the given partitions and sends
// records "r0", "r1", ... to partition 0 under a key that routes there.
func newFixture(t *testing.T, partitions, records int) *fixture {
	t.Helper()
	tp, err := topic.Open(t.TempDir(), "orders", partitions)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	root := filepath.Join(t.TempDir(), "offsets")
	store, err := OpenOffsetStore(root)
	require.NoError(t, err)
	f := &fixture{topic: tp, store: store, offsetRoot: root}
	f.produce(t, records)
	return f
}

// key0 returns a key that PartitionForKey sends to partition 0 of n.
func key0(n int) []byte {
	for i := 0; ; i++ {
		k := []byte{byte(i)}
		if topic.PartitionForKey(k, n) == 0 {
			return k
		}
	}
}

func (f *fixture) produce(t *testing.T, n int) {
	t.Helper()
	p := NewProducer(f.topic)
	start, err := f.topic.NextOffset(0)
	require.NoError(t, err)
	for i := range n {
		res, err := p.Send(key0(f.topic.PartitionCount()), []byte{'r', byte('0' + (int(start)+i)%10)})
		require.NoError(t, err)
		require.Equal(t, 0, res.Partition)
	}
}

func (f *fixture) consumer(t *testing.T, id string) *Consumer {
	t.Helper()
	c, err := NewConsumer(ConsumerConfig{ID: id, Topic: f.topic, Partition: 0, Offsets: f.store})
	require.NoError(t, err)
	return c
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
