package logtest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pystream/pystream/log/durable"
)

// BareCommitter is a benchmark baseline: the least work that makes records
// durable on one or more files with group commit. One writer goroutine takes
// every frame that is waiting, writes the batch to each file with one
// positional write and one Sync (fdatasync on durable.OS), and only then
// releases the batch's producers. There are no offsets, no index and no
// recovery: whatever a log, a topic or a cluster spends beyond this is the
// cost of its own code, and what this spends is the disk's.
//
// With several files it models a replicated write on one machine: in the
// LeaderFirst order the first file is made durable before the others are
// written, in parallel with each other (the order PyStream's cluster keeps);
// otherwise all files are written and synced in parallel.
//
// Commit is safe for concurrent use; Close must be called once, after the
// last Commit has returned.
type BareCommitter struct {
	files       []durable.File
	leaderFirst bool
	reqs        chan bareRequest
	syncs       atomic.Int64
	batches     atomic.Int64
	writer      sync.WaitGroup
}

type bareRequest struct {
	frame []byte
	done  chan error
}

// NewBareCommitter starts a baseline writer over files, which it does not
// close. It appends from each file's offset 0.
func NewBareCommitter(leaderFirst bool, files ...durable.File) (*BareCommitter, error) {
	if len(files) == 0 {
		return nil, errors.New("logtest: a bare committer needs at least one file")
	}
	g := &BareCommitter{files: files, leaderFirst: leaderFirst, reqs: make(chan bareRequest, 4096)}
	g.writer.Go(g.run)
	return g, nil
}

// Commit hands frame to the writer and waits until it is durable on every
// file. done is the caller's own reusable channel with a buffer of one.
func (g *BareCommitter) Commit(frame []byte, done chan error) error {
	g.reqs <- bareRequest{frame: frame, done: done}
	return <-done
}

// Syncs is the number of Sync calls made so far, over all files.
func (g *BareCommitter) Syncs() int64 { return g.syncs.Load() }

// Batches is the number of batches written so far.
func (g *BareCommitter) Batches() int64 { return g.batches.Load() }

// Close stops the writer once every waiting frame is written.
func (g *BareCommitter) Close() {
	close(g.reqs)
	g.writer.Wait()
}

func (g *BareCommitter) run() {
	var (
		pos   int64
		buf   []byte
		batch []bareRequest
	)
	for r := range g.reqs {
		batch = append(batch[:0], r)
	drain:
		for {
			select {
			case r, ok := <-g.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		buf = buf[:0]
		for _, r := range batch {
			buf = append(buf, r.frame...)
		}
		err := g.writeAll(buf, pos)
		g.batches.Add(1)
		pos += int64(len(buf))
		for _, r := range batch {
			r.done <- err
		}
	}
}

// writeAll makes buf durable at pos on every file, in the committer's order.
func (g *BareCommitter) writeAll(buf []byte, pos int64) error {
	rest := g.files
	if g.leaderFirst || len(g.files) == 1 {
		if err := g.writeOne(0, buf, pos); err != nil {
			return err
		}
		rest = g.files[1:]
	}
	if len(rest) == 0 {
		return nil
	}
	first := len(g.files) - len(rest)
	errs := make([]error, len(rest))
	var wg sync.WaitGroup
	for i := range rest {
		wg.Go(func() { errs[i] = g.writeOne(first+i, buf, pos) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (g *BareCommitter) writeOne(i int, buf []byte, pos int64) error {
	f := g.files[i]
	if _, err := f.WriteAt(buf, pos); err != nil {
		return fmt.Errorf("logtest: bare write %s: %w", f.Name(), err)
	}
	g.syncs.Add(1)
	if err := f.Sync(); err != nil {
		return fmt.Errorf("logtest: bare sync %s: %w", f.Name(), err)
	}
	return nil
}
