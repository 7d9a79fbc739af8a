package log_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// TestLogConcurrentAppendsAndTailingReaders pins that a *Log is safe for
// concurrent use (docs/phase-1-log.md § The API) and that group commit is
// invisible to correctness (docs/phase-1-log.md § Group commit): 8
// goroutines x 1,000 appends with readers tailing the log get dense, unique
// offsets; every payload sits exactly once at the offset its Append
// returned; and a reader never sees a record that is not yet durable.
func TestLogConcurrentAppendsAndTailingReaders(t *testing.T) {
	const writers, perWriter, readers = 8, 1000, 3
	const total = writers * perWriter
	l := openLog(t, logPath(t), log.Options{})

	offsets := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				r, err := l.Append(fmt.Appendf(nil, "w%d-%d", w, i))
				if err != nil {
					t.Error(err)
					return
				}
				offsets[w] = append(offsets[w], r.Offset)
			}
		})
	}
	var rg sync.WaitGroup
	for range readers {
		rg.Go(func() {
			var next uint64
			for next < total {
				recs, err := l.Read(next, 97)
				if err != nil {
					t.Error(err)
					return
				}
				// Durable records only: everything returned is below the
				// durable end as seen after the read.
				if end := l.NextOffset(); len(recs) > 0 && recs[len(recs)-1].Offset >= end {
					t.Errorf("read offset %d beyond the durable end %d", recs[len(recs)-1].Offset, end)
					return
				}
				for _, r := range recs {
					if r.Offset != next {
						t.Errorf("reader got offset %d, want %d", r.Offset, next)
						return
					}
					next++
				}
				if len(recs) == 0 {
					runtimeYield()
				}
			}
		})
	}
	wg.Wait()
	rg.Wait()
	require.False(t, t.Failed())

	require.Equal(t, uint64(total), l.NextOffset())
	all := readAll(t, l)
	require.Len(t, all, total)
	seen := make(map[uint64]bool, total)
	for w, offs := range offsets {
		require.Len(t, offs, perWriter)
		for i, off := range offs {
			require.False(t, seen[off], "offset %d handed out twice", off)
			seen[off] = true
			require.Equal(t, fmt.Sprintf("w%d-%d", w, i), string(all[off].Payload))
			if i > 0 {
				require.Greater(t, off, offs[i-1], "one writer's appends keep their order")
			}
		}
	}
	for i, r := range all {
		require.Equal(t, uint64(i), r.Offset)
	}
}

// TestLogConcurrentMixedWriters: Append, AppendBatch and Truncate racing on
// one log keep the log a dense run of whole records, and what every call
// reported matches the file.
func TestLogConcurrentMixedWriters(t *testing.T) {
	path := logPath(t)
	l := openLog(t, path, log.Options{})
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[uint64]string{}
	)
	note := func(r log.Record) {
		mu.Lock()
		defer mu.Unlock()
		got[r.Offset] = string(r.Payload)
	}
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				if i%3 == 0 {
					recs, err := l.AppendBatch([][]byte{fmt.Appendf(nil, "b%d-%d-0", w, i), fmt.Appendf(nil, "b%d-%d-1", w, i)})
					if err != nil {
						t.Error(err)
						return
					}
					if recs[0].Offset+1 != recs[1].Offset {
						t.Errorf("batch offsets %d, %d", recs[0].Offset, recs[1].Offset)
					}
					note(recs[0])
					note(recs[1])
					continue
				}
				r, err := l.Append(fmt.Appendf(nil, "a%d-%d", w, i))
				if err != nil {
					t.Error(err)
					return
				}
				note(r)
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	all := readAll(t, l)
	require.Len(t, all, len(got))
	for _, r := range all {
		require.Equal(t, got[r.Offset], string(r.Payload))
	}
	require.NoError(t, l.Close())
	l2 := openLog(t, path, log.Options{})
	require.Equal(t, all, readAll(t, l2))
}

// TestLogConcurrentTruncateAndRead: readers racing a Truncate see either the
// records before the cut or after it, never an error or a torn record.
func TestLogConcurrentTruncateAndRead(t *testing.T) {
	l := openLog(t, logPath(t), log.Options{})
	for i := range 200 {
		_, err := l.Append(fmt.Appendf(nil, "r%d", i))
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				recs, err := l.Read(0, 300)
				if err != nil {
					t.Error(err)
					return
				}
				for i, r := range recs {
					if r.Offset != uint64(i) || string(r.Payload) != fmt.Sprintf("r%d", i) {
						t.Errorf("read %d: %+v", i, r)
						return
					}
				}
			}
		})
	}
	for end := 199; end > 0; end -= 20 {
		require.NoError(t, l.Truncate(uint64(end)))
	}
	close(stop)
	wg.Wait()
}

// TestLogConcurrentClose: appends racing Close either succeed durably or
// fail with ErrClosed; nothing else.
func TestLogConcurrentClose(t *testing.T) {
	path := logPath(t)
	l, err := log.Open(path)
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked int
	)
	for range 8 {
		wg.Go(func() {
			for {
				_, err := l.Append([]byte("x"))
				if errors.Is(err, log.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		})
	}
	for l.NextOffset() < 50 {
		runtimeYield()
	}
	require.NoError(t, l.Close())
	wg.Wait()
	l = openLog(t, path, log.Options{})
	require.Equal(t, uint64(acked), l.NextOffset())
}
