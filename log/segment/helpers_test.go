package segment_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// openSeg opens a segmented log that the test closes at the end.
func openSeg(t testing.TB, dir string, opts segment.Options) *segment.Log {
	t.Helper()
	l, err := segment.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// readAll reads every visible record, from LogStart to NextOffset, and
// checks that offsets are dense.
func readAll(t testing.TB, l *segment.Log) []log.Record {
	t.Helper()
	var out []log.Record
	next := l.LogStart()
	for next < l.NextOffset() {
		recs, err := l.Read(next, 1000)
		require.NoError(t, err)
		require.NotEmpty(t, recs, "Read returns at least one record below NextOffset (offset %d)", next)
		for _, r := range recs {
			require.Equal(t, next, r.Offset, "offsets are dense")
			next++
		}
		out = append(out, recs...)
	}
	return out
}

// payloads returns n payloads of size bytes each, distinct.
func payloads(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		copy(p, fmt.Sprint(i))
		out[i] = p
	}
	return out
}

// payloadOf is a payload of size bytes (a frame of size+24 bytes).
func payloadOf(size int) []byte { return bytes.Repeat([]byte("x"), size) }

// bases lists the segments' base offsets.
func bases(l *segment.Log) []uint64 {
	var out []uint64
	for _, s := range l.Segments() {
		out = append(out, s.Base)
	}
	return out
}

// copyDir copies the regular files of src into a new temp directory.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "p")
	require.NoError(t, os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
	return dst
}

// fileNames lists the names in dir.
func fileNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
