package logtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

func TestTreeAndSnapshot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "f"), []byte("x"), 0o644))

	tree, err := logtest.Tree(root)
	require.NoError(t, err)
	require.Equal(t, []string{"a/", "a/b/", "a/f"}, tree)

	before, err := logtest.Snapshot(root)
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{
		filepath.Join(root, "a") + "/":      nil,
		filepath.Join(root, "a", "b") + "/": nil,
		filepath.Join(root, "a", "f"):       []byte("x"),
	}, before)

	require.NoError(t, os.Mkdir(filepath.Join(root, "a", "empty"), 0o755))
	withDir, err := logtest.Snapshot(root)
	require.NoError(t, err)
	require.NotEqual(t, before, withDir, "a new empty directory must show")

	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "f"), []byte("y"), 0o644))
	after, err := logtest.Snapshot(root)
	require.NoError(t, err)
	require.NotEqual(t, before, after, "a changed byte must show")
}
