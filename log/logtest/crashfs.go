package logtest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pystream/pystream/log/durable"
)

// ErrOutsideRoot is returned by a CrashFS for a change to a path that is not
// below its root: what happens there could not be part of a crash image.
var ErrOutsideRoot = errors.New("logtest: path outside the CrashFS root")

// CrashFS is a durable.FS over the real file system that remembers what a
// power loss would keep, so that a test can simulate a crash that drops
// everything never synced (docs/design.md § File-system seam).
//
// The model is deliberately simple and conservative. Every file and
// directory below the root is a node:
//
//   - a file node keeps its content as of its last successful File.Sync
//     (nothing, if it was never synced); writes and truncations after that
//     are lost in a crash;
//   - a directory node keeps two sets of entries: the live ones and the ones
//     as of its last successful SyncDir. Creating, renaming into, renaming
//     out of or removing an entry (a file, or a directory made by Mkdir)
//     changes only the live set; a crash keeps the synced set. A rename is
//     thus durable once the destination directory is synced (and the source
//     name disappears once the source directory is);
//   - SyncFS (durable.WholeSyncer, what a durable.SyncGroup uses) makes
//     everything durable at once: every file's content as it is now and
//     every directory's live entries, as syncfs(2) does.
//
// Everything under the root when NewCrashFS is called counts as durable. The
// root itself always survives. Changes to paths outside the root fail with
// ErrOutsideRoot; Stat and ReadDir pass straight through. A file opened
// write-only is opened read-write underneath, so that Sync can read back what
// it makes durable.
//
// Crash writes the image of a crash into another directory; the live files
// are untouched, so a test can compare the two. The image is the crash in
// which nothing unsynced reached the disk. A real crash may also keep some
// unsynced changes (part of an append, a truncation); torn files of that
// kind are built byte by byte in other tests. CrashFS is safe for
// concurrent use: one mutex serialises every namespace change and every
// sync, while reads and writes of open files go straight to the OS.
type CrashFS struct {
	base durable.FS
	root string

	// mu guards every node reachable from top: their live and synced entry
	// sets and their synced content.
	mu  sync.Mutex
	top *crashNode
}

// crashNode is one file or directory as CrashFS models it.
type crashNode struct {
	dir bool
	// synced is a file's content as of its last Sync; nil when never synced.
	synced []byte
	// live and durable are a directory's entries now and as of its last
	// SyncDir.
	live, durable map[string]*crashNode
}

var (
	_ durable.FS          = (*CrashFS)(nil)
	_ durable.WholeSyncer = (*CrashFS)(nil)
)

func newDirNode() *crashNode {
	return &crashNode{dir: true, live: map[string]*crashNode{}, durable: map[string]*crashNode{}}
}

// NewCrashFS tracks the existing directory root on the real file system,
// counting everything already in it as durable.
func NewCrashFS(root string) (*CrashFS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("logtest: crash fs %s: %w", root, err)
	}
	top, err := snapshotDir(abs)
	if err != nil {
		return nil, fmt.Errorf("logtest: crash fs %s: %w", root, err)
	}
	return &CrashFS{base: durable.OS, root: abs, top: top}, nil
}

// snapshotDir builds the node of an existing directory, every entry durable.
func snapshotDir(dir string) (*crashNode, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	n := newDirNode()
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		var child *crashNode
		switch {
		case e.IsDir():
			child, err = snapshotDir(p)
		case e.Type().IsRegular():
			var data []byte
			data, err = os.ReadFile(p)
			child = &crashNode{synced: data}
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		n.live[e.Name()] = child
		n.durable[e.Name()] = child
	}
	return n, nil
}

// Root is the directory a CrashFS tracks; Crash(dst) puts the image of
// Root()/x at dst/x.
func (c *CrashFS) Root() string { return c.root }

