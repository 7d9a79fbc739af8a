package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pystream/pystream/log/durable"
)

// DirName is the directory, under the journal's root, that holds its
// generation files.
const DirName = "wal"

// DefaultGenerationBytes is how large a generation grows before a
// checkpoint starts the next one.
const DefaultGenerationBytes = 64 << 20

// Options configure a journal.
type Options struct {
	// Journaled reports whether the file at path (as OpenFile is given
	// it) is one whose appends go through the journal. Nil journals
	// nothing: the FS is then its base.
	Journaled func(path string) bool
	// GenerationBytes is how large a generation file grows before a
	// checkpoint; zero means DefaultGenerationBytes.
	GenerationBytes int64
	// Logf, if set, is told what replay did and when the journal fails.
	Logf func(format string, args ...any)
}

// ErrClosed is returned by a Sync that needs the journal after Close.
var ErrClosed = errors.New("wal: journal closed")

// FS is a file system whose journaled files make their writes durable by
// appending them to one journal file and fsyncing it, shared by every
// file's Sync in flight: group commit across files. Every other file and
// operation is its base's.
//
// A journaled file's Sync returns once what was written to it since its
// last Sync is in the journal and the journal is durable; its own bytes
// reach the disk later, at a checkpoint. A checkpoint starts a new
// generation file, fsyncs every file written through the older ones and
// removes them. One also runs before anything that would make a replay
// wrong: Truncate of a file, or Remove or Rename of a path at or above a
// file, that the journal holds writes for. Open replays what the journal
// holds into its files before anything reads them.
type FS struct {
	base durable.FS
	root string // absolute, cleaned
	dir  string // root/DirName
	opts Options

	mu   sync.Mutex
	cond *sync.Cond
	cur  *generation
	// syncing is set while a round is written and synced; pending is the
	// next round, which callers join meanwhile.
	syncing bool
	pending *round
	// dirty are the files written through the current generation and
	// not yet synced by a checkpoint; older holds, by path, the newest
	// generation each path has writes in, until a checkpoint covers it.
	dirty  map[*file]struct{}
	newest map[string]uint64
	// broken is the first failure that leaves the journal in doubt: from
	// then on every journaled Sync fails with it.
	broken error
	closed bool
	// closing is set once Close begins: no background checkpoint starts.
	closing bool
	// checkpointing is set while a background checkpoint runs.
	checkpointing bool
	bg            sync.WaitGroup

	ckpt sync.Mutex // one checkpoint at a time
}

// generation is the journal file being written.
type generation struct {
	n    uint64
	f    durable.File
	size int64
	// zeroed is how far the file has been filled with zeros ahead of
	// size: a round that stays below it overwrites bytes the file already
	// holds, and its fdatasync has no size to commit.
	zeroed int64
}

// zeroAhead is how far a generation is filled with zeros at a time. A
// variable only so that tests can make it small (export_test.go).
var zeroAhead = 4 << 20

// ensure fills the file with zeros past size+n, if it is not already,
// and makes them durable.
func (g *generation) ensure(n int) error {
	if g.size+int64(n) <= g.zeroed {
		return nil
	}
	grow := max(int64(zeroAhead), g.size+int64(n)-g.zeroed)
	if _, err := g.f.WriteAt(make([]byte, grow), g.zeroed); err != nil {
		return err
	}
	if err := g.f.Sync(); err != nil {
		return err
	}
	g.zeroed += grow
	return nil
}

// round is one write and sync of the journal and the callers it answers.
type round struct {
	buf   []byte
	files []*file
	done  chan struct{}
	err   error
}

// Open replays the journal under root (root/DirName) into the files it
// names, makes them durable, and returns an FS over base that journals
// the files opts.Journaled names. Nothing else may write under root while
// Open replays.
func Open(base durable.FS, root string, opts Options) (*FS, error) {
	j, err := newFS(base, root, opts)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", root, err)
	}
	last, err := j.replay()
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", root, err)
	}
	g, err := j.create(last + 1)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", root, err)
	}
	j.cur = g
	return j, nil
}

// Replay replays the journal under root into the files it names, makes
// them durable and removes it, as Open does, without opening a journal
// for what follows: a broker whose appends fsync their own files replays
// what a journal left before it opens them.
func Replay(base durable.FS, root string, opts Options) error {
	j, err := newFS(base, root, opts)
	if err == nil {
		_, err = j.replay()
	}
	if err != nil {
		return fmt.Errorf("wal: replay %s: %w", root, err)
	}
	return nil
}

