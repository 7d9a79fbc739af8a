package topic

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// tree lists everything under root, directories with a trailing slash.
func tree(t *testing.T, root string) []string {
	t.Helper()
	out, err := logtest.Tree(root)
	require.NoError(t, err)
	return out
}

func openT(t *testing.T, root, name string, n int) *Topic {
	t.Helper()
	tp, err := Open(root, name, n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	return tp
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
