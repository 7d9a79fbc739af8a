package wal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/wal"
)

// FuzzDecodeEntry: decoding never panics, refuses what it cannot decode
// with ErrDamaged, and what it decodes re-encodes to the very bytes it
// came from.
func FuzzDecodeEntry(f *testing.F) {
	f.Add([]byte{})
	f.Add(wal.AppendEntry(nil, "p/log.bin", 0, []byte("hello")))
	f.Add(wal.AppendEntry(nil, "a", 1<<40, nil))
	f.Add(append(wal.AppendEntry(nil, "t/p/log.bin", 7, []byte("x")), 0, 0, 0))
	f.Add(rawEntry(wal.KindWrite, "../x", 0, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		rel, pos, data, n, err := wal.DecodeEntry(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("refused with length %d: %v", n, err)
			}
			return
		}
		if n < wal.EntryHead+wal.EntryMin || n > len(b) {
			t.Fatalf("decoded length %d of %d bytes", n, len(b))
		}
		if !wal.ValidRel(rel) || pos < 0 {
			t.Fatalf("decoded path %q at %d", rel, pos)
		}
		again := wal.AppendEntry(nil, rel, pos, data)
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("re-encoded %x, decoded from %x", again, b[:n])
		}
	})
}

// FuzzReplay opens a journal whose only generation file holds arbitrary
// bytes: Open never panics; when it succeeds the generation file is gone,
// either removed or set aside, never both, and never left to replay
// again.
func FuzzReplay(f *testing.F) {
	hdr := wal.AppendHeader(nil, 1)
	f.Add([]byte{})
	f.Add(hdr)
	f.Add(append(wal.AppendEntry(bytes.Clone(hdr), "p/log.bin", 0, []byte("abc")), make([]byte, 32)...))
	f.Add(wal.AppendEntry(wal.AppendEntry(bytes.Clone(hdr), "p/log.bin", 0, []byte("abc")), "gone/log.bin", 0, []byte("x")))
	f.Add(wal.AppendEntry(bytes.Clone(hdr), "p/meta", 0, []byte("abc")))
	f.Add(wal.AppendEntry(bytes.Clone(hdr), "p/log.bin", 3, []byte("abc"))[:len(hdr)+10])
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, wal.DirName)
		if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "p", "log.bin"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		gen := wal.GenerationFileName(1)
		if err := os.WriteFile(filepath.Join(dir, gen), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// Every fsync skipped: what is fuzzed is the parsing and the
		// choice of removing or setting aside, not the disk.
		j, err := wal.Open(logtest.NoSyncFS{FS: durable.OS}, root, wal.Options{Journaled: journaledLogs})
		if err != nil {
			return // refusing is allowed; panicking is not
		}
		defer func() {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		}()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		aside := 0
		for _, e := range entries {
			switch name := e.Name(); {
			case name == gen:
				t.Fatalf("generation 1 is still there to replay: %v", entries)
			case strings.HasPrefix(name, gen+wal.AsideSuffix):
				aside++
			case name == wal.GenerationFileName(2):
			default:
				t.Fatalf("unexpected %s in the journal: %v", name, entries)
			}
		}
		if aside > 1 {
			t.Fatalf("generation 1 set aside %d times", aside)
		}
	})
}
