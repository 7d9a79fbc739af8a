package client

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// deletedPrefix starts the name a consumer's directory is renamed to when
// its offsets are deleted (DeleteConsumer): deletedName. '~' is not a
// character of a consumer id, so List, ListAll and every reader that
// checks names with topic.ValidateName skip such a directory.
const deletedPrefix = "~del-"

// deletedName is the name consumerID's directory takes while its offsets
// are deleted: deletedPrefix and 16 hex digits of a hash of the id. Its
// length is fixed whatever the id's: the longest id (249 bytes) with a
// suffix would pass the 255 bytes a file name may have.
func deletedName(consumerID string) string {
	sum := sha256.Sum256([]byte(consumerID))
	return deletedPrefix + hex.EncodeToString(sum[:8])
}

// isDeletedName reports whether name is a directory a delete renamed.
func isDeletedName(name string) bool {
	hexPart, ok := strings.CutPrefix(name, deletedPrefix)
	if !ok || len(hexPart) != 16 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// DeleteConsumer deletes every offset consumerID committed and returns how
// many offset files it had. It is durable and all or nothing:
//
//  1. renamed directories left by earlier, interrupted deletes are
//     removed (sweepDeletedLocked);
//  2. the consumer's directory <root>/<consumer_id> is renamed to
//     <root>/~del-<16 hex digits> (deletedName);
//  3. the root is fsync-ed: from here on the offsets are gone, after any
//     crash; before it, a crash brings them all back;
//  4. the renamed directory is removed, and the root fsync-ed again.
//
// An error in step 4 leaves the renamed directory, which no reader sees;
// the next DeleteConsumer of any consumer, or the next OpenOffsetStore,
// removes it, and the error is returned wrapping ErrDeleteUnfinished (the
// offsets are deleted). A consumer that never committed has nothing to
// delete: 0 and nil.
//
// Commits and resets of the consumer wait while it runs; a commit after
// it starts a new directory. Deletes run one at a time in a store. After
// a failed write the store refuses to delete the consumer's offsets as it
// refuses to commit them (ErrStoreFailed).
func (s *OffsetStore) DeleteConsumer(consumerID string) (int, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return 0, fmt.Errorf("client: consumer id: %w", err)
	}
	dir := filepath.Join(s.root, consumerID)
	if _, err := s.fs.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		// Nothing to delete, and no lock made for an id that names
		// nothing: a stream of deletes of random ids leaves no trace.
		return 0, nil
	}
	l := s.consumerLock(consumerID)
	l.Lock()
	defer l.Unlock()
	s.deleting.Lock()
	defer s.deleting.Unlock()
	if err := s.failedErr(consumerID); err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w (%w)", consumerID, ErrStoreFailed, err)
	}
	if err := s.sweepDeletedLocked(); err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w", consumerID, err)
	}
	n, err := s.countFiles(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("client: delete offsets of %q: %w", consumerID, err)
	}
	gone := filepath.Join(s.root, deletedName(consumerID))
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
	if err := s.removeDeleted(gone); err != nil {
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

// sweepDeletedLocked removes every directory an earlier delete renamed
// and did not remove. The process that renamed one may have died before
// it fsync-ed the root: the root is fsync-ed first, so that the rename is
// durable before anything below it goes (else a power loss could bring
// the consumer's directory back with part of its files). s.deleting
// should be held.
func (s *OffsetStore) sweepDeletedLocked() error {
	entries, err := s.fs.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var gone []string
	for _, e := range entries {
		if e.IsDir() && isDeletedName(e.Name()) {
			gone = append(gone, filepath.Join(s.root, e.Name()))
		}
	}
	if len(gone) == 0 {
		return nil
	}
	if err := durable.SyncDir(s.fs, s.root); err != nil {
		return err
	}
	return s.removeDeleted(gone...)
}

// removeDeleted removes renamed directories whose rename is durable, then
// fsyncs the root.
func (s *OffsetStore) removeDeleted(dirs ...string) error {
	for _, d := range dirs {
		if err := removeAll(s.fs, d); err != nil {
			return err
		}
	}
	return durable.SyncDir(s.fs, s.root)
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

// DeleteOffset deletes the offset consumerID committed on one topic
// partition (Kafka's OffsetDelete) and reports whether there was one. It
// is durable: the offset file is removed and its directory fsync-ed
// before it returns, so that no crash brings the offset back; a failed
// fsync leaves the directory's entries in doubt and fails the store for
// the consumer, as a failed commit does (ErrStoreFailed). The consumer's
// other offsets stay. It waits for a commit or reset of the same
// partition, and a commit after it stores a new offset.
func (s *OffsetStore) DeleteOffset(consumerID, topicName string, partition int) (bool, error) {
	path, err := s.path(consumerID, topicName, partition)
	if err != nil {
		return false, err
	}
	if _, err := s.fs.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil // no lock made for an offset that names nothing
	}
	cl := s.consumerLock(consumerID)
	cl.RLock()
	defer cl.RUnlock()
	l := s.lockFor(path)
	l.Lock()
	defer l.Unlock()
	if err := s.failedErr(consumerID); err != nil {
		return false, fmt.Errorf("client: delete offset %s: %w (%w)", path, ErrStoreFailed, err)
	}
	err = s.fs.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("client: delete offset %s: %w", path, err)
	}
	if err := durable.SyncDir(s.fs, filepath.Dir(path)); err != nil {
		s.fail(consumerID, err)
		return true, fmt.Errorf("client: delete offset %s: %w", path, err)
	}
	return true, nil
}
