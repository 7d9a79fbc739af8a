package client

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// OffsetFileSuffix ends the name of every offset file.
const OffsetFileSuffix = ".offset"

// OffsetFileName is the name of partition p's offset file inside
// <root>/<consumer_id>/<topic>/: the partition's directory name
// (topic.PartitionDir) followed by OffsetFileSuffix.
func OffsetFileName(p int) string {
	return topic.PartitionDir(p) + OffsetFileSuffix
}

// ParseOffsetFileName is the inverse of OffsetFileName: the partition an
// offset file belongs to, and false for any name OffsetFileName does not
// produce.
func ParseOffsetFileName(name string) (int, bool) {
	dir, ok := strings.CutSuffix(name, OffsetFileSuffix)
	if !ok {
		return 0, false
	}
	return topic.ParsePartitionDir(dir)
}

// CommittedOffset is one committed offset, as listed by OffsetStore.List.
type CommittedOffset struct {
	Topic     string
	Partition int
	// Offset is the next offset the consumer will fetch after a restart.
	Offset uint64
}

// OffsetStore keeps committed consumer offsets on disk, one small file per
// consumer, topic and partition:
//
//	<root>/<consumer_id>/<topic>/partition-000000.offset
//
// holding {"version": 1, "offset": N}. Commits are atomic and durable
// (durable.WriteFile) and never move an offset backwards.
//
// An OffsetStore is safe for concurrent use. Commits to one file are
// serialized, and each checks for regression against the value on disk
// while it holds that file's lock; commits to different files run in
// parallel. After a failed write, or a failed fsync of a directory it
// read an offset from, the store refuses every later Commit and Reset of
// that consumer (ErrStoreFailed) until it is reopened; other consumers'
// files share no directory with it and keep committing
// (docs/design.md § Sticky failure).
//
// Commit only moves an offset forward. Reset is the operator's explicit
// action that may move it anywhere, backwards included.
type OffsetStore struct {
	root string
	fs   durable.FS

	// mu guards locks, consumers, failed, dirs and synced.
	mu sync.Mutex
	// locks holds one mutex per offset file path; a commit holds its
	// file's mutex from reading the old value to writing the new one.
	locks map[string]*sync.Mutex
	// consumers holds one lock per consumer id: a commit or reset holds
	// its consumer's shared, before its file's mutex; DeleteConsumer
	// holds it exclusive (offsetstore_delete.go).
	consumers map[string]*sync.RWMutex
	// failed holds the sticky write error of each consumer whose write
	// failed, by consumer id: the failure's scope is the consumer's
	// directory, whose entries (and its topic directories') a failed
	// fsync leaves in doubt.
	failed map[string]error
	// dirs are the directories this store has made durable (created, or
	// found and their parent synced) since it was opened; later commits
	// into them skip durable.MkdirAll and its directory fsync.
	dirs map[string]bool
	// synced are the directories whose entries this store has made durable
	// since it was opened: by a commit's directory fsync, or by syncFound
	// the first time it read an offset file there.
	synced map[string]bool

	// deleting is held by DeleteConsumer and by the removal of the
	// directories it renamed (sweepDeletedLocked), so that two deletes
	// never remove the same leftover at once. Lock order: a consumer's
	// lock (consumers), then deleting, then mu.
	deleting sync.Mutex
}

// OpenOffsetStore opens the offset store rooted at root. Nothing is created
// until the first commit; root must be a directory if it exists. The
// directories an interrupted DeleteConsumer left are removed.
func OpenOffsetStore(root string) (*OffsetStore, error) {
	return OpenOffsetStoreWithOptions(root, OffsetStoreOptions{})
}

