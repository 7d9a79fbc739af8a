package log_test

import (
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
)

// TestFaultStickyFailure pins docs/design.md § Sticky failure: an append whose
// write or fsync fails returns the error, and every later write is refused
// with ErrFailed even when the disk works again; reopening gives exactly the
// acknowledged prefix.
func TestFaultStickyFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault logtest.Fault
		cause error
	}{
		{"fsync fails", logtest.FailNth(logtest.OpSync, 1), logtest.ErrInjected},
		{"write fails", logtest.FailNth(logtest.OpWrite, 1), logtest.ErrInjected},
		{"short write", shortWriteOnce(), io.ErrShortWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := logPath(t)
			ffs := logtest.NewFaultFS(nil)
			l, err := log.OpenWithOptions(path, log.Options{FS: ffs})
			require.NoError(t, err)
			var acked []log.Record
			for _, p := range []string{"one", "two"} {
				r, err := l.Append([]byte(p))
				require.NoError(t, err)
				acked = append(acked, r)
			}

			ffs.SetFault(tc.fault)
			_, err = l.Append([]byte("lost"))
			require.ErrorIs(t, err, tc.cause)
			ffs.SetFault(nil) // the disk "works" again

			_, err = l.Append([]byte("later"))
			require.ErrorIs(t, err, log.ErrFailed)
			require.ErrorIs(t, err, tc.cause, "ErrFailed carries the original cause")
			_, err = l.AppendBatch([][]byte{[]byte("x")})
			require.ErrorIs(t, err, log.ErrFailed)
			_, err = l.AppendBatch(nil)
			require.ErrorIs(t, err, log.ErrFailed)
			require.ErrorIs(t, l.AppendRecord(log.Record{Offset: 2}), log.ErrFailed)
			require.ErrorIs(t, l.Truncate(0), log.ErrFailed)

			// Reads still serve the acknowledged records, and only those.
			require.Equal(t, uint64(2), l.NextOffset())
			require.Equal(t, acked, readAll(t, l))
			require.NoError(t, l.Close())

			require.Equal(t, encodeAll(acked), readFile(t, path), "the file holds exactly the acknowledged prefix")
			l = openLog(t, path, log.Options{})
			require.Equal(t, acked, readAll(t, l))
			r, err := l.Append([]byte("after reopen"))
			require.NoError(t, err)
			require.Equal(t, uint64(2), r.Offset)
		})
	}
}

func shortWriteOnce() logtest.Fault {
	var once sync.Once
	return func(op logtest.Op, _ string) error {
		var err error
		if op == logtest.OpWrite {
			once.Do(func() { err = logtest.ErrShortWrite })
		}
		return err
	}
}

// TestFaultShortWriteUncut: when even cutting the half-written frame back
// fails, the reopened log reports a torn tail at the end of the acknowledged
// prefix, and Repair restores exactly that prefix.
func TestFaultShortWriteUncut(t *testing.T) {
	path := logPath(t)
	ffs := logtest.NewFaultFS(nil)
	l, err := log.OpenWithOptions(path, log.Options{FS: ffs})
	require.NoError(t, err)
	acked, err := l.Append([]byte("kept"))
	require.NoError(t, err)
	short := shortWriteOnce()
	ffs.SetFault(func(op logtest.Op, p string) error {
		if op == logtest.OpTruncate {
			return logtest.ErrInjected
		}
		return short(op, p)
	})
	_, err = l.Append(make([]byte, 100))
	require.ErrorIs(t, err, logtest.ErrInjected)
	ffs.SetFault(nil)
	require.NoError(t, l.Close())

	_, err = log.Open(path)
	requireCorruption(t, err, path, int64(log.FrameSize(4)), 1, true)
	_, err = log.Repair(path)
	require.NoError(t, err)
	l = openLog(t, path, log.Options{})
	require.Equal(t, []log.Record{acked}, readAll(t, l))
}

