package client

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// ListAll reports every consumer's offset files, sorted, each read once; a
// damaged file is an entry with its error, never the end of the listing.
func TestOffsetStoreListAll(t *testing.T) {
	s, root := newStore(t)
	list, err := s.ListAll()
	require.NoError(t, err)
	require.Empty(t, list, "a missing root is no consumer")

	require.NoError(t, s.Commit("w", "payments", 12, 7))
	require.NoError(t, s.Commit("w", "orders", 1, 3))
	require.NoError(t, s.Commit("w", "orders", 0, 0))
	require.NoError(t, s.Commit("a", "orders", 0, 99))
	require.NoError(t, s.Commit("b", "orders", 0, 5))
	damaged := filepath.Join(root, "b", "orders", OffsetFileName(1))
	require.NoError(t, os.WriteFile(damaged, []byte(`{"vers`), 0o644))
	// Foreign entries, skipped as List skips them.
	require.NoError(t, os.WriteFile(filepath.Join(root, "w", "orders", "notes.txt"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w", "orders", OffsetFileName(0)+".tmp"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w", "stray-file"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "stray-file"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, ".hidden"), 0o755))

	ffs := logtest.NewFaultFS(nil)
	s, err = OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
	require.NoError(t, err)
	list, err = s.ListAll()
	require.NoError(t, err)
	require.Len(t, list, 6)
	var oce *OffsetCorruptionError
	require.ErrorAs(t, list[2].Err, &oce)
	require.Equal(t, damaged, oce.Path)
	list[2].Err = nil
	require.Equal(t, []StoredOffset{
		{ConsumerID: "a", CommittedOffset: CommittedOffset{Topic: "orders", Partition: 0, Offset: 99}},
		{ConsumerID: "b", CommittedOffset: CommittedOffset{Topic: "orders", Partition: 0, Offset: 5}},
		{ConsumerID: "b", CommittedOffset: CommittedOffset{Topic: "orders", Partition: 1}},
		{ConsumerID: "w", CommittedOffset: CommittedOffset{Topic: "orders", Partition: 0, Offset: 0}},
		{ConsumerID: "w", CommittedOffset: CommittedOffset{Topic: "orders", Partition: 1, Offset: 3}},
		{ConsumerID: "w", CommittedOffset: CommittedOffset{Topic: "payments", Partition: 12, Offset: 7}},
	}, list)
	require.Equal(t, 6, ffs.Count(logtest.OpOpen), "each offset file opened once")
	require.Equal(t, 6, ffs.Total()-ffs.Count(logtest.OpClose), "and nothing else: no write, no directory sync")

	// The store still commits: listing cannot fail it.
	require.NoError(t, s.Commit("a", "orders", 0, 100))
}

// readDirFailFS fails ReadDir of one directory.
type readDirFailFS struct {
	durable.FS
	dir string
}

var errReadDir = errors.New("test: read dir")

func (f readDirFailFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == f.dir {
		return nil, errReadDir
	}
	return f.FS.ReadDir(name)
}

// A directory ListAll cannot list is skipped with its error; the others
// are still listed. A root it cannot list is an error alone.
func TestOffsetStoreListAllUnreadableDirectory(t *testing.T) {
	_, root := newStore(t)
	first, err := OpenOffsetStore(root)
	require.NoError(t, err)
	require.NoError(t, first.Commit("a", "orders", 0, 1))
	require.NoError(t, first.Commit("a", "payments", 0, 2))
	require.NoError(t, first.Commit("b", "orders", 0, 3))

	s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: readDirFailFS{FS: durable.OS, dir: filepath.Join(root, "a", "orders")}})
	require.NoError(t, err)
	list, err := s.ListAll()
	require.ErrorIs(t, err, errReadDir)
	require.Equal(t, []StoredOffset{
		{ConsumerID: "a", CommittedOffset: CommittedOffset{Topic: "payments", Partition: 0, Offset: 2}},
		{ConsumerID: "b", CommittedOffset: CommittedOffset{Topic: "orders", Partition: 0, Offset: 3}},
	}, list)

	s, err = OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: readDirFailFS{FS: durable.OS, dir: root}})
	require.NoError(t, err)
	list, err = s.ListAll()
	require.ErrorIs(t, err, errReadDir)
	require.Empty(t, list)
}