// OpenOffsetStoreWithOptions is OpenOffsetStore with explicit options.
func OpenOffsetStoreWithOptions(root string, opts OffsetStoreOptions) (*OffsetStore, error) {
	opts = opts.withDefaults()
	fsys := opts.FS
	if root == "" {
		return nil, fmt.Errorf("client: open offset store: empty root: %w", ErrInvalidConfig)
	}
	info, err := fsys.Stat(root)
	switch {
	case err == nil && !info.IsDir():
		return nil, fmt.Errorf("client: open offset store %s: not a directory: %w", root, ErrInvalidConfig)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("client: open offset store %s: %w", root, err)
	}
	s := &OffsetStore{root: root, fs: fsys, locks: map[string]*sync.Mutex{}}
	// Directories an interrupted delete renamed are removed now. One that
	// cannot be is left, invisible to readers: the next DeleteConsumer
	// tries again and reports why it cannot.
	s.deleting.Lock()
	_ = s.sweepDeletedLocked()
	s.deleting.Unlock()
	return s, nil
}

// Root is the store's directory.
func (s *OffsetStore) Root() string { return s.root }

// path validates the three coordinates and builds the offset file's path.
// Names are checked before any path is built, so none can escape root.
func (s *OffsetStore) path(consumerID, topicName string, partition int) (string, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return "", fmt.Errorf("client: consumer id: %w", err)
	}
	if err := topic.ValidateName(topicName); err != nil {
		return "", fmt.Errorf("client: topic: %w", err)
	}
	if partition < 0 {
		return "", fmt.Errorf("client: partition %d: %w", partition, topic.ErrPartitionOutOfRange)
	}
	return filepath.Join(s.root, consumerID, topicName, OffsetFileName(partition)), nil
}

// Load returns the committed offset of a consumer on one topic partition.
// ok is false when nothing was ever committed, which is different from a
// committed 0. A damaged file returns an *OffsetCorruptionError. The first
// offset found in a directory is made durable before it is returned: the
// directory is fsync-ed, once per store.
func (s *OffsetStore) Load(consumerID, topicName string, partition int) (offset uint64, ok bool, err error) {
	path, err := s.path(consumerID, topicName, partition)
	if err != nil {
		return 0, false, err
	}
	return s.read(path)
}

// read loads one offset file.
func (s *OffsetStore) read(path string) (uint64, bool, error) {
	off, ok, err := ReadOffsetFile(s.fs, path)
	if err != nil || !ok {
		return 0, false, err
	}
	if err := s.syncFound(filepath.Dir(path)); err != nil {
		return 0, false, fmt.Errorf("client: read offset file %s: %w", path, err)
	}
	return off, true, nil
}

// syncFound fsyncs dir, once per store, before an offset read from it is
// returned. The process that renamed the file into place may have died
// before syncing the directory: the file is visible, but a power loss would
// bring back the old offset. Without the sync, a commit of the same offset
// (a no-op, also for a Consumer that loaded it) would be acknowledged and
// then lost. Everything above dir is durable already: durable.MkdirAll
// syncs each parent before WriteFile puts a file in dir. A failed sync
// fails the store.
func (s *OffsetStore) syncFound(dir string) error {
	return s.oncePerDir(&s.synced, dir, func() error {
		if err := durable.SyncDir(s.fs, dir); err != nil {
			s.fail(s.consumerOf(dir), err)
			return err
		}
		return nil
	})
}

// markSynced records that every entry of dir is durable.
func (s *OffsetStore) markSynced(dir string) { s.mark(&s.synced, dir) }

// oncePerDir runs do for dir unless it already succeeded for dir with the
// same set, and records a success in the set (one of s.dirs, s.synced).
// Two callers may both run do for a new dir; each step it guards is
// idempotent.
func (s *OffsetStore) oncePerDir(set *map[string]bool, dir string, do func() error) error {
	s.mu.Lock()
	done := (*set)[dir]
	s.mu.Unlock()
	if done {
		return nil
	}
	if err := do(); err != nil {
		return err
	}
	s.mark(set, dir)
	return nil
}

// mark records dir in set (one of s.dirs, s.synced).
func (s *OffsetStore) mark(set *map[string]bool, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *set == nil {
		*set = make(map[string]bool)
	}
	(*set)[dir] = true
}

// lockFor returns the mutex of one offset file.
func (s *OffsetStore) lockFor(path string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[path]
	if !ok {
		l = &sync.Mutex{}
		s.locks[path] = l
	}
	return l
}

