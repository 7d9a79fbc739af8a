package logtest_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

func openFiles(t *testing.T, fsys durable.FS, n int) []durable.File {
	t.Helper()
	var files []durable.File
	for i := range n {
		dir := filepath.Join(t.TempDir(), "replica")
		require.NoError(t, os.Mkdir(dir, 0o755))
		f, err := fsys.OpenFile(filepath.Join(dir, "bare.bin"), os.O_RDWR|os.O_CREATE, 0o644)
		require.NoError(t, err, "file %d", i)
		t.Cleanup(func() { _ = f.Close() })
		files = append(files, f)
	}
	return files
}

// Every frame a producer committed is in every file, once, whatever the
// order, and the files are identical.
func TestBareCommitterWritesEveryFrameToEveryFile(t *testing.T) {
	for _, leaderFirst := range []bool{true, false} {
		files := openFiles(t, durable.OS, 3)
		g, err := logtest.NewBareCommitter(leaderFirst, files...)
		require.NoError(t, err)
		const producers, each = 8, 50
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				done := make(chan error, 1)
				for range each {
					if err := g.Commit([]byte{byte('a' + p)}, done); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		g.Close()
		require.EqualValues(t, 3*g.Batches(), g.Syncs())
		first, err := os.ReadFile(files[0].Name())
		require.NoError(t, err)
		require.Len(t, first, producers*each)
		for p := range producers {
			require.Equal(t, each, bytes.Count(first, []byte{byte('a' + p)}), "producer %d", p)
		}
		for _, f := range files[1:] {
			got, err := os.ReadFile(f.Name())
			require.NoError(t, err)
			require.Equal(t, first, got)
		}
	}
}

// A failed sync reaches the producer whose frame was in the batch.
func TestBareCommitterReportsSyncFailure(t *testing.T) {
	fsys := logtest.NewFaultFS(durable.OS)
	files := openFiles(t, fsys, 2)
	fsys.SetFault(logtest.FailNth(logtest.OpSync, 1))
	g, err := logtest.NewBareCommitter(true, files...)
	require.NoError(t, err)
	defer g.Close()
	err = g.Commit([]byte("x"), make(chan error, 1))
	require.Error(t, err)
	require.True(t, errors.Is(err, logtest.ErrInjected), "got %v", err)
}

func TestBareCommitterNeedsAFile(t *testing.T) {
	_, err := logtest.NewBareCommitter(true)
	require.Error(t, err)
}