// newFS is an FS over base at root, not yet replayed nor open.
func newFS(base durable.FS, root string, opts Options) (*FS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if opts.GenerationBytes <= 0 {
		opts.GenerationBytes = DefaultGenerationBytes
	}
	j := &FS{base: base, root: abs, dir: filepath.Join(abs, DirName), opts: opts,
		dirty: map[*file]struct{}{}, newest: map[string]uint64{}}
	j.cond = sync.NewCond(&j.mu)
	return j, nil
}

// create makes generation n's file, with its header durable and its
// directory entry too.
func (j *FS) create(n uint64) (*generation, error) {
	if _, err := durable.MkdirAll(j.base, j.dir); err != nil {
		return nil, err
	}
	path := filepath.Join(j.dir, GenerationFileName(n))
	f, err := j.base.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	hdr := appendHeader(nil, n)
	_, err = f.WriteAt(hdr, 0)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = j.base.SyncDir(j.dir)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create %s: %w", path, err), f.Close())
	}
	return &generation{n: n, f: f, size: int64(len(hdr)), zeroed: int64(len(hdr))}, nil
}

// rel is path relative to the root, with slashes, and whether it lies
// under the root at all.
func (j *FS) rel(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	r, err := filepath.Rel(j.root, abs)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// OpenFile opens a file of the base; one the options journal, opened for
// writing, is wrapped so that its Sync goes through the journal.
func (j *FS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	writing := flag&(os.O_WRONLY|os.O_RDWR) != 0
	var rel string
	journaled := false
	if writing && j.opts.Journaled != nil && j.opts.Journaled(name) {
		rel, journaled = j.rel(name)
	}
	if flag&os.O_TRUNC != 0 {
		if err := j.settle(name); err != nil {
			return nil, err
		}
	}
	f, err := j.base.OpenFile(name, flag, perm)
	if err != nil || !journaled {
		return f, err
	}
	return &file{File: f, j: j, rel: rel}, nil
}

// Rename is the base's, after a checkpoint when the journal holds writes
// to a file at or below either path.
func (j *FS) Rename(oldpath, newpath string) error {
	if err := j.settle(oldpath, newpath); err != nil {
		return err
	}
	return j.base.Rename(oldpath, newpath)
}

// Remove is the base's, after a checkpoint when the journal holds writes
// to a file at or below name.
func (j *FS) Remove(name string) error {
	if err := j.settle(name); err != nil {
		return err
	}
	return j.base.Remove(name)
}

func (j *FS) Mkdir(name string, perm fs.FileMode) error  { return j.base.Mkdir(name, perm) }
func (j *FS) SyncDir(dir string) error                   { return j.base.SyncDir(dir) }
func (j *FS) Stat(name string) (fs.FileInfo, error)      { return j.base.Stat(name) }
func (j *FS) ReadDir(name string) ([]fs.DirEntry, error) { return j.base.ReadDir(name) }

// settle runs a checkpoint if the journal holds writes to a file at or
// below any of paths, so that no replay writes them again.
func (j *FS) settle(paths ...string) error {
	j.mu.Lock()
	hit := false
	for _, p := range paths {
		if r, ok := j.rel(p); ok && j.holdsLocked(r) {
			hit = true
		}
	}
	j.mu.Unlock()
	if !hit {
		return nil
	}
	return j.Checkpoint()
}

// holdsLocked reports whether the journal holds writes to rel or to a
// file below it. j.mu must be held.
func (j *FS) holdsLocked(rel string) bool {
	if _, ok := j.newest[rel]; ok {
		return true
	}
	prefix := rel + "/"
	for p := range j.newest {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// commit appends f's staged entries to the journal and returns once they
// are durable: group commit, one round at a time, a caller that arrives
// while one is written joining the next.
func (j *FS) commit(f *file, entries []byte) error {
	j.mu.Lock()
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	if r := j.pending; r != nil {
		r.buf = append(r.buf, entries...)
		r.files = append(r.files, f)
		j.mu.Unlock()
		<-r.done
		return r.err
	}
	r := &round{buf: append([]byte(nil), entries...), files: []*file{f}, done: make(chan struct{})}
	j.pending = r
	for j.syncing {
		j.cond.Wait() // others join r meanwhile
	}
	j.pending = nil
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		r.err = err
		close(r.done)
		return err
	}
	j.syncing = true
	g := j.cur
	j.mu.Unlock()

	err := g.ensure(len(r.buf))
	if err == nil {
		_, err = g.f.WriteAt(r.buf, g.size)
	}
	if err != nil {
		err = fmt.Errorf("wal: write %d bytes to %s at byte %d: %w", len(r.buf), g.f.Name(), g.size, err)
		// Cut the journal back, so that no whole entry of the failed
		// write is left for a replay; a journal that cannot be cut is in
		// doubt.
		if terr := g.f.Truncate(g.size); terr != nil {
			j.breakWith(errors.Join(err, terr))
		} else {
			g.zeroed = g.size
		}
	} else if err = g.f.Sync(); err != nil {
		err = fmt.Errorf("wal: fsync %s: %w", g.f.Name(), err)
		j.breakWith(err)
	}

	j.mu.Lock()
	j.syncing = false
	if err == nil {
		g.size += int64(len(r.buf))
		for _, f := range r.files {
			j.dirty[f] = struct{}{}
			j.newest[f.rel] = g.n
		}
		if g.size >= j.opts.GenerationBytes && !j.checkpointing && !j.closing {
			j.checkpointing = true
			j.bg.Go(func() {
				if err := j.Checkpoint(); err != nil && j.opts.Logf != nil {
					j.opts.Logf("wal: checkpoint of %s: %v", j.dir, err)
				}
				j.mu.Lock()
				j.checkpointing = false
				j.mu.Unlock()
			})
		}
	}
	j.cond.Broadcast()
	j.mu.Unlock()
	r.err = err
	close(r.done)
	return err
}

// usableLocked says why the journal cannot take a round, if it cannot.
func (j *FS) usableLocked() error {
	if j.broken != nil {
		return fmt.Errorf("wal: journal in %s failed earlier: %w", j.dir, j.broken)
	}
	if j.closed {
		return ErrClosed
	}
	return nil
}

// breakWith makes err the journal's sticky failure.
func (j *FS) breakWith(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken == nil {
		j.broken = err
		if j.opts.Logf != nil {
			j.opts.Logf("wal: the journal in %s failed (%v): every journaled write fails until it is opened again", j.dir, err)
		}
	}
}

// Broken is the failure that stopped the journal, nil while it works.
func (j *FS) Broken() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.broken
}

// Checkpoint makes every write journaled so far durable in its own file
// and removes the journal files that held it: it starts a new generation,
// fsyncs every file written through the older ones and removes them.
func (j *FS) Checkpoint() error {
	j.ckpt.Lock()
	defer j.ckpt.Unlock()
	j.mu.Lock()
	for j.syncing {
		j.cond.Wait()
	}
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	old := j.cur
	if len(j.newest) == 0 && len(j.dirty) == 0 {
		j.mu.Unlock()
		return nil
	}
	// The next generation is created with j.mu held, so that no round
	// writes to the old one after its files are synced.
	next, err := j.create(old.n + 1)
	if err != nil {
		j.mu.Unlock()
		err = fmt.Errorf("wal: checkpoint: %w", err)
		j.breakWith(err)
		return err
	}
	j.cur = next
	files := j.dirty
	j.dirty = map[*file]struct{}{}
	j.mu.Unlock()

	for f := range files {
		if err := f.syncOwn(); err != nil {
			err = fmt.Errorf("wal: checkpoint: fsync %s: %w", f.Name(), err)
			j.breakWith(err)
			return err
		}
	}
	if err := old.f.Close(); err != nil {
		err = fmt.Errorf("wal: checkpoint: close %s: %w", old.f.Name(), err)
		j.breakWith(err)
		return err
	}
	if err := j.removeThrough(old.n); err != nil {
		err = fmt.Errorf("wal: checkpoint: %w", err)
		j.breakWith(err)
		return err
	}
	j.mu.Lock()
	for p, n := range j.newest {
		if n <= old.n {
			delete(j.newest, p)
		}
	}
	j.mu.Unlock()
	return nil
}

// removeThrough removes every generation file up to and including n and
// fsyncs the directory.
func (j *FS) removeThrough(n uint64) error {
	entries, err := j.base.ReadDir(j.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if g, ok := ParseGenerationFileName(e.Name()); ok && g <= n {
			if err := j.base.Remove(filepath.Join(j.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return j.base.SyncDir(j.dir)
}

// Close waits for a background checkpoint, checkpoints what is left so
// that the next Open replays nothing, and closes the journal: a journaled
// Sync after Close fails with ErrClosed. Close the files first.
func (j *FS) Close() error {
	j.mu.Lock()
	if j.closing {
		j.mu.Unlock()
		return nil
	}
	j.closing = true
	j.mu.Unlock()
	j.bg.Wait()
	err := j.Checkpoint()
	j.mu.Lock()
	j.closed = true
	for j.syncing {
		j.cond.Wait()
	}
	cur := j.cur
	broken := j.broken
	j.mu.Unlock()
	if cerr := cur.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && broken == nil {
		// Nothing is left to replay: remove the empty generation too.
		err = j.removeThrough(cur.n)
	}
	if err != nil {
		return fmt.Errorf("wal: close %s: %w", j.dir, err)
	}
	return nil
}
