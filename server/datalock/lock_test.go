//go:build unix

package datalock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// TestDataLockAcquireWritesPID: a server's lock creates the data directory
// and the lock file, which then holds the server's pid and a newline.
func TestDataLockAcquireWritesPID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data")
	l, err := Acquire(durable.OS, dir)
	require.NoError(t, err)
	defer l.Release()
	require.Equal(t, filepath.Join(dir, FileName), l.Path())
	data, err := os.ReadFile(Path(dir))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(data))
	require.Equal(t, os.Getpid(), ReadPID(Path(dir)))
}

// TestDataLockAcquireReplacesOldPID: a longer pid left by an earlier server
// is replaced, not overwritten in part.
func TestDataLockAcquireReplacesOldPID(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(Path(dir), []byte("123456789012345\n"), 0o644))
	l, err := Acquire(durable.OS, dir)
	require.NoError(t, err)
	defer l.Release()
	require.Equal(t, os.Getpid(), ReadPID(Path(dir)))
}

// TestDataLockAcquireRefusesSecond: while one lock is held, a second
// Acquire fails with a *LockedError naming the file and the holder's pid;
// after Release it succeeds. The file stays after Release.
func TestDataLockAcquireRefusesSecond(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(durable.OS, dir)
	require.NoError(t, err)

	_, err = Acquire(durable.OS, dir)
	require.ErrorIs(t, err, ErrLocked)
	var le *LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, Path(dir), le.Path)
	require.Equal(t, os.Getpid(), le.PID)

	require.NoError(t, first.Release())
	require.NoError(t, first.Release(), "releasing twice is harmless")
	require.FileExists(t, Path(dir))
	second, err := Acquire(durable.OS, dir)
	require.NoError(t, err)
	require.NoError(t, second.Release())
	var none *Lock
	require.NoError(t, none.Release())
}

// TestDataLockAcquireCreatesDirDurably: the data directory and its missing
// parents survive a power loss right after Acquire (durable.MkdirAll on the
// given file system).
func TestDataLockAcquireCreatesDirDurably(t *testing.T) {
	base := t.TempDir()
	c, err := logtest.NewCrashFS(base)
	require.NoError(t, err)
	l, err := Acquire(c, filepath.Join(base, "a", "b", "data"))
	require.NoError(t, err)
	defer l.Release()
	img := t.TempDir()
	require.NoError(t, c.Crash(img))
	require.DirExists(t, filepath.Join(img, "a", "b", "data"))
}

// TestDataLockAcquireNotADirectory: a data directory that is a file is an
// error, not a lock.
func TestDataLockAcquireNotADirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	_, err := Acquire(durable.OS, path)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrLocked)
}

// TestDataLockAcquireExisting: a tool's lock needs the file to exist and
// creates nothing; it conflicts with a server's lock both ways and leaves
// the server's pid in place.
func TestDataLockAcquireExisting(t *testing.T) {
	dir := t.TempDir()
	_, err := AcquireExisting(dir)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NoFileExists(t, Path(dir))

	server, err := Acquire(durable.OS, dir)
	require.NoError(t, err)
	_, err = AcquireExisting(dir)
	var le *LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, os.Getpid(), le.PID)
	require.NoError(t, server.Release())

	tool, err := AcquireExisting(dir)
	require.NoError(t, err)
	_, err = Acquire(durable.OS, dir)
	require.ErrorIs(t, err, ErrLocked, "no server starts while a tool holds the lock")
	require.NoError(t, tool.Release())
	require.Equal(t, os.Getpid(), ReadPID(Path(dir)), "the tool wrote nothing")
}

// TestDataLockReadPID: anything but a positive decimal pid (with blanks
// around it) reads as 0.
func TestDataLockReadPID(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, ReadPID(filepath.Join(dir, "missing")))
	for content, want := range map[string]int{
		"4242\n":                               4242,
		" 7 ":                                  7,
		"":                                     0,
		"pid\n":                                0,
		"-3\n":                                 0,
		"0\n":                                  0,
		"1234567890123456789012345678901234\n": 0,
	} {
		path := filepath.Join(dir, FileName)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		require.Equal(t, want, ReadPID(path), "%q", content)
	}
}

// TestDataLockLockedErrorMessage: the message names the directory, the
// holder and the lock file; an unknown pid says "another process".
func TestDataLockLockedErrorMessage(t *testing.T) {
	err := &LockedError{Path: "/srv/data/.lock", PID: 4242}
	require.True(t, errors.Is(err, ErrLocked))
	require.Equal(t, "datalock: data directory /srv/data is in use by pid 4242 (it holds /srv/data/.lock)", err.Error())
	require.Equal(t, "datalock: data directory /srv/data is in use by another process (it holds /srv/data/.lock)",
		(&LockedError{Path: "/srv/data/.lock"}).Error())
}
