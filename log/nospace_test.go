package log_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// TestFaultNoSpaceIsStickyAndNamed pins docs/design.md § Sticky failure for
// a full disk: an append that meets ENOSPC (at its write or its fsync)
// fails with an error that wraps syscall.ENOSPC, so callers can say "the
// disk is full"; the log then refuses writes (Failed, ErrFailed, still
// wrapping ENOSPC) even after space returns, and only a reopen — which
// scans the file — takes writes again, with exactly the acknowledged
// records.
func TestFaultNoSpaceIsStickyAndNamed(t *testing.T) {
	for _, op := range []logtest.Op{logtest.OpWrite, logtest.OpSync} {
		t.Run(string(op), func(t *testing.T) {
			path := logPath(t)
			ffs := logtest.NewFaultFS(nil)
			l, err := log.OpenWithOptions(path, log.Options{FS: ffs})
			require.NoError(t, err)
			acked, err := l.Append([]byte("kept"))
			require.NoError(t, err)
			require.NoError(t, l.Failed())

			ffs.SetFault(func(o logtest.Op, p string) error {
				if o == op {
					return syscall.ENOSPC
				}
				return nil
			})
			_, err = l.Append([]byte("lost"))
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.True(t, durable.NoSpace(err))
			ffs.SetFault(nil) // space returns

			require.ErrorIs(t, l.Failed(), log.ErrFailed)
			require.True(t, durable.NoSpace(l.Failed()), "the sticky failure still says why")
			_, err = l.Append([]byte("refused"))
			require.ErrorIs(t, err, log.ErrFailed, "never retried: a failed fsync proves nothing")
			require.NoError(t, l.Close())

			l, err = log.OpenWithOptions(path, log.Options{FS: ffs})
			require.NoError(t, err)
			defer l.Close()
			require.Equal(t, []log.Record{acked}, readAll(t, l))
			_, err = l.Append([]byte("after"))
			require.NoError(t, err)
		})
	}
}

// TestFaultFullDiskFault: logtest.FullDisk fails only the operations that
// need space, on the paths it is given, with ENOSPC.
func TestFaultFullDiskFault(t *testing.T) {
	path := logPath(t)
	ffs := logtest.NewFaultFS(nil)
	ffs.SetFault(logtest.FullDisk(func(p string) bool { return p == path }))
	l, err := log.OpenWithOptions(path, log.Options{FS: ffs})
	require.NoError(t, err, "opening needs no space")
	defer l.Close()
	_, err = l.Append([]byte("x"))
	require.True(t, durable.NoSpace(err))
	require.Equal(t, uint64(0), l.NextOffset())
}
