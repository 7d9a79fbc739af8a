package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pystream/pystream/log/durable"
)

// generation is one journal file.
type generation struct {
	n    uint64
	f    durable.File
	size int64
	// zeroed is how far the file holds zeros ahead of size: a round that
	// ends within it overwrites bytes the file already holds, and its
	// fdatasync has no size to commit. A round that does not fit is
	// written past it, or into the spare.
	zeroed int64
}

// prepareAfter is how many bytes the current generation takes before a
// spare is made: a broker that writes little never fills one with zeros.
const prepareAfter = 64 << 10

// create makes generation n's file with its header, filled with zeros to
// GenerationBytes when zeroed is set, durable and its directory entry
// too.
func (j *FS) create(n uint64, zeroed bool) (*generation, error) {
	if _, err := durable.MkdirAll(j.base, j.dir); err != nil {
		return nil, err
	}
	path := filepath.Join(j.dir, GenerationFileName(n))
	f, err := j.base.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	buf := appendHeader(nil, n)
	if zeroed {
		buf = append(buf, make([]byte, max(0, j.opts.GenerationBytes-int64(len(buf))))...)
	}
	_, err = f.WriteAt(buf, 0)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = j.base.SyncDir(j.dir)
	}
	if err != nil {
		// Best effort: what is left of it holds no entry, and a replay
		// removes it (a generation shorter than its header) or finds it
		// empty.
		return nil, errors.Join(fmt.Errorf("create %s: %w", path, err), f.Close(), j.base.Remove(path))
	}
	return &generation{n: n, f: f, size: headerSize, zeroed: int64(len(buf))}, nil
}

// prepareLocked starts making the spare in the background once the
// current generation has taken prepareAfter bytes (or half its zeros), if
// none is made or being made. j.mu must be held.
func (j *FS) prepareLocked() {
	g := j.cur
	if j.spare != nil || j.preparing || j.closing || j.broken != nil ||
		g.size < min(prepareAfter, j.opts.GenerationBytes/2) || g.zeroed-g.size >= j.opts.GenerationBytes/2 {
		return
	}
	j.preparing = true
	n := j.next
	j.next++ // numbers follow the order generations are used in
	j.bg.Go(func() {
		s, err := j.create(n, true)
		j.mu.Lock()
		defer j.mu.Unlock()
		j.preparing = false
		j.cond.Broadcast()
		if err != nil {
			if j.spareErr == nil {
				j.logf("wal: make the next journal file in %s: %v; rounds are written past the current one's zeros until one is made", j.dir, err)
			}
			j.spareErr = err
			return
		}
		j.spareErr = nil
		j.spare = s
	})
}

// moveOnLocked makes the spare the current generation when a round of n
// bytes would not fit in the current one's zeros, and returns the
// generation it leaves (nil if it stays). j.mu must be held and the
// caller must own the round.
func (j *FS) moveOnLocked(n int) *generation {
	g := j.cur
	if j.spare == nil || g.size+int64(n) <= g.zeroed {
		return nil
	}
	j.cur, j.spare = j.spare, nil
	j.prepareLocked()
	return g
}

// takeLocked returns the generation a checkpoint moves to: the spare when
// one is made, else a new one, created with j.mu held. The caller has
// waited for any spare being made. j.mu must be held.
func (j *FS) takeLocked() (*generation, error) {
	if s := j.spare; s != nil {
		j.spare = nil
		return s, nil
	}
	n := j.next
	j.next++
	return j.create(n, false)
}
