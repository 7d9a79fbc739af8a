package log_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// goldenStart is the timestamp of the golden log's first record
// (2023-11-14T22:13:20Z); the second is one second later.
const goldenStart = 1_700_000_000_000_000_000

var goldenFile = filepath.Join("testdata", "two-records.log")

// TestLogGoldenFile pins the format of docs/design.md § Record frame byte for
// byte: a log with two known records must equal testdata/two-records.log. Run
// `go test -run TestLogGoldenFile -update` to regenerate it after a deliberate
// format change.
func TestLogGoldenFile(t *testing.T) {
	path := logPath(t)
	l := openLog(t, path, log.Options{Now: clock(goldenStart)})
	_, err := l.Append([]byte("hello, pystream"))
	require.NoError(t, err)
	_, err = l.Append([]byte{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	got := readFile(t, path)

	if *update {
		require.NoError(t, os.WriteFile(goldenFile, got, 0o644))
	}
	want := readFile(t, goldenFile)
	require.Equal(t, want, got, "log bytes differ from %s; rerun with -update only if the format change is deliberate", goldenFile)

	// The golden bytes are exactly what encoding/binary gives field by field.
	require.Equal(t, cat(
		handFrame(0, goldenStart, []byte("hello, pystream")),
		handFrame(1, goldenStart+1e9, nil),
	), want)
}

// TestLogGoldenFileReadsBack opens the committed golden file and reads the
// two records out of it.
func TestLogGoldenFileReadsBack(t *testing.T) {
	path := logPath(t)
	writeFile(t, path, readFile(t, goldenFile))
	l := openLog(t, path, log.Options{})
	require.Equal(t, uint64(2), l.NextOffset())
	require.Equal(t, []log.Record{
		{Offset: 0, Timestamp: goldenStart, Payload: []byte("hello, pystream")},
		{Offset: 1, Timestamp: goldenStart + 1e9, Payload: []byte{}},
	}, readAll(t, l))
}

// TestLogHandWrittenFileOpens writes a log with encoding/binary alone, with
// arbitrary timestamps (negative, zero, maximal), and checks that the log
// opens it and reads back exactly those records, with the next offset
// derived from the file (docs/design.md § Record frame,
// docs/phase-1-log.md § Recovery).
func TestLogHandWrittenFileOpens(t *testing.T) {
	want := []log.Record{
		{Offset: 0, Timestamp: -1, Payload: []byte("first")},
		{Offset: 1, Timestamp: 0, Payload: []byte{}},
		{Offset: 2, Timestamp: 1<<63 - 1, Payload: []byte{0, 0xff, 0, 0x7f}},
	}
	var data []byte
	for _, r := range want {
		data = append(data, handFrame(r.Offset, r.Timestamp, r.Payload)...)
	}
	path := logPath(t)
	writeFile(t, path, data)

	l := openLog(t, path, log.Options{})
	require.Equal(t, uint64(3), l.NextOffset())
	require.Equal(t, int64(len(data)), l.Size())
	require.Equal(t, want, readAll(t, l))

	rec, err := l.Append([]byte("next"))
	require.NoError(t, err)
	require.Equal(t, uint64(3), rec.Offset)
	require.Equal(t, cat(data, handFrame(3, rec.Timestamp, []byte("next"))), readFile(t, path))
}