// failedErr is consumerID's sticky write error, or nil.
func (s *OffsetStore) failedErr(consumerID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[consumerID]
}

// consumerOf is the consumer whose directory holds path, a path under the
// store's root.
func (s *OffsetStore) consumerOf(path string) string {
	rel, err := filepath.Rel(s.root, path)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first
}

// ensureDir makes dir and its entry durable once per store: the first
// commit into it runs durable.MkdirAll, which creates what is missing and
// syncs the parent even of a directory that was there already (an earlier
// process may have died before syncing it).
func (s *OffsetStore) ensureDir(dir string) error {
	return s.oncePerDir(&s.dirs, dir, func() error {
		_, err := durable.MkdirAll(s.fs, dir)
		return err
	})
}

// fail makes err consumerID's sticky write error, unless it has one.
func (s *OffsetStore) fail(consumerID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = map[string]error{}
	}
	if _, ok := s.failed[consumerID]; !ok {
		s.failed[consumerID] = err
	}
}

// Commit durably records offset as the next offset the consumer will fetch
// from the topic partition after a restart. The file is replaced atomically
// (temp file, fsync, rename, fsync of the directory; new directories are
// fsync-ed into their parents), so a crash leaves the old offset or the new
// one. An offset below the committed one returns an *OffsetRegressionError;
// committing the committed offset again writes nothing. A damaged existing
// file returns an *OffsetCorruptionError and is not overwritten.
func (s *OffsetStore) Commit(consumerID, topicName string, partition int, offset uint64) error {
	return s.write("commit", consumerID, topicName, partition, offset, false)
}

// Reset is the operator's explicit reset of a committed offset (what
// kafka-consumer-groups --reset-offsets does for Kafka): it durably records
// offset as the consumer's committed offset whether it is above, equal to or
// below the current one, or when nothing was committed yet. It is the one
// sanctioned way to move durable progress backwards; Seek never does, and
// Commit refuses to.
//
// Everything else is as for Commit: names are validated before any path is
// built, the write is atomic and durable, resetting to the committed offset
// writes nothing, a damaged existing file returns an *OffsetCorruptionError
// and is not overwritten (an operator must look at it first), and after a
// failed write the store refuses every Commit and Reset of the consumer
// (ErrStoreFailed).
//
// A Consumer already running with this id keeps its own position and its
// own idea of the committed offset; a reset takes effect for consumers
// created after it.
func (s *OffsetStore) Reset(consumerID, topicName string, partition int, offset uint64) error {
	return s.write("reset", consumerID, topicName, partition, offset, true)
}

// write is Commit (allowBackwards false) and Reset (true): it validates,
// takes the file's lock, checks the sticky failure and the file on disk, and
// replaces the file atomically.
func (s *OffsetStore) write(op, consumerID, topicName string, partition int, offset uint64, allowBackwards bool) error {
	path, err := s.path(consumerID, topicName, partition)
	if err != nil {
		return err
	}
	cl := s.consumerLock(consumerID)
	cl.RLock()
	defer cl.RUnlock()
	l := s.lockFor(path)
	l.Lock()
	defer l.Unlock()
	if err := s.failedErr(consumerID); err != nil {
		return fmt.Errorf("client: %s %s: %w (%w)", op, path, ErrStoreFailed, err)
	}
	committed, ok, err := s.read(path)
	if err != nil {
		return err
	}
	if ok && offset < committed && !allowBackwards {
		return &OffsetRegressionError{ConsumerID: consumerID, Topic: topicName, Partition: partition, Committed: committed, Requested: offset}
	}
	if ok && offset == committed {
		return nil
	}
	if err := s.ensureDir(filepath.Dir(path)); err != nil {
		s.fail(consumerID, err)
		return fmt.Errorf("client: %s %s: %w", op, path, err)
	}
	if err := durable.WriteFile(s.fs, path, encodeOffset(offset)); err != nil {
		s.fail(consumerID, err)
		return fmt.Errorf("client: %s %s: %w", op, path, err)
	}
	s.markSynced(filepath.Dir(path))
	return nil
}

