//go:build linux

package log_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// TestFaultNoSpaceRealTmpfs fills a real 1 MiB tmpfs (run as root): the
// append that meets ENOSPC is refused with an error durable.NoSpace
// recognises, every acknowledged record reads back, and after space
// returns (a filler file removed) a reopen takes appends again.
func TestFaultNoSpaceRealTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs; the FaultFS tests inject ENOSPC instead")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the FaultFS tests inject ENOSPC instead", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	filler := filepath.Join(dir, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 256<<10), 0o644))

	path := filepath.Join(dir, "log.bin")
	l, err := log.Open(path)
	require.NoError(t, err)
	payload := bytes.Repeat([]byte("x"), 32<<10)
	var acked int
	for {
		_, err = l.Append(payload)
		if err != nil {
			break
		}
		acked++
		require.Less(t, acked, 64, "a 1 MiB tmpfs must fill up")
	}
	require.True(t, durable.NoSpace(err), "%v", err)
	_, err = l.Append([]byte("y"))
	require.ErrorIs(t, err, log.ErrFailed)
	require.NoError(t, l.Close())

	require.NoError(t, os.Remove(filler)) // space returns
	l, err = log.Open(path)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, uint64(acked), l.NextOffset(), "every acknowledged record, and only those")
	_, err = l.Append([]byte("after"))
	require.NoError(t, err)
}
