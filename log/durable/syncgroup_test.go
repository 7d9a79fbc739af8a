package durable_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// countFile is a durable.File that counts its Sync and Close calls; Sync
// returns syncErr. Every other method is left to the nil embedded File, so
// a SyncGroup that reads or writes it panics the test.
type countFile struct {
	durable.File
	name    string
	syncErr error
	syncs   atomic.Int32
	closes  atomic.Int32
}

func (f *countFile) Sync() error  { f.syncs.Add(1); return f.syncErr }
func (f *countFile) Close() error { f.closes.Add(1); return nil }
func (f *countFile) Name() string { return f.name }

// Stat cannot tell the file's file system: the group takes it as its own.
func (f *countFile) Stat() (fs.FileInfo, error) { return nil, errors.New("countFile: no stat") }

// plainFS is a file system that cannot sync as a whole: no SyncFS method.
// It must never be reached, so every method is the nil embedded FS.
type plainFS struct{ durable.FS }

// wholeFS is a file system that can sync as a whole. The probe of
// NewSyncGroup gets probeErr; every later SyncFS blocks until the test
// sends that round's outcome on rounds.
type wholeFS struct {
	durable.FS
	dir      *countFile
	probeErr error
	rounds   chan error
	probed   atomic.Bool
	calls    atomic.Int32 // SyncFS calls after the probe
}

func newWholeFS() *wholeFS {
	return &wholeFS{dir: &countFile{name: "data"}, rounds: make(chan error)}
}

// newWholeGroup is a SyncGroup over a new wholeFS, its directory "data".
func newWholeGroup(t *testing.T) (*wholeFS, *durable.SyncGroup) {
	t.Helper()
	w := newWholeFS()
	g, err := durable.NewSyncGroup(w, "data")
	require.NoError(t, err)
	return w, g
}

func (w *wholeFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if name != w.dir.name || flag != os.O_RDONLY {
		return nil, fmt.Errorf("wholeFS: unexpected open of %s with flags %#x", name, flag)
	}
	return w.dir, nil
}

// CanSyncFS is nil: the fake's syncs are whatever the test scripts.
func (w *wholeFS) CanSyncFS(durable.File) error { return nil }

func (w *wholeFS) SyncFS(f durable.File) error {
	if f != durable.File(w.dir) {
		return fmt.Errorf("wholeFS: SyncFS through %s, not the group's directory", f.Name())
	}
	if !w.probed.Swap(true) {
		return w.probeErr
	}
	w.calls.Add(1)
	return <-w.rounds
}

// caller runs g.Sync(f) in a goroutine; its outcome arrives on the
// returned channel, which stays empty while the call blocks.
func caller(g *durable.SyncGroup, f durable.File) <-chan error {
	out := make(chan error, 1)
	go func() { out <- g.Sync(f) }()
	return out
}

// blocked reports whether a caller has not returned yet.
func blocked(c <-chan error) bool {
	select {
	case <-c:
		return false
	default:
		return true
	}
}

// TestSyncGroupFallback pins docs/design.md § One sync for many partitions:
// where the file system cannot sync as a whole, every Sync is the file's
// own, and a probe that fails otherwise refuses the group.
func TestSyncGroupFallback(t *testing.T) {
	fileErr := errors.New("file sync failed")

	t.Run("no WholeSyncer", func(t *testing.T) {
		g, err := durable.NewSyncGroup(plainFS{}, "data")
		require.NoError(t, err)
		require.False(t, g.Whole())
		f := &countFile{name: "log.bin"}
		require.NoError(t, g.Sync(f))
		require.NoError(t, g.Sync(f))
		require.EqualValues(t, 2, f.syncs.Load())
		bad := &countFile{name: "bad.bin", syncErr: fileErr}
		require.ErrorIs(t, g.Sync(bad), fileErr)
		require.NoError(t, g.Close())
	})

	t.Run("SyncFS unsupported", func(t *testing.T) {
		w := newWholeFS()
		w.probeErr = fmt.Errorf("syncfs: %w", errors.ErrUnsupported)
		g, err := durable.NewSyncGroup(w, "data")
		require.NoError(t, err)
		require.False(t, g.Whole())
		require.EqualValues(t, 1, w.dir.closes.Load(), "the probe's directory is closed")
		f := &countFile{name: "log.bin"}
		require.NoError(t, g.Sync(f))
		require.EqualValues(t, 1, f.syncs.Load())
		require.Zero(t, w.calls.Load(), "no SyncFS after the probe")
		require.NoError(t, g.Close())
		require.EqualValues(t, 1, w.dir.closes.Load())
	})

	t.Run("probe fails", func(t *testing.T) {
		probeErr := errors.New("write-back error")
		w := newWholeFS()
		w.probeErr = probeErr
		g, err := durable.NewSyncGroup(w, "data")
		require.ErrorIs(t, err, probeErr)
		require.ErrorContains(t, err, "data")
		require.Nil(t, g)
		require.EqualValues(t, 1, w.dir.closes.Load(), "the probe's directory is closed")
	})

	t.Run("directory does not open", func(t *testing.T) {
		w := newWholeFS()
		_, err := durable.NewSyncGroup(w, "elsewhere")
		require.ErrorContains(t, err, "unexpected open of elsewhere")
	})
}