// List returns every offset one consumer has committed, sorted by topic and
// partition. A consumer that never committed has none. Entries that are not
// offset files (leftover temp files, foreign names) are skipped; a damaged
// offset file returns an *OffsetCorruptionError.
func (s *OffsetStore) List(consumerID string) ([]CommittedOffset, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return nil, fmt.Errorf("client: consumer id: %w", err)
	}
	dir := filepath.Join(s.root, consumerID)
	topics, err := s.fs.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: list offsets of %q: %w", consumerID, err)
	}
	var out []CommittedOffset
	for _, te := range topics {
		if !te.IsDir() || topic.ValidateName(te.Name()) != nil {
			continue
		}
		files, err := s.fs.ReadDir(filepath.Join(dir, te.Name()))
		if err != nil {
			return nil, fmt.Errorf("client: list offsets of %q: %w", consumerID, err)
		}
		for _, fe := range files {
			p, ok := ParseOffsetFileName(fe.Name())
			if !ok {
				continue
			}
			off, ok, err := s.read(filepath.Join(dir, te.Name(), fe.Name()))
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, CommittedOffset{Topic: te.Name(), Partition: p, Offset: off})
			}
		}
	}
	slices.SortFunc(out, func(a, b CommittedOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	return out, nil
}

// StoredOffset is one offset file found by OffsetStore.ListAll.
type StoredOffset struct {
	// ConsumerID is the consumer whose directory holds the file.
	ConsumerID string
	CommittedOffset
	// Err is why the file could not be read, Offset being 0 then: an
	// *OffsetCorruptionError for a damaged file, a wrapped I/O error
	// otherwise.
	Err error
}

// ListAll returns every offset file of every consumer, sorted by consumer
// id, topic and partition, reading each file once. Unlike List it changes
// nothing: it syncs no directory (so an offset a crashed process renamed
// into place but never made durable is reported as found) and cannot fail
// the store. It is meant for reports, such as metrics, that must show what
// they can: a file that cannot be read is an entry with Err set, and a
// consumer or topic directory that cannot be listed is skipped, its error
// joined into the returned error along with the entries of the others.
// Entries that are not offset files, or whose names are not valid consumer
// ids or topic names, are skipped as List skips them. A missing root is no
// consumer at all.
func (s *OffsetStore) ListAll() ([]StoredOffset, error) {
	consumers, err := s.fs.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: list offsets in %s: %w", s.root, err)
	}
	var out []StoredOffset
	var errs []error
	for _, ce := range consumers {
		if !ce.IsDir() || topic.ValidateName(ce.Name()) != nil {
			continue
		}
		cdir := filepath.Join(s.root, ce.Name())
		topics, err := s.fs.ReadDir(cdir)
		if err != nil {
			errs = append(errs, fmt.Errorf("client: list offsets in %s: %w", cdir, err))
			continue
		}
		for _, te := range topics {
			if !te.IsDir() || topic.ValidateName(te.Name()) != nil {
				continue
			}
			tdir := filepath.Join(cdir, te.Name())
			files, err := s.fs.ReadDir(tdir)
			if err != nil {
				errs = append(errs, fmt.Errorf("client: list offsets in %s: %w", tdir, err))
				continue
			}
			for _, fe := range files {
				p, ok := ParseOffsetFileName(fe.Name())
				if !ok {
					continue
				}
				off, ok, err := ReadOffsetFile(s.fs, filepath.Join(tdir, fe.Name()))
				if !ok && err == nil {
					continue // removed since ReadDir
				}
				out = append(out, StoredOffset{ConsumerID: ce.Name(),
					CommittedOffset: CommittedOffset{Topic: te.Name(), Partition: p, Offset: off}, Err: err})
			}
		}
	}
	// ReadDir sorts by name and partition file names are zero-padded, but
	// partitions past 999999 would sort by name only: sort as List does.
	slices.SortStableFunc(out, func(a, b StoredOffset) int {
		if c := strings.Compare(a.ConsumerID, b.ConsumerID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	return out, errors.Join(errs...)
}
