package topic

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pystream/pystream/log/logtest"
	"github.com/stretchr/testify/require"
)

// docs/phase-2-topics.md § Creation and crashes and
// docs/design.md § Invariants, 2: creating a topic while the file system
// fails each operation in turn leaves either no topic (no topic.meta) or a
// complete, valid one; opening again afterwards always succeeds and yields a
// valid topic.
func TestCrashDuringCreateLeavesNoTopicOrValidOne(t *testing.T) {
	ops := []logtest.Op{logtest.OpOpen, logtest.OpWrite, logtest.OpSync, logtest.OpClose, logtest.OpRename, logtest.OpMkdir, logtest.OpSyncDir}

	// Count the operations of a clean creation.
	clean := logtest.NewFaultFS(nil)
	tp, err := OpenWithOptions(t.TempDir(), "crash", 3, Options{FS: clean})
	require.NoError(t, err)
	counts := map[logtest.Op]int{}
	for _, op := range ops {
		counts[op] = clean.Count(op)
	}
	require.NoError(t, tp.Close())

	for _, op := range ops {
		total := counts[op]
		require.Positive(t, total, "creation uses %s", op)
		for n := 1; n <= total; n++ {
			root := t.TempDir()
			ffs := logtest.NewFaultFS(nil)
			ffs.SetFault(logtest.FailNth(op, n))
			tp, err := OpenWithOptions(root, "crash", 3, Options{FS: ffs})
			if err == nil {
				// The failed step (a close of a read-only handle, say)
				// did not matter; the topic is whole.
				require.NoError(t, tp.Close())
			} else {
				require.ErrorIs(t, err, logtest.ErrInjected, "%s #%d", op, n)
			}
			checkNoTopicOrValid(t, root, op, n)
		}
	}
}

// checkNoTopicOrValid asserts the state a crash right now would leave.
func checkNoTopicOrValid(t *testing.T, root string, op logtest.Op, n int) {
	t.Helper()
	meta := filepath.Join(root, "crash", MetadataFile)
	_, err := os.Stat(meta)
	if errors.Is(err, fs.ErrNotExist) {
		_, err := OpenExisting(root, "crash", Options{})
		require.ErrorIs(t, err, ErrTopicNotFound, "%s #%d: no topic", op, n)
	} else {
		require.NoError(t, err)
		tp, err := OpenExisting(root, "crash", Options{})
		require.NoError(t, err, "%s #%d: topic.meta present, topic must be valid", op, n)
		require.Equal(t, 3, tp.PartitionCount())
		require.NoError(t, tp.Close())
	}
	tp, err := Open(root, "crash", 3)
	require.NoError(t, err, "%s #%d: opening again finishes the topic", op, n)
	res, err := tp.Append(nil, []byte("after"))
	require.NoError(t, err)
	require.Equal(t, uint64(0), res.Offset)
	require.NoError(t, tp.Close())
	require.NoFileExists(t, meta+".tmp")
}

// A short write of topic.meta's temp file never becomes topic.meta.
func TestCrashShortMetadataWrite(t *testing.T) {
	root := t.TempDir()
	ffs := logtest.NewFaultFS(nil)
	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpWrite && filepath.Base(path) == MetadataFile+".tmp" {
			return logtest.ErrShortWrite
		}
		return nil
	})
	_, err := OpenWithOptions(root, "crash", 3, Options{FS: ffs})
	require.Error(t, err)
	checkNoTopicOrValid(t, root, "short write", 1)
}
