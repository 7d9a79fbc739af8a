package topic

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
	"github.com/stretchr/testify/require"
)

// docs/phase-2-topics.md § Batches: every message is routed as Append would
// route it, results come back in input order, and within a partition the
// batch keeps its order with consecutive offsets.
func TestBatchAppendRoutesAndOrders(t *testing.T) {
	tp := openT(t, t.TempDir(), "batch", 3)
	_, err := tp.Append(nil, []byte("first")) // cursor now 1, partition 0 has one record
	require.NoError(t, err)

	msgs := []Message{
		{Key: []byte("user-123"), Payload: []byte("a")}, // partition 2
		{Key: nil, Payload: []byte("b")},                // cursor 1 → partition 1
		{Key: []byte{}, Payload: []byte("c")},           // partition 1
		{Key: nil, Payload: []byte("d")},                // cursor 2 → partition 2
		{Key: nil, Payload: []byte("e")},                // cursor 3 → partition 0
		{Key: []byte("user-123"), Payload: []byte("f")}, // partition 2
	}
	res, err := tp.AppendBatch(msgs)
	require.NoError(t, err)
	require.Len(t, res, len(msgs))
	type po struct {
		p   int
		off uint64
	}
	var got []po
	for i, r := range res {
		require.Equal(t, msgs[i].Payload, r.Record.Payload)
		require.Equal(t, r.Offset, r.Record.Offset)
		got = append(got, po{r.Partition, r.Offset})
	}
	require.Equal(t, []po{{2, 0}, {1, 0}, {1, 1}, {2, 1}, {0, 1}, {2, 2}}, got)

	recs, err := tp.Read(2, 0, 10)
	require.NoError(t, err)
	require.Equal(t, "adf", string(recs[0].Payload)+string(recs[1].Payload)+string(recs[2].Payload))

	next, err := tp.Append(nil, []byte("after"))
	require.NoError(t, err)
	require.Equal(t, 1, next.Partition, "the batch advanced the cursor by its 3 keyless messages")
}

// Invalid input changes nothing: one oversized payload fails the whole
// batch before any partition is written.
func TestBatchOversizedPayloadWritesNothing(t *testing.T) {
	tp, err := OpenWithOptions(t.TempDir(), "big", 2, Options{MaxPayloadSize: 3})
	require.NoError(t, err)
	defer tp.Close()
	res, err := tp.AppendBatch([]Message{{Key: []byte("a"), Payload: []byte("ok")}, {Payload: []byte("toolong")}})
	require.ErrorIs(t, err, log.ErrPayloadTooLarge)
	require.Nil(t, res)
	for p := range 2 {
		n, err := tp.NextOffset(p)
		require.NoError(t, err)
		require.Zero(t, n)
	}
	res, err = tp.AppendBatch(nil)
	require.NoError(t, err)
	require.Empty(t, res)
}

// docs/phase-2-topics.md § Batches: when one partition's write fails, the
// records of the other partitions are acknowledged and durable, the failed
// partition is named in a *BatchError, and its results carry only the
// partition.
func TestBatchPartialFailureNamesPartitions(t *testing.T) {
	root := t.TempDir()
	ffs := logtest.NewFaultFS(nil)
	tp, err := OpenWithOptions(root, "part", 3, Options{FS: ffs})
	require.NoError(t, err)
	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpSync && strings.Contains(path, PartitionDir(1)) {
			return logtest.ErrInjected
		}
		return nil
	})
	var msgs []Message
	for i := range 9 {
		msgs = append(msgs, Message{Payload: []byte(fmt.Sprintf("m%d", i))}) // round robin 0,1,2,...
	}
	res, err := tp.AppendBatch(msgs)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.ErrorIs(t, err, logtest.ErrInjected)
	require.Equal(t, "part", be.Topic)
	require.True(t, be.Failed(1))
	require.False(t, be.Failed(0))
	require.Len(t, be.Partitions, 1)
	require.Len(t, res, 9)
	for i, r := range res {
		require.Equal(t, i%3, r.Partition)
		if be.Failed(r.Partition) {
			require.Nil(t, r.Record.Payload)
		} else {
			require.Equal(t, msgs[i].Payload, r.Record.Payload)
			require.Equal(t, uint64(i/3), r.Offset)
		}
	}
	// The failed partition stays failed (sticky), the others keep working.
	_, err = tp.AppendBatch([]Message{{Key: nil, Payload: []byte("x")}, {Key: nil, Payload: []byte("y")}})
	require.ErrorIs(t, err, log.ErrFailed)
	ffs.SetFault(nil)
	require.NoError(t, tp.Close())

	// Acknowledged records survive a reopen.
	tp = openT(t, root, "part", 3)
	for _, p := range []int{0, 2} {
		recs, err := tp.Read(p, 0, 10)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(recs), 3)
		for j := range 3 {
			require.Equal(t, fmt.Sprintf("m%d", p+3*j), string(recs[j].Payload))
		}
	}
}

// Concurrent batches and single appends interleave safely; every partition
// ends dense and each batch's records for a partition are contiguous.
func TestBatchConcurrentWithAppends(t *testing.T) {
	tp := openT(t, t.TempDir(), "cb", 2)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range 10 {
				msgs := []Message{
					{Key: []byte("k"), Payload: []byte(fmt.Sprintf("%d-%d-0", w, b))},
					{Key: []byte("k"), Payload: []byte(fmt.Sprintf("%d-%d-1", w, b))},
				}
				res, err := tp.AppendBatch(msgs)
				if err != nil {
					t.Error(err)
					return
				}
				if res[1].Offset != res[0].Offset+1 {
					t.Errorf("batch not contiguous: %d, %d", res[0].Offset, res[1].Offset)
				}
				if _, err := tp.Append(nil, []byte("single")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for p := range 2 {
		recs, err := tp.Read(p, 0, 1000)
		require.NoError(t, err)
		for i, r := range recs {
			require.Equal(t, uint64(i), r.Offset)
		}
		total += len(recs)
	}
	require.Equal(t, 4*10*3, total)
}
