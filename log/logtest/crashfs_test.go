package logtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// crashImage crashes c into a fresh directory and returns what survived:
// every path relative to the image root, directories with a trailing slash
// (and no content), files with their content.
func crashImage(t *testing.T, c *logtest.CrashFS) map[string]string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crashed")
	require.NoError(t, c.Crash(dst))
	tree, err := logtest.Tree(dst)
	require.NoError(t, err)
	out := map[string]string{}
	for _, rel := range tree {
		if rel[len(rel)-1] == '/' {
			out[rel] = ""
			continue
		}
		b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(rel)))
		require.NoError(t, err)
		out[rel] = string(b)
	}
	return out
}

// writeFile creates (or opens) name through c, writes data at 0 and, when
// sync is set, fsyncs it.
func writeFile(t *testing.T, c *logtest.CrashFS, name, data string, sync bool) {
	t.Helper()
	f, err := c.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(data), 0)
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

// TestCrashFSModel pins the crash model docs/design.md § File-system seam asks
// the seam to simulate: file content survives only as of its last fsync,
// directory entries (creations, renames, removals, new directories) only as of
// their directory's last fsync.
func TestCrashFSModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run acts below root through c; old.txt ("old") exists beforehand.
		run  func(t *testing.T, c *logtest.CrashFS, root string)
		want map[string]string
	}{
		{
			name: "existing content counts as durable",
			run:  func(*testing.T, *logtest.CrashFS, string) {},
			want: map[string]string{"old.txt": "old"},
		},
		{
			name: "new file without any sync is lost",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				writeFile(t, c, filepath.Join(root, "new.txt"), "data", true)
			},
			want: map[string]string{"old.txt": "old"},
		},
		{
			name: "new entry synced but data never synced is empty",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				writeFile(t, c, filepath.Join(root, "new.txt"), "data", false)
				require.NoError(t, c.SyncDir(root))
			},
			want: map[string]string{"old.txt": "old", "new.txt": ""},
		},
		{
			name: "entry and data synced survive",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				writeFile(t, c, filepath.Join(root, "new.txt"), "data", true)
				require.NoError(t, c.SyncDir(root))
			},
			want: map[string]string{"old.txt": "old", "new.txt": "data"},
		},
		{
			name: "writes after the last sync are lost",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				f, err := c.OpenFile(filepath.Join(root, "old.txt"), os.O_RDWR, 0)
				require.NoError(t, err)
				_, err = f.WriteAt([]byte("NEW"), 0)
				require.NoError(t, err)
				require.NoError(t, f.Sync())
				_, err = f.WriteAt([]byte(" and more"), 3)
				require.NoError(t, err)
				require.NoError(t, f.Truncate(1))
				require.NoError(t, f.Close())
			},
			want: map[string]string{"old.txt": "NEW"},
		},
		{
			name: "rename without a directory sync is lost",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				require.NoError(t, c.Rename(filepath.Join(root, "old.txt"), filepath.Join(root, "moved.txt")))
			},
			want: map[string]string{"old.txt": "old"},
		},
		{
			name: "rename is durable once the destination directory is synced",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				writeFile(t, c, filepath.Join(root, "old.txt.tmp"), "replaced", true)
				require.NoError(t, c.Rename(filepath.Join(root, "old.txt.tmp"), filepath.Join(root, "old.txt")))
				require.NoError(t, c.SyncDir(root))
			},
			want: map[string]string{"old.txt": "replaced"},
		},
		{
			name: "remove without a directory sync is lost",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				require.NoError(t, c.Remove(filepath.Join(root, "old.txt")))
			},
			want: map[string]string{"old.txt": "old"},
		},
		{
			name: "remove is durable once the directory is synced",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				require.NoError(t, c.Remove(filepath.Join(root, "old.txt")))
				require.NoError(t, c.SyncDir(root))
			},
			want: map[string]string{},
		},
		{
			name: "new directory needs its parent synced",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				require.NoError(t, c.Mkdir(filepath.Join(root, "a"), 0o755))
				require.NoError(t, c.Mkdir(filepath.Join(root, "a", "b"), 0o755))
				require.NoError(t, c.SyncDir(filepath.Join(root, "a")))
				writeFile(t, c, filepath.Join(root, "a", "b", "f"), "x", true)
				require.NoError(t, c.SyncDir(filepath.Join(root, "a", "b")))
			},
			want: map[string]string{"old.txt": "old"},
		},
		{
			name: "every level synced keeps the whole path",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				_, err := durable.MkdirAll(c, filepath.Join(root, "a", "b"))
				require.NoError(t, err)
				writeFile(t, c, filepath.Join(root, "a", "b", "f"), "x", true)
				require.NoError(t, c.SyncDir(filepath.Join(root, "a", "b")))
			},
			want: map[string]string{"old.txt": "old", "a/": "", "a/b/": "", "a/b/f": "x"},
		},
		{
			name: "a synced file in a renamed directory follows the directory",
			run: func(t *testing.T, c *logtest.CrashFS, root string) {
				_, err := durable.MkdirAll(c, filepath.Join(root, "d"))
				require.NoError(t, err)
				writeFile(t, c, filepath.Join(root, "d", "f"), "x", true)
				require.NoError(t, c.SyncDir(filepath.Join(root, "d")))
				require.NoError(t, c.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")))
				require.NoError(t, c.SyncDir(root))
			},
			want: map[string]string{"old.txt": "old", "e/": "", "e/f": "x"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "old.txt"), []byte("old"), 0o644))
			c, err := logtest.NewCrashFS(root)
			require.NoError(t, err)
			tc.run(t, c, root)
			require.Equal(t, tc.want, crashImage(t, c))
		})
	}
}