// TestSyncGroupSharing: callers that arrive while a sync runs share the
// next one; two syncs of the file system answer them all.
func TestSyncGroupSharing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const others = 8
		w, g := newWholeGroup(t)
		require.True(t, g.Whole())
		f := &countFile{name: "log.bin"}

		first := caller(g, f)
		synctest.Wait() // first runs round 1, blocked in SyncFS
		require.EqualValues(t, 1, w.calls.Load())
		var rest []<-chan error
		for range others {
			rest = append(rest, caller(g, f))
		}
		synctest.Wait() // every other caller waits in round 2
		require.EqualValues(t, 1, w.calls.Load(), "nobody starts a second sync while one runs")

		w.rounds <- nil // round 1 ends; round 2 starts
		require.NoError(t, <-first)
		synctest.Wait()
		require.EqualValues(t, 2, w.calls.Load())
		w.rounds <- nil // round 2 ends
		for _, c := range rest {
			require.NoError(t, <-c)
		}
		require.EqualValues(t, 2, w.calls.Load(), "%d callers, two syncs", others+1)
		require.Zero(t, f.syncs.Load(), "no file's own sync")
		require.NoError(t, g.Close())
		require.EqualValues(t, 1, w.dir.closes.Load())
	})
}

// TestSyncGroupOrdering: a caller that arrives while a sync runs is not
// answered by that sync, which may have begun before its write, but by
// the next.
func TestSyncGroupOrdering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, g := newWholeGroup(t)
		f := &countFile{name: "log.bin"}

		first := caller(g, f)
		synctest.Wait()
		late := caller(g, f)
		synctest.Wait()

		w.rounds <- nil
		require.NoError(t, <-first)
		synctest.Wait()
		require.True(t, blocked(late), "the late caller waits for a sync begun after its call")
		require.EqualValues(t, 2, w.calls.Load(), "its sync has started")

		w.rounds <- nil
		require.NoError(t, <-late)

		// A caller that finds no sync running starts one at once.
		alone := caller(g, f)
		synctest.Wait()
		require.EqualValues(t, 3, w.calls.Load())
		w.rounds <- nil
		require.NoError(t, <-alone)
	})
}

// TestSyncGroupErrors: a sync of the file system that fails fails its
// callers, and breaks the group for good: the callers already waiting for
// the next sync, and every caller after them, sync their own files, whose
// descriptors report their files' write-back errors (a sync of the whole
// file system reports one once, maybe to a sync its writer is not in).
func TestSyncGroupErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const others = 5
		roundErr := errors.New("write-back error")
		w, g := newWholeGroup(t)
		f := &countFile{name: "log.bin"}

		first := caller(g, f)
		synctest.Wait()
		var rest []<-chan error
		for range others {
			rest = append(rest, caller(g, f))
		}
		synctest.Wait()

		w.rounds <- roundErr // round 1 fails: its one caller
		err := <-first
		require.ErrorIs(t, err, roundErr)
		require.ErrorContains(t, err, "log.bin")
		require.ErrorIs(t, g.Broken(), roundErr)
		for _, c := range rest {
			require.NoError(t, <-c, "synced its own file")
		}
		require.EqualValues(t, others, f.syncs.Load())

		f.syncErr = errors.New("the file's own write-back error")
		require.ErrorIs(t, g.Sync(f), f.syncErr, "a file's own sync reports its error")
		require.EqualValues(t, 1, w.calls.Load(), "no sync of the file system after the first failed")
	})
}

// TestSyncGroupReal: on Linux, durable.OS shares syncs exactly where it
// says syncfs vouches for the file system (CanSyncFS), and a Sync through
// the group works either way.
func TestSyncGroupReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("syncfs(2) is Linux only")
	}
	dir := t.TempDir()
	g, err := durable.NewSyncGroup(durable.OS, dir)
	require.NoError(t, err)
	d, err := durable.OS.OpenFile(dir, os.O_RDONLY, 0)
	require.NoError(t, err)
	can := durable.OS.(durable.WholeSyncer).CanSyncFS(d)
	require.NoError(t, d.Close())
	require.Equal(t, can == nil, g.Whole(), "shared exactly where syncfs vouches: %v", can)
	if can != nil {
		require.ErrorIs(t, can, errors.ErrUnsupported)
	}
	f, err := durable.OS.OpenFile(filepath.Join(dir, "log.bin"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("record"), 0)
	require.NoError(t, err)
	require.NoError(t, g.Sync(f))
	require.NoError(t, f.Close())
	require.NoError(t, g.Close())
}

// TestSyncGroupCloseWaitsAndFallsBack: Close waits for the sync under
// way, then closes the group's directory; a Sync after Close is the
// file's own.
func TestSyncGroupCloseWaitsAndFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, g := newWholeGroup(t)
		f := &countFile{name: "log.bin"}
		first := caller(g, f)
		synctest.Wait() // its sync is under way
		closed := make(chan error, 1)
		go func() { closed <- g.Close() }()
		synctest.Wait()
		require.True(t, blocked(closed), "Close waits for the sync under way")
		require.Zero(t, w.dir.closes.Load())
		w.rounds <- nil
		require.NoError(t, <-first)
		require.NoError(t, <-closed)
		require.EqualValues(t, 1, w.dir.closes.Load(), "the directory closed after the sync")

		require.NoError(t, g.Sync(f))
		require.EqualValues(t, 1, f.syncs.Load(), "after Close a file syncs itself")
		require.EqualValues(t, 1, w.calls.Load(), "and no sync of the file system runs")
		require.NoError(t, g.Close(), "closing twice is harmless")
		require.EqualValues(t, 1, w.dir.closes.Load())
	})
}
