package kafka_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

// saramaHandler consumes every claim, marking each message, and
// commits; read signals once want messages were processed.
type saramaHandler struct {
	mu   sync.Mutex
	got  map[int32][]int64
	want int
	read chan struct{}
	once sync.Once
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		s.MarkMessage(msg, "")
		s.Commit()
		h.mu.Lock()
		h.got[msg.Partition] = append(h.got[msg.Partition], msg.Offset)
		n := 0
		for _, offs := range h.got {
			n += len(offs)
		}
		h.mu.Unlock()
		if n >= h.want {
			h.once.Do(func() { close(h.read) })
		}
	}
	return nil
}

// TestKafkaGroupSarama: sarama's consumer group — another implementation
// of the join/sync protocol — joins, consumes both partitions of a topic
// from the oldest offset, commits as it goes into PyStream's offset
// store (group id = consumer id), and leaves: the group is empty after
// its Close.
func TestKafkaGroupSarama(t *testing.T) {
	f := startGroups(t, 2, 2, 2)
	f.produceEach(t, 2, 3)
	var seeds []string
	for _, b := range f.c.Brokers() {
		seeds = append(seeds, f.srv.Addr(b.ID))
	}
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Session.Timeout = time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cg, err := sarama.NewConsumerGroup(seeds, "sarama-billing", cfg)
	require.NoError(t, err)
	h := &saramaHandler{got: map[int32][]int64{}, want: 6, read: make(chan struct{})}
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var err error
		for c.Err() == nil && err == nil {
			err = cg.Consume(c, []string{"events"}, h)
		}
		done <- err
	}()
	select {
	case <-h.read:
	case err := <-cg.Errors():
		t.Fatalf("sarama group: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("sarama read nothing in 10 s")
	}
	d, ok := f.groups.Describe("sarama-billing")
	require.True(t, ok)
	require.Len(t, d.Members, 1)
	require.Equal(t, "range", d.Assignor)
	require.Len(t, d.Members[0].Assigned, 1)
	require.Equal(t, []int32{0, 1}, d.Members[0].Assigned[0].Partitions)

	cancel()
	require.NoError(t, <-done)
	require.NoError(t, cg.Close())
	h.mu.Lock()
	require.Equal(t, map[int32][]int64{0: {0, 1, 2}, 1: {0, 1, 2}}, h.got)
	h.mu.Unlock()
	store, err := f.c.OffsetStore()
	require.NoError(t, err)
	for p := range 2 {
		off, ok, err := store.Load("sarama-billing", "events", p)
		require.NoError(t, err)
		require.True(t, ok, "partition %d committed", p)
		require.Equal(t, uint64(3), off)
	}
	_, ok = f.groups.Describe("sarama-billing")
	require.False(t, ok, "sarama left the group")
}
