package log_test

import (
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// update rewrites the golden files in testdata/ instead of comparing them.
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestMain(m *testing.M) {
	code := m.Run()
	if crashChildDir != "" {
		_ = os.RemoveAll(crashChildDir)
	}
	os.Exit(code)
}

// handFrame builds one frame field by field with encoding/binary, without
// the package's own encoder, so tests check the format independently.
func handFrame(offset uint64, ts int64, payload []byte) []byte {
	b := make([]byte, 24+len(payload))
	binary.BigEndian.PutUint32(b[0:4], uint32(20+len(payload)))
	binary.BigEndian.PutUint64(b[4:12], offset)
	binary.BigEndian.PutUint64(b[12:20], uint64(ts))
	binary.BigEndian.PutUint32(b[20:24], uint32(len(payload)))
	copy(b[24:], payload)
	return b
}

// cat joins byte slices into a new one.
func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func logPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "log.bin")
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func openLog(t testing.TB, path string, opts log.Options) *log.Log {
	t.Helper()
	l, err := log.OpenWithOptions(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// readAll reads every durable record of l.
func readAll(t testing.TB, l *log.Log) []log.Record {
	t.Helper()
	var out []log.Record
	for {
		recs, err := l.Read(uint64(len(out)), 1000)
		require.NoError(t, err)
		if len(recs) == 0 {
			return out
		}
		out = append(out, recs...)
	}
}

// encodeAll is the file a log holding recs must consist of.
func encodeAll(recs []log.Record) []byte {
	var out []byte
	for _, r := range recs {
		out = log.AppendFrame(out, r)
	}
	return out
}

// clock returns a Now function whose n-th call returns start + n seconds.
func clock(start int64) func() time.Time {
	var n atomic.Int64
	return func() time.Time {
		return time.Unix(0, start+(n.Add(1)-1)*int64(time.Second))
	}
}

// requireRecords compares record lists, treating nil and empty alike.
func requireRecords(t testing.TB, want, got []log.Record, msgAndArgs ...any) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, got, msgAndArgs...)
		return
	}
	require.Equal(t, want, got, msgAndArgs...)
}

// runtimeYield lets other goroutines run while a test polls for a state it
// cannot be told about.
func runtimeYield() { time.Sleep(50 * time.Microsecond) }
