package log_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pystream/pystream/log"
)

// FuzzDecodeFrame checks the frame decoder on arbitrary bytes, with the
// invariants franz-go's FuzzReadEntries checks: it never panics, never
// consumes more than it was given, and a decoded frame re-encodes to exactly
// the bytes it consumed. Seeds: testdata/fuzz/FuzzDecodeFrame.
func FuzzDecodeFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		rec, n, err := log.DecodeFrame(in)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with %d bytes consumed", err, n)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, log.ErrMalformedFrame) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if n < log.HeaderSize || n > len(in) {
			t.Fatalf("consumed %d of %d bytes", n, len(in))
		}
		if got := log.AppendFrame(nil, rec); !bytes.Equal(got, in[:n]) {
			t.Fatalf("re-encoded frame differs:\n got %x\nwant %x", got, in[:n])
		}
		again, m, err := log.DecodeFrame(in)
		if err != nil || m != n || again.Offset != rec.Offset || again.Timestamp != rec.Timestamp || !bytes.Equal(again.Payload, rec.Payload) {
			t.Fatalf("second decode differs")
		}
	})
}

// FuzzOpenLog opens arbitrary bytes as a log file: Open either succeeds and
// the records it reads re-encode to exactly the file's bytes, or it returns
// a *CorruptionError whose position lies within the file, after a prefix of
// whole records; either way the file is unchanged. Seeds:
// testdata/fuzz/FuzzOpenLog.
func FuzzOpenLog(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(t.TempDir(), "log.bin")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := log.Open(path)
		if err != nil {
			var cerr *log.CorruptionError
			if !errors.As(err, &cerr) {
				t.Fatalf("not a *CorruptionError: %v", err)
			}
			if cerr.Pos < 0 || cerr.Pos > int64(len(in)) {
				t.Fatalf("position %d outside a file of %d bytes", cerr.Pos, len(in))
			}
			// The bytes before the damage are whole records.
			var prefix []byte
			if err := log.ScanFile(path, func(_ int64, r log.Record) error {
				prefix = log.AppendFrame(prefix, r)
				return nil
			}); !errors.As(err, &cerr) {
				t.Fatalf("ScanFile disagrees with Open: %v", err)
			}
			if !bytes.Equal(prefix, in[:cerr.Pos]) {
				t.Fatalf("records before the damage do not re-encode to the bytes before byte %d", cerr.Pos)
			}
		} else {
			rs, err := l.Read(0, len(in)+1)
			if err != nil {
				t.Fatal(err)
			}
			var recs []byte
			for i, r := range rs {
				if r.Offset != uint64(i) {
					t.Fatalf("offset %d at index %d", r.Offset, i)
				}
				recs = log.AppendFrame(recs, r)
			}
			if !bytes.Equal(recs, in) {
				t.Fatalf("records re-encode to different bytes")
			}
			if l.Size() != int64(len(in)) {
				t.Fatalf("size %d, file %d", l.Size(), len(in))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(after, in) {
			t.Fatalf("Open changed the file")
		}
	})
}
