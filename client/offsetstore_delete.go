package client

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// DeletedSuffix ends the name a consumer's directory is renamed to when
// its offsets are deleted (DeleteConsumer): <root>/<consumer_id>~deleted.
// '~' is not a character of a consumer id, so List, ListAll and every
// reader that checks names with topic.ValidateName skip such a directory.
const DeletedSuffix = "~deleted"

// DeleteConsumer deletes every offset consumerID committed and returns how
// many offset files it had. It is durable and all or nothing:
//
//  1. the consumer's directory <root>/<consumer_id> is renamed to
//     <root>/<consumer_id>~deleted (a leftover one from an earlier,
//     interrupted delete is removed first);
//  2. the root is fsync-ed: from here on the offsets are gone, after any
//     crash; before it, a crash brings them all back;
//  3. the renamed directory is removed, and the root fsync-ed again.
//
// An error in step 3 leaves the renamed directory, which no reader sees;
// the next DeleteConsumer of any consumer removes it, and the error is
// returned wrapping ErrDeleteUnfinished (the offsets are deleted). A
// consumer that never committed has nothing to delete: 0 and nil.
//
// Commits and resets of the consumer wait while it runs; a commit after
// it starts a new directory. After a failed write the store refuses to
// delete the consumer's offsets as it refuses to commit them
// (ErrStoreFailed).
func (s *OffsetStore) DeleteConsumer(consumerID string) (int, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return 0, fmt.Errorf("client: consumer id: %w", err)
	}
	l := s.consumerLock(consumerID)
	l.Lock()
	defer l.Unlock()
	if err := s.failedErr(consumerID); err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w (%w)", consumerID, ErrStoreFailed, err)
	}
	if err := s.sweepDeleted(); err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w", consumerID, err)
	}
	dir := filepath.Join(s.root, consumerID)
	n, err := s.countFiles(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w", consumerID, err)
	}
	gone := dir + DeletedSuffix
	if err := s.fs.Rename(dir, gone); err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w", consumerID, err)
	}
	s.forgetDirs(dir)
	if err := durable.SyncDir(s.fs, s.root); err != nil {
		// The rename may or may not survive a crash: the consumer's
		// directory entries are in doubt, as after a failed commit.
		s.fail(consumerID, err)
		return 0, fmt.Errorf("client: delete offsets of %q: %w", consumerID, err)
	}
	if err := s.sweepDeleted(); err != nil {
		return n, fmt.Errorf("client: delete offsets of %q: %w: %w", consumerID, ErrDeleteUnfinished, err)
	}
	return n, nil
}

// consumerLock returns the lock that keeps consumerID's commits (shared)
// and the deletion of its offsets (exclusive) apart.
func (s *OffsetStore) consumerLock(consumerID string) *sync.RWMutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consumers == nil {
		s.consumers = map[string]*sync.RWMutex{}
	}
	l, ok := s.consumers[consumerID]
	if !ok {
		l = &sync.RWMutex{}
		s.consumers[consumerID] = l
	}
	return l
}

// countFiles counts the offset files below a consumer's directory.
func (s *OffsetStore) countFiles(dir string) (int, error) {
	topics, err := s.fs.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, te := range topics {
		if !te.IsDir() || topic.ValidateName(te.Name()) != nil {
			continue
		}
		files, err := s.fs.ReadDir(filepath.Join(dir, te.Name()))
		if err != nil {
			return 0, err
		}
		for _, fe := range files {
			if _, ok := ParseOffsetFileName(fe.Name()); ok && fe.Type().IsRegular() {
				n++
			}
		}
	}
	return n, nil
}

// forgetDirs drops dir and everything below it from the directories the
// store made durable: a commit into it creates them again.
func (s *OffsetStore) forgetDirs(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range []map[string]bool{s.dirs, s.synced} {
		for d := range set {
			if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
				delete(set, d)
			}
		}
	}
}

// sweepDeleted removes every <consumer_id>~deleted directory under the
// root, then fsyncs the root if it removed one.
func (s *OffsetStore) sweepDeleted() error {
	entries, err := s.fs.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	removed := false
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), DeletedSuffix)
		if !ok || !e.IsDir() || topic.ValidateName(name) != nil {
			continue
		}
		if err := removeAll(s.fs, filepath.Join(s.root, e.Name())); err != nil {
			return err
		}
		removed = true
	}
	if removed {
		return durable.SyncDir(s.fs, s.root)
	}
	return nil
}

// removeAll removes dir and everything below it, never following a
// symbolic link. Nothing is fsync-ed: dir's own entry is gone from its
// parent already (renamed), so nothing below it can come back.
func removeAll(fsys durable.FS, dir string) error {
	entries, err := fsys.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if err := removeAll(fsys, p); err != nil {
				return err
			}
			continue
		}
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := fsys.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