// parts splits an absolute path below the root into its names; the root
// itself has none.
func (c *CrashFS) parts(name string) ([]string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(c.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, ErrOutsideRoot
	}
	if rel == "." {
		return nil, nil
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}

// aboveRoot reports whether dir is a proper ancestor of the root.
func (c *CrashFS) aboveRoot(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(abs, c.root)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// lookupLocked finds the live node at the path given by names, or nil.
func (c *CrashFS) lookupLocked(names []string) *crashNode {
	n := c.top
	for _, name := range names {
		if n == nil || !n.dir {
			return nil
		}
		n = n.live[name]
	}
	return n
}

// parentLocked finds the live directory holding name, and the last name.
func (c *CrashFS) parentLocked(name string) (*crashNode, string, error) {
	names, err := c.parts(name)
	if err != nil {
		return nil, "", &fs.PathError{Op: "crashfs", Path: name, Err: err}
	}
	if len(names) == 0 {
		return nil, "", &fs.PathError{Op: "crashfs", Path: name, Err: fmt.Errorf("the root itself: %w", ErrOutsideRoot)}
	}
	parent := c.lookupLocked(names[:len(names)-1])
	if parent == nil || !parent.dir {
		return nil, "", &fs.PathError{Op: "crashfs", Path: name, Err: fmt.Errorf("parent not tracked: %w", fs.ErrNotExist)}
	}
	return parent, names[len(names)-1], nil
}

func (c *CrashFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) == 0 {
		// A read-only open changes nothing; track the node if there is one.
		f, err := c.base.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		var node *crashNode
		if names, perr := c.parts(name); perr == nil {
			node = c.lookupLocked(names)
		}
		return &crashFile{fs: c, f: f, node: node}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	parent, last, err := c.parentLocked(name)
	if err != nil {
		return nil, err
	}
	if flag&os.O_WRONLY != 0 {
		// Sync reads the content back to record it.
		flag = flag&^os.O_WRONLY | os.O_RDWR
	}
	f, err := c.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	node := parent.live[last]
	if node == nil {
		// A new file (or one made behind the CrashFS's back): its entry is
		// not durable and it has no synced content.
		node = &crashNode{}
		parent.live[last] = node
	}
	return &crashFile{fs: c, f: f, node: node}, nil
}

func (c *CrashFS) Rename(oldpath, newpath string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	oldParent, oldLast, err := c.parentLocked(oldpath)
	if err != nil {
		return err
	}
	newParent, newLast, err := c.parentLocked(newpath)
	if err != nil {
		return err
	}
	if err := c.base.Rename(oldpath, newpath); err != nil {
		return err
	}
	node := oldParent.live[oldLast]
	if node == nil {
		node = &crashNode{}
		if info, err := c.base.Stat(newpath); err == nil && info.IsDir() {
			node = newDirNode()
		}
	}
	delete(oldParent.live, oldLast)
	newParent.live[newLast] = node
	return nil
}

func (c *CrashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	parent, last, err := c.parentLocked(name)
	if err != nil {
		return err
	}
	if err := c.base.Remove(name); err != nil {
		return err
	}
	delete(parent.live, last)
	return nil
}

func (c *CrashFS) Mkdir(name string, perm fs.FileMode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	parent, last, err := c.parentLocked(name)
	if err != nil {
		return err
	}
	if err := c.base.Mkdir(name, perm); err != nil {
		return err
	}
	parent.live[last] = newDirNode()
	return nil
}

// SyncDir makes dir's entries durable in the model. A directory above the
// root is synced on the base file system and changes nothing in the model,
// which treats the root's own entry as durable: durable.MkdirAll syncs the
// parent of a directory that already exists, and the root is one.
func (c *CrashFS) SyncDir(dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aboveRoot(dir) {
		return c.base.SyncDir(dir)
	}
	names, err := c.parts(dir)
	if err != nil {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: err}
	}
	if err := c.base.SyncDir(dir); err != nil {
		return err
	}
	if n := c.lookupLocked(names); n != nil && n.dir {
		n.durable = make(map[string]*crashNode, len(n.live))
		for k, v := range n.live {
			n.durable[k] = v
		}
	}
	return nil
}

// SyncFS makes everything under the root durable in the model, as
// syncfs(2) does: every file node's synced content becomes its content on
// disk now, read by path, and every directory's durable entries its live
// ones. f is an open file or directory of c; the base file system's SyncFS
// is called through it, where the base has one that works (where it does
// not, as on a platform without syncfs, only the model changes: nothing
// here is meant to outlive the test). As with File.Sync, the content is
// read before the real sync, so a write racing with SyncFS counts as lost;
// and if any read or the real sync fails, the model is left as it was.
func (c *CrashFS) SyncFS(f durable.File) error {
	return c.syncFS(f)
}

// CanSyncFS is nil: the model makes everything durable at a SyncFS,
// whatever the base file system is.
func (c *CrashFS) CanSyncFS(durable.File) error { return nil }

func (c *CrashFS) syncFS(f durable.File) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	contents := map[*crashNode][]byte{}
	if err := c.readTreeLocked(c.top, c.root, contents); err != nil {
		return fmt.Errorf("logtest: crash fs syncfs: %w", err)
	}
	if w, ok := c.base.(durable.WholeSyncer); ok {
		through := f
		if cf, ok := f.(*crashFile); ok {
			through = cf.f
		}
		if err := w.SyncFS(through); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	for n, data := range contents {
		n.synced = data
	}
	commitDirsLocked(c.top)
	return nil
}

// readTreeLocked reads into contents the content on disk of every file
// node reachable through the live entries of directory n, which is at dir,
// from the base file system.
func (c *CrashFS) readTreeLocked(n *crashNode, dir string, contents map[*crashNode][]byte) error {
	for name, child := range n.live {
		p := filepath.Join(dir, name)
		if child.dir {
			if err := c.readTreeLocked(child, p, contents); err != nil {
				return err
			}
			continue
		}
		data, err := c.readFileLocked(p)
		if err != nil {
			return err
		}
		contents[child] = data
	}
	return nil
}

// readFileLocked reads the whole file at path from the base file system.
func (c *CrashFS) readFileLocked(path string) ([]byte, error) {
	f, err := c.base.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	data, err := readAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return data, err
}

// commitDirsLocked makes the live entries of n and of every directory
// below it durable.
func commitDirsLocked(n *crashNode) {
	n.durable = make(map[string]*crashNode, len(n.live))
	for name, child := range n.live {
		n.durable[name] = child
		if child.dir {
			commitDirsLocked(child)
		}
	}
}

func (c *CrashFS) Stat(name string) (fs.FileInfo, error)      { return c.base.Stat(name) }
func (c *CrashFS) ReadDir(name string) ([]fs.DirEntry, error) { return c.base.ReadDir(name) }

// Crash writes into dst, which must be a missing or empty directory, what a
// power loss right now would leave under the root: only synced directory
// entries, each file with its last synced content (empty if never synced).
func (c *CrashFS) Crash(dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("logtest: crash into %s: %w", dst, err)
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		return fmt.Errorf("logtest: crash into %s: %w", dst, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("logtest: crash into %s: %w", dst, fs.ErrExist)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := materialiseLocked(c.top, dst); err != nil {
		return fmt.Errorf("logtest: crash into %s: %w", dst, err)
	}
	return nil
}

// materialiseLocked writes the durable entries of directory n into dir.
func materialiseLocked(n *crashNode, dir string) error {
	for name, child := range n.durable {
		p := filepath.Join(dir, name)
		if child.dir {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			if err := materialiseLocked(child, p); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(p, child.synced, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// crashFile is an open file of a CrashFS. node is nil for a file opened
// read-only outside the tracked tree.
type crashFile struct {
	fs   *CrashFS
	f    durable.File
	node *crashNode
}

func (cf *crashFile) ReadAt(p []byte, off int64) (int, error)  { return cf.f.ReadAt(p, off) }
func (cf *crashFile) WriteAt(p []byte, off int64) (int, error) { return cf.f.WriteAt(p, off) }
func (cf *crashFile) Truncate(size int64) error                { return cf.f.Truncate(size) }
func (cf *crashFile) Stat() (fs.FileInfo, error)               { return cf.f.Stat() }
func (cf *crashFile) Name() string                             { return cf.f.Name() }
func (cf *crashFile) Close() error                             { return cf.f.Close() }

// Sync records the file's content as durable. The content is read before
// the real sync, so a write racing with the sync counts as lost: fsync
// promises only what was written before it was called.
func (cf *crashFile) Sync() error {
	cf.fs.mu.Lock()
	defer cf.fs.mu.Unlock()
	var data []byte
	if cf.node != nil {
		var err error
		if data, err = readAll(cf.f); err != nil {
			return fmt.Errorf("logtest: crash fs sync %s: %w", cf.f.Name(), err)
		}
	}
	if err := cf.f.Sync(); err != nil {
		return err
	}
	if cf.node != nil {
		cf.node.synced = data
	}
	return nil
}

// readAll reads an open file's whole content.
func readAll(f durable.File) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, info.Size())
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return nil, err
	}
	return buf[:n], nil
}
