package client

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

// docs/phase-3-clients.md § Producer: Send reports topic, partition, offset
// and timestamp of the stored record; payload bytes stay bytes; key semantics
// are the topic's (golden routing, nil round robin, empty key hashed).
func TestProducerSendReportsWhereRecordsLanded(t *testing.T) {
	at := time.Unix(1700000000, 42)
	tp, err := topic.OpenWithOptions(t.TempDir(), "events", 3, topic.Options{Now: func() time.Time { return at }})
	require.NoError(t, err)
	defer tp.Close()
	p := NewProducer(tp)

	raw := []byte{0x00, 0xff, 0xfe, '"', '\n'} // not UTF-8, not JSON
	res, err := p.Send([]byte("user-123"), raw)
	require.NoError(t, err)
	require.Equal(t, SendResult{Topic: "events", Partition: 2, Offset: 0, Timestamp: at.UnixNano()}, res)
	recs, err := tp.Read(2, 0, 1)
	require.NoError(t, err)
	require.Equal(t, raw, recs[0].Payload, "no encoding of any kind")

	res, err = p.Send([]byte{}, []byte("e"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Partition, "empty key is a real key")
	var parts []int
	for range 4 {
		res, err = p.Send(nil, []byte("n"))
		require.NoError(t, err)
		parts = append(parts, res.Partition)
	}
	require.Equal(t, []int{0, 1, 2, 0}, parts)
}

// docs/phase-3-clients.md § Producer: a producer borrows its topic and never
// closes it.
func TestProducerNeverClosesTopic(t *testing.T) {
	tp, err := topic.Open(t.TempDir(), "borrowed", 1)
	require.NoError(t, err)
	defer tp.Close()
	p := NewProducer(tp)
	_, err = p.Send(nil, []byte("x"))
	require.NoError(t, err)
	p = nil
	_, err = tp.Append(nil, []byte("still open"))
	require.NoError(t, err)
	_, err = NewProducer(nil).Send(nil, []byte("x"))
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// docs/phase-3-clients.md § Producer: a producer is safe for concurrent use;
// offsets per partition are dense and unique.
func TestProducerConcurrentSends(t *testing.T) {
	tp, err := topic.Open(t.TempDir(), "conc", 2)
	require.NoError(t, err)
	defer tp.Close()
	p := NewProducer(tp)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[[2]uint64]bool{}
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				res, err := p.Send(nil, []byte(fmt.Sprint(g, i)))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[[2]uint64{uint64(res.Partition), res.Offset}] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, 200)
	for _, part := range []uint64{0, 1} {
		for off := range uint64(100) {
			require.True(t, seen[[2]uint64{part, off}], "partition %d offset %d", part, off)
		}
	}
}

// docs/phase-3-clients.md § Producer: SendBatch returns results in input
// order; on a partial failure it returns every result and the
// *topic.BatchError naming the refused partitions.
func TestProducerSendBatch(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	tp, err := topic.OpenWithOptions(t.TempDir(), "batch", 2, topic.Options{FS: ffs})
	require.NoError(t, err)
	defer tp.Close()
	p := NewProducer(tp)

	res, err := p.SendBatch([]topic.Message{{Key: []byte("user-123"), Payload: []byte("a")}, {Payload: []byte("b")}, {Payload: []byte("c")}})
	require.NoError(t, err)
	require.Len(t, res, 3)
	for _, r := range res {
		require.Equal(t, "batch", r.Topic)
		require.NotZero(t, r.Timestamp)
	}
	require.Equal(t, []int{topic.PartitionForKey([]byte("user-123"), 2), 0, 1}, []int{res[0].Partition, res[1].Partition, res[2].Partition})

	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpSync && strings.Contains(path, topic.PartitionDir(1)) {
			return logtest.ErrInjected
		}
		return nil
	})
	res, err = p.SendBatch([]topic.Message{{Payload: []byte("d")}, {Payload: []byte("e")}})
	var be *topic.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, res, 2)
	for _, r := range res {
		if be.Failed(r.Partition) {
			require.Zero(t, r.Timestamp, "not acknowledged")
		} else {
			require.NotZero(t, r.Timestamp, "acknowledged")
		}
	}
	require.True(t, be.Failed(1) && !be.Failed(0))

	_, err = NewProducer(nil).SendBatch(nil)
	require.True(t, errors.Is(err, ErrInvalidConfig))
}
