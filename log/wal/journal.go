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

// DefaultGenerationBytes is how large a generation file is made: filled
// with zeros to that size ahead of its entries.
const DefaultGenerationBytes = 1 << 20

// DefaultCheckpointBytes is how many bytes of entries the journal takes
// between checkpoints.
const DefaultCheckpointBytes = 64 << 20

// Options configure a journal.
type Options struct {
	// Journaled reports whether the file at path (as OpenFile is given
	// it) is one whose appends go through the journal. Nil journals
	// nothing: the FS is then its base.
	Journaled func(path string) bool
	// GenerationBytes is how large a generation file is made, filled
	// with zeros ahead of its entries, before the journal moves on to the
	// next; zero means DefaultGenerationBytes.
	GenerationBytes int64
	// CheckpointBytes is how many bytes of entries the journal takes
	// before a checkpoint; zero means DefaultCheckpointBytes.
	CheckpointBytes int64
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
// wrong: Truncate of a file below the end of the writes the journal holds
// to it, or Remove, Rename or O_TRUNC of a path at or above a file it
// holds writes to. Open replays what the journal holds into its files
// before anything reads them.
type FS struct {
	base durable.FS
	root string // absolute, cleaned
	dir  string // root/DirName
	opts Options

	mu   sync.Mutex
	cond *sync.Cond
	cur  *generation
	// spare is the next generation, made and filled with zeros in the
	// background (generation.go); preparing is set while it is made.
	spare     *generation
	preparing bool
	// spareErr is the last failure to make a spare, logged once.
	spareErr error
	// since counts the bytes of entries since the last checkpoint.
	since int64
	// syncing is set while a round is written and synced; pending is the
	// next round, which callers join meanwhile.
	syncing bool
	pending *round
	// dirty are the files written through the journal since the last
	// checkpoint, which the next one fsyncs; newest holds, by path, what
	// the journal holds of each file until a checkpoint covers it.
	dirty  map[*file]struct{}
	newest map[string]held
	// broken is the first failure that leaves the journal in doubt: from
	// then on every journaled Sync fails with it.
	broken error
	closed bool
	// closing is set once Close begins: no background checkpoint starts.
	closing bool
	// next is the number the next generation file gets.
	next uint64
	// checkpointing is set while a background checkpoint runs.
	checkpointing bool
	bg            sync.WaitGroup

	ckpt sync.Mutex // one checkpoint at a time
}

// held is what the journal holds of one file until a checkpoint: the
// newest generation with writes to it, and the end of the furthest of
// them (the byte after it).
type held struct {
	gen uint64
	end int64
}

// round is one write and sync of the journal and the callers it answers.
type round struct {
	buf   []byte
	files []*file
	ends  []int64 // the end of each file's furthest write in the round
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
	g, err := j.create(last+1, false)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", root, err)
	}
	j.cur, j.next = g, last+2
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
	if opts.CheckpointBytes <= 0 {
		opts.CheckpointBytes = DefaultCheckpointBytes
	}
	j := &FS{base: base, root: abs, dir: filepath.Join(abs, DirName), opts: opts,
		dirty: map[*file]struct{}{}, newest: map[string]held{}}
	j.cond = sync.NewCond(&j.mu)
	return j, nil
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
func (j *FS) commit(f *file, entries []byte, end int64) error {
	j.mu.Lock()
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	if r := j.pending; r != nil {
		r.buf = append(r.buf, entries...)
		r.files, r.ends = append(r.files, f), append(r.ends, end)
		j.mu.Unlock()
		<-r.done
		return r.err
	}
	r := &round{buf: append([]byte(nil), entries...), files: []*file{f}, ends: []int64{end}, done: make(chan struct{})}
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
	old := j.moveOnLocked(len(r.buf))
	g := j.cur
	j.mu.Unlock()

	if old != nil {
		// Every round written to it is durable: the handle is no longer
		// needed, the file is until a checkpoint.
		if err := old.f.Close(); err != nil {
			j.logf("wal: close %s: %v", old.f.Name(), err)
		}
	}
	_, err := g.f.WriteAt(r.buf, g.size)
	if err != nil {
		err = fmt.Errorf("wal: write %d bytes to %s at byte %d: %w", len(r.buf), g.f.Name(), g.size, err)
		// Cut the journal back, so that no whole entry of the failed
		// write is left for a replay, and fsync the cut: otherwise a power
		// loss could bring such entries back, in a generation whose zeros
		// ahead need no size to reach the disk. A journal that cannot be
		// cut is in doubt.
		terr := g.f.Truncate(g.size)
		if terr == nil {
			terr = g.f.Sync()
		}
		if terr != nil {
			j.breakWith(errors.Join(err, terr))
		} else {
			g.zeroed = g.size
		}
	} else if err = g.f.Sync(); err != nil {
		err = fmt.Errorf("wal: fsync %s: %w", g.f.Name(), err)
		// The round is in doubt and nobody was told it is durable: cut it
		// off, so that a restart without a power loss does not replay
		// what its logs cut back. What the disk holds of it after a power
		// loss may or may not come back, as with any unacknowledged write.
		if terr := g.f.Truncate(g.size); terr != nil {
			err = errors.Join(err, fmt.Errorf("cut back to byte %d: %w", g.size, terr))
		}
		j.breakWith(err)
	}

	j.mu.Lock()
	j.syncing = false
	if err == nil {
		g.size += int64(len(r.buf))
		for i, f := range r.files {
			j.dirty[f] = struct{}{}
			h := j.newest[f.rel]
			j.newest[f.rel] = held{gen: g.n, end: max(h.end, r.ends[i])}
		}
		j.since += int64(len(r.buf))
		j.prepareLocked()
		if j.since >= j.opts.CheckpointBytes && !j.checkpointing && !j.closing {
			j.checkpointing = true
			j.bg.Go(func() {
				if err := j.Checkpoint(); err != nil {
					j.logf("wal: checkpoint of %s: %v", j.dir, err)
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
		j.logf("wal: the journal in %s failed (%v): every journaled write fails until it is opened again", j.dir, err)
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
	for j.syncing || j.preparing {
		j.cond.Wait()
	}
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	if len(j.newest) == 0 && len(j.dirty) == 0 {
		j.mu.Unlock()
		return nil
	}
	// The next generation is taken with j.mu held and no round under
	// way, so that no round writes to the old ones after their files are
	// synced.
	next, err := j.takeLocked()
	if err != nil {
		// Nothing changed: the journal still holds every write, and a
		// later checkpoint tries again (a full disk, say).
		j.mu.Unlock()
		return fmt.Errorf("wal: checkpoint: %w", err)
	}
	old := j.cur
	j.cur = next
	files := j.dirty
	j.dirty = map[*file]struct{}{}
	j.since = 0
	j.mu.Unlock()

	if err := old.f.Close(); err != nil {
		j.logf("wal: close %s: %v", old.f.Name(), err)
	}
	if err := j.retire(files, old.n); err != nil {
		return fmt.Errorf("wal: checkpoint: %w", err)
	}
	return nil
}

// retire fsyncs files on their own, then removes every generation up to
// and including through and forgets what they held. A failed fsync breaks
// the journal, and a broken journal removes nothing: its generations are
// the only durable copy of what it holds.
func (j *FS) retire(files map[*file]struct{}, through uint64) error {
	for f := range files {
		if err := f.syncOwn(); err != nil {
			err = fmt.Errorf("fsync %s: %w", f.Name(), err)
			j.breakWith(err)
			return err
		}
	}
	if err := j.Broken(); err != nil {
		// It broke meanwhile (a file's own fsync after a cut, say).
		return fmt.Errorf("journal in %s failed: %w", j.dir, err)
	}
	if err := j.removeThrough(through); err != nil {
		return err
	}
	j.mu.Lock()
	for p, h := range j.newest {
		if h.gen <= through {
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

// Close waits for a background checkpoint, fsyncs every file written
// through the journal and removes the journal, so that the next Open
// replays nothing, and closes it: a journaled Sync after Close fails with
// ErrClosed. Close the files first. A broken journal is closed as it
// stands, every generation kept for the next Open to replay; its failure
// was reported to the Syncs it failed, and is not reported again.
func (j *FS) Close() error {
	j.mu.Lock()
	if j.closing {
		j.mu.Unlock()
		return nil
	}
	j.closing = true
	j.mu.Unlock()
	j.bg.Wait()
	j.ckpt.Lock()
	defer j.ckpt.Unlock()
	j.mu.Lock()
	j.closed = true
	for j.syncing || j.preparing {
		j.cond.Wait()
	}
	cur, spare, files, broken := j.cur, j.spare, j.dirty, j.broken
	j.dirty, j.spare = map[*file]struct{}{}, nil
	j.mu.Unlock()
	last := cur.n
	if spare != nil {
		last = spare.n
	}
	var err error
	if broken != nil {
		j.logf("wal: closing the journal in %s, broken earlier (%v): its generations are kept and replayed at the next open", j.dir, broken)
	} else {
		err = j.retire(files, last)
	}
	if cerr := cur.f.Close(); err == nil {
		err = cerr
	}
	if spare != nil {
		if cerr := spare.f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("wal: close %s: %w", j.dir, err)
	}
	return nil
}
