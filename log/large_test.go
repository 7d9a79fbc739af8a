package log_test

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// TestLogOpenLarge measures recovery of a large log (docs/performance.md
// reports open time and bytes/s for a 1 GB log and the index memory per
// record). It
// writes a log of 100-byte records (PYSTREAM_LARGE_LOG_BYTES, default
// 1 GiB), opens it and logs the time, the scan rate and the heap the index
// took per record. Soak only: it writes a gigabyte.
//
//	PYSTREAM_SOAK=1 go test -run TestLogOpenLarge -v ./
func TestLogOpenLarge(t *testing.T) {
	if os.Getenv("PYSTREAM_SOAK") != "1" {
		t.Skip("soak: set PYSTREAM_SOAK=1")
	}
	size := int64(1 << 30)
	if s := os.Getenv("PYSTREAM_LARGE_LOG_BYTES"); s != "" {
		var err error
		size, err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
	}
	for _, payloadSize := range []int{100, 4096} {
		path := filepath.Join(t.TempDir(), "log.bin")
		records := writeLargeLog(t, path, size, payloadSize)

		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		l, err := log.Open(path)
		elapsed := time.Since(start)
		require.NoError(t, err)
		runtime.GC()
		runtime.ReadMemStats(&after)
		require.Equal(t, uint64(records), l.NextOffset())
		bytes := l.Size()
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("payload %d B: %d records, %d bytes: open %v, %.0f MB/s, %.2f M records/s; index %.2f B/record of heap (len %d, cap %d entries of 8 B)",
			payloadSize, records, bytes, elapsed.Round(time.Millisecond),
			float64(bytes)/elapsed.Seconds()/1e6, float64(records)/elapsed.Seconds()/1e6,
			float64(heap)/float64(records), records, log.IndexCap(l))
		require.NoError(t, l.Close())
		require.NoError(t, os.Remove(path))
	}
}

// writeLargeLog writes frames of payloadSize bytes until the file holds at
// least size bytes, and returns the number of records.
func writeLargeLog(t *testing.T, path string, size int64, payloadSize int) int {
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 4<<20)
	payload := make([]byte, payloadSize)
	var frame []byte
	n := 0
	for written := int64(0); written < size; n++ {
		frame = log.AppendFrame(frame[:0], log.Record{Offset: uint64(n), Timestamp: int64(n), Payload: payload})
		_, err := w.Write(frame)
		require.NoError(t, err)
		written += int64(len(frame))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	return n
}