// TestFaultBatchFailsTogether pins group commit's failure rule
// (docs/phase-1-log.md § Group commit): an fsync failure inside a
// group-committed batch fails every caller of that batch, and nothing
// acknowledged before it is lost.
func TestFaultBatchFailsTogether(t *testing.T) {
	path := logPath(t)
	ffs := logtest.NewFaultFS(nil)
	l, err := log.OpenWithOptions(path, log.Options{FS: ffs})
	require.NoError(t, err)
	before, err := l.Append([]byte("before"))
	require.NoError(t, err)

	// The first sync blocks until the batch behind it has queued up and
	// then succeeds; the second sync, the queued batch's, fails.
	release := make(chan struct{})
	syncs := 0
	var mu sync.Mutex
	ffs.SetFault(func(op logtest.Op, _ string) error {
		if op != logtest.OpSync {
			return nil
		}
		mu.Lock()
		syncs++
		n := syncs
		mu.Unlock()
		if n == 1 {
			<-release
			return nil
		}
		return logtest.ErrInjected
	})
	writesBefore := ffs.Count(logtest.OpWrite)

	first := make(chan error, 1)
	go func() {
		_, err := l.Append([]byte("first"))
		first <- err
	}()
	for ffs.Count(logtest.OpSync) < 2 { // the first append is inside its fsync
		runtimeYield()
	}
	const batch = 10
	errs := make(chan error, batch)
	for i := range batch {
		go func() {
			_, err := l.Append(fmt.Appendf(nil, "batched %d", i))
			errs <- err
		}()
	}
	for log.QueuedAppends(l) < batch {
		runtimeYield()
	}
	close(release)

	require.NoError(t, <-first, "the append before the failed batch is acknowledged")
	for range batch {
		require.ErrorIs(t, <-errs, logtest.ErrInjected)
	}
	require.Equal(t, writesBefore+2, ffs.Count(logtest.OpWrite), "the ten appends went out as one batch")
	_, err = l.Append([]byte("after"))
	require.ErrorIs(t, err, log.ErrFailed)
	require.NoError(t, l.Close())

	l = openLog(t, path, log.Options{})
	recs := readAll(t, l)
	require.Len(t, recs, 2)
	require.Equal(t, before, recs[0])
	require.Equal(t, "first", string(recs[1].Payload))
}

// TestFaultTruncateIsSticky: a failed Truncate (the cut or its fsync) makes
// the log refuse every later write (docs/design.md § Sticky failure).
func TestFaultTruncateIsSticky(t *testing.T) {
	for _, op := range []logtest.Op{logtest.OpTruncate, logtest.OpSync} {
		t.Run(string(op), func(t *testing.T) {
			ffs := logtest.NewFaultFS(nil)
			l := openLog(t, logPath(t), log.Options{FS: ffs})
			_, err := l.AppendBatch([][]byte{[]byte("a"), []byte("b")})
			require.NoError(t, err)
			ffs.SetFault(logtest.FailNth(op, 1))
			require.ErrorIs(t, l.Truncate(1), logtest.ErrInjected)
			ffs.SetFault(nil)
			_, err = l.Append([]byte("c"))
			require.ErrorIs(t, err, log.ErrFailed)
			require.ErrorIs(t, l.Truncate(1), log.ErrFailed)
		})
	}
}

// TestFaultOpen: a failure while creating a log is reported and leaves no
// half-open log behind.
func TestFaultOpen(t *testing.T) {
	for _, op := range []logtest.Op{logtest.OpOpen, logtest.OpMkdir, logtest.OpSyncDir} {
		t.Run(string(op), func(t *testing.T) {
			ffs := logtest.NewFaultFS(nil)
			ffs.SetFault(logtest.FailFrom(op, 1))
			_, err := log.OpenWithOptions(logPath(t)+"/sub/log.bin", log.Options{FS: ffs})
			require.ErrorIs(t, err, logtest.ErrInjected)
		})
	}
}