// TestCrashFSRefuses: changes outside the root fail with ErrOutsideRoot (a
// sync of a directory above the root is allowed) and a crash image goes only
// into an empty directory.
func TestCrashFSRefuses(t *testing.T) {
	root := t.TempDir()
	c, err := logtest.NewCrashFS(root)
	require.NoError(t, err)
	require.Equal(t, root, c.Root())
	outside := t.TempDir()
	_, err = c.OpenFile(filepath.Join(outside, "f"), os.O_RDWR|os.O_CREATE, 0o644)
	require.ErrorIs(t, err, logtest.ErrOutsideRoot)
	require.ErrorIs(t, c.Mkdir(filepath.Join(outside, "d"), 0o755), logtest.ErrOutsideRoot)
	require.ErrorIs(t, c.SyncDir(outside), logtest.ErrOutsideRoot)
	require.NoError(t, c.SyncDir(filepath.Dir(root)), "syncing the root's parent is allowed and changes nothing")
	require.NoFileExists(t, filepath.Join(outside, "f"))

	require.NoError(t, os.WriteFile(filepath.Join(outside, "x"), nil, 0o644))
	require.ErrorIs(t, c.Crash(outside), os.ErrExist)
	_, err = logtest.NewCrashFS(filepath.Join(root, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestCrashFSSyncFS: SyncFS (durable.WholeSyncer) makes every change under
// the root durable at once, as syncfs(2) does: unsynced writes, new files
// and directories, renames and removals survive a crash after it and are
// lost without it; a change after it is lost again. A durable.SyncGroup
// over a CrashFS syncs through it.
func TestCrashFSSyncFS(t *testing.T) {
	// change makes, through c, changes no File.Sync or SyncDir vouches for.
	change := func(t *testing.T, c *logtest.CrashFS, root string) {
		f, err := c.OpenFile(filepath.Join(root, "old.txt"), os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("OLD, rewritten"), 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, c.Mkdir(filepath.Join(root, "a"), 0o755))
		writeFile(t, c, filepath.Join(root, "a", "new.txt"), "new", false)
		require.NoError(t, c.Rename(filepath.Join(root, "gone.txt"), filepath.Join(root, "a", "moved.txt")))
		require.NoError(t, c.Remove(filepath.Join(root, "doomed.txt")))
	}
	before := map[string]string{"old.txt": "old", "gone.txt": "gone", "doomed.txt": "doomed"}
	after := map[string]string{"old.txt": "OLD, rewritten", "a/": "", "a/new.txt": "new", "a/moved.txt": "gone"}
	setup := func(t *testing.T) (*logtest.CrashFS, string) {
		root := t.TempDir()
		for name, data := range before {
			require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(data), 0o644))
		}
		c, err := logtest.NewCrashFS(root)
		require.NoError(t, err)
		return c, root
	}

	t.Run("without SyncFS the changes are lost", func(t *testing.T) {
		c, root := setup(t)
		change(t, c, root)
		require.Equal(t, before, crashImage(t, c))
	})

	t.Run("SyncFS keeps them", func(t *testing.T) {
		c, root := setup(t)
		change(t, c, root)
		d, err := c.OpenFile(root, os.O_RDONLY, 0)
		require.NoError(t, err)
		require.NoError(t, c.SyncFS(d))
		require.Equal(t, after, crashImage(t, c))

		// A write after the sync is lost again; a second SyncFS keeps it.
		writeFile(t, c, filepath.Join(root, "a", "new.txt"), "NEW", false)
		require.Equal(t, after, crashImage(t, c))
		require.NoError(t, c.SyncFS(d))
		require.Equal(t, "NEW", crashImage(t, c)["a/new.txt"])
		require.NoError(t, d.Close())
	})

	t.Run("through a SyncGroup", func(t *testing.T) {
		c, root := setup(t)
		g, err := durable.NewSyncGroup(c, root)
		require.NoError(t, err)
		defer func() { require.NoError(t, g.Close()) }()
		require.True(t, g.Whole())
		change(t, c, root)
		f, err := c.OpenFile(filepath.Join(root, "a", "new.txt"), os.O_RDWR, 0)
		require.NoError(t, err)
		require.Equal(t, before, crashImage(t, c), "nothing synced yet")
		require.NoError(t, g.Sync(f))
		require.NoError(t, f.Close())
		require.Equal(t, after, crashImage(t, c))
	})
}
