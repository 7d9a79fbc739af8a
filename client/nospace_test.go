package client

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// TestOffsetStoreNoSpaceScopeIsOneConsumer pins, for offsets,
// docs/design.md § Sticky failure: a commit that meets a full disk fails with an error
// wrapping ENOSPC and keeps the old offset; from then on that consumer's
// commits and resets are refused (ErrStoreFailed, still wrapping ENOSPC)
// even after space returns — its directories' entries are in doubt —
// while another consumer, whose files share no directory with it, keeps
// committing. A reopened store takes the failed consumer's commits again.
func TestOffsetStoreNoSpaceScopeIsOneConsumer(t *testing.T) {
	for _, op := range []logtest.Op{logtest.OpWrite, logtest.OpSync, logtest.OpRename, logtest.OpSyncDir, logtest.OpMkdir} {
		t.Run(string(op), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "offsets")
			ffs := logtest.NewFaultFS(nil)
			s, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
			require.NoError(t, err)
			require.NoError(t, s.Commit("billing", "orders", 0, 5))
			require.NoError(t, s.Commit("audit", "orders", 0, 5))

			billing := filepath.Join(root, "billing")
			ffs.SetFault(func(o logtest.Op, path string) error {
				if o == op && strings.HasPrefix(path, billing) {
					return logtest.FullDisk(nil)(o, path)
				}
				return nil
			})
			// A new topic directory for mkdir, an existing file otherwise.
			topicName := "orders"
			if op == logtest.OpMkdir {
				topicName = "payments"
			}
			err = s.Commit("billing", topicName, 0, 9)
			require.True(t, durable.NoSpace(err), "%v", err)
			ffs.SetFault(nil) // space returns

			err = s.Commit("billing", "orders", 1, 1)
			require.ErrorIs(t, err, ErrStoreFailed, "the consumer's failure is sticky")
			require.True(t, durable.NoSpace(err), "and says why: %v", err)
			require.ErrorIs(t, s.Reset("billing", "orders", 0, 0), ErrStoreFailed)
			require.NoError(t, s.Commit("audit", "orders", 0, 7), "another consumer is not refused")
			require.NoError(t, s.Commit("audit", "payments", 0, 1))

			off, _, err := s.Load("billing", "orders", 0)
			require.NoError(t, err)
			if op != logtest.OpSyncDir {
				require.Equal(t, uint64(5), off, "the old offset stays")
			}
			reopened, err := OpenOffsetStoreWithOptions(root, OffsetStoreOptions{FS: ffs})
			require.NoError(t, err)
			require.NoError(t, reopened.Commit("billing", "orders", 0, 10))
		})
	}
}
