package durable_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pystream/pystream/log/durable"
)

// BenchmarkSyncFSDirtyFiles measures what one shared sync costs as the
// files it must flush grow in number: k files each take a 130-byte append
// and one syncfs(2) makes them durable ("syncfs"), against the same bytes
// appended to one file and made durable by its own fsync ("one-file"), in
// one run. The shared sync's cost grows with the files written between
// two syncs, which is what a write spread over many partitions does to it
// (docs/performance.md § Many partitions):
//
//	go test -run '^$' -bench BenchmarkSyncFSDirtyFiles ./durable
func BenchmarkSyncFSDirtyFiles(b *testing.B) {
	dir := b.TempDir()
	files := make([]durable.File, 200)
	for i := range files {
		f, err := durable.OS.OpenFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = f.Close() })
		files[i] = f
	}
	one, err := durable.OS.OpenFile(filepath.Join(dir, "one"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = one.Close() })
	ws, ok := durable.OS.(durable.WholeSyncer)
	if !ok || ws.CanSyncFS(one) != nil {
		b.Skip("the temporary directory's file system cannot be synced whole (syncfs needs Linux 5.8 and ext4, XFS or Btrfs)")
	}
	record := make([]byte, 130)
	ends := make([]int64, len(files)+1)
	for _, k := range []int{3, 10, 30, 64, 200} {
		b.Run(fmt.Sprintf("syncfs/files=%d", k), func(b *testing.B) {
			for b.Loop() {
				for i := range k {
					if _, err := files[i].WriteAt(record, ends[i]); err != nil {
						b.Fatal(err)
					}
					ends[i] += int64(len(record))
				}
				if err := ws.SyncFS(files[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("one-file/files=%d", k), func(b *testing.B) {
			for b.Loop() {
				for range k {
					if _, err := one.WriteAt(record, ends[len(files)]); err != nil {
						b.Fatal(err)
					}
					ends[len(files)] += int64(len(record))
				}
				if err := one.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
