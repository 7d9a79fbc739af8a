package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// fileStore is the MetaStore of a Cluster of one process (Open):
// cluster.meta for the metadata, the journal file for the journal, the
// phase-3 offset files for the consumers' offsets, all under the cluster's
// root. A change is decided by MetaState.Apply, the same rule cluster mode
// applies, and written before it is reported: a leadership change
// journals its intent, writes cluster.meta atomically (temp file, fsync,
// rename, directory fsync) and journals its outcome, so that Open can give
// an intent a crash left behind its outcome (reconcileJournal). Automatic
// healing, switched at run time, lives in memory: a restart takes the
// server's configured failover delay again. It is safe for concurrent use.
type fileStore struct {
	root string
	fsys durable.FS

	// metaMu guards meta, healing and metaFailed and serialises writes of
	// cluster.meta. Read shares it: every write, lookup and status reads
	// the metadata, and they need not wait for one another.
	metaMu sync.RWMutex
	// meta is exactly what cluster.meta holds.
	meta Metadata
	// healing is automatic healing as last switched (SetHealing), nil when
	// it never was.
	healing *bool
	// metaFailed, once set, is why cluster.meta may no longer hold meta;
	// every later change is refused until the cluster is reopened.
	metaFailed error

	// journal records every operation (docs/design.md § The journal).
	journal *journal

	// offsetsMu guards offsets, the consumer offset store, opened on first
	// use.
	offsetsMu sync.Mutex
	offsets   *client.OffsetStore
	closed    bool

	// groupsMu serialises the writes of the groups' leases
	// (groupleases.go); groupsMade is set once <root>/groups exists.
	groupsMu   sync.Mutex
	groupsMade bool

	// producerIDsMu guards nextProducerID and producerIDsRead and
	// serialises the writes of producer.ids (producerids.go);
	// nextProducerID is what the file holds once producerIDsRead is set.
	producerIDsMu   sync.Mutex
	nextProducerID  int64
	producerIDsRead bool

	// txnMu guards txns and serialises the writes of transactions.state
	// (txnstore.go); txns is what the file holds, nil until first read.
	txnMu sync.Mutex
	txns  map[string]Transaction

	// changedMu guards changed, closed (and replaced) at every change.
	changedMu sync.Mutex
	changed   chan struct{}
}

var _ MetaStore = (*fileStore)(nil)

// Version is 0: one process has one copy of the state.
func (f *fileStore) Version() uint64 { return 0 }

// AwaitVersion returns at once: one process has one copy of the state.
func (f *fileStore) AwaitVersion(context.Context, uint64) error { return nil }

func newFileStore(root string, fsys durable.FS, logOpts log.Options) *fileStore {
	return &fileStore{root: root, fsys: fsys, journal: &journal{root: root, opts: logOpts}, changed: make(chan struct{})}
}

// metaPath is the cluster.meta file.
func (f *fileStore) metaPath() string { return filepath.Join(f.root, MetaFileName) }

// offsetsDir is where the consumers' offsets live: <root>/offsets.
func (f *fileStore) offsetsDir() string { return filepath.Join(f.root, "offsets") }

// Read calls fn with the metadata and the healing switch, which fn must
// not change; calls run side by side.
func (f *fileStore) Read(fn func(s *MetaState)) {
	f.metaMu.RLock()
	defer f.metaMu.RUnlock()
	fn(&MetaState{Meta: f.meta, Healing: f.healing})
}

// Changed returns the channel the next change closes.
func (f *fileStore) Changed() <-chan struct{} {
	f.changedMu.Lock()
	defer f.changedMu.Unlock()
	return f.changed
}

// signal wakes whoever waits on Changed.
func (f *fileStore) signal() {
	f.changedMu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.changedMu.Unlock()
}

// Ready is always true: cluster.meta is read whole at Open.
func (f *fileStore) Ready() bool { return true }

// decide applies cmd to the metadata by MetaState.Apply's rules, leaving
// f.meta as it is, and returns the partition before and after. f.metaMu
// must be held.
func (f *fileStore) decideLocked(cmd MetaCommand) (before PartitionMetadata, next Metadata, after PartitionMetadata, err error) {
	meta := f.meta
	if !leadershipOp(cmd.Op) {
		// A leadership change builds a changed copy and never writes into
		// the state's metadata (MetaState.changePartition); any other
		// command is decided on a copy of its own.
		meta = f.meta.clone()
	}
	s := &MetaState{Meta: meta, Healing: f.healing}
	if before, err = s.Partition(cmd.Topic, cmd.Partition); err != nil {
		return before, next, after, err
	}
	res, err := s.Apply(cmd)
	if err != nil {
		return before, next, after, err
	}
	return before, s.Meta, *res.Partition, nil
}

// Intend journals the intent of a leadership change (see MetaStore).
func (f *fileStore) Intend(ctx context.Context, cmd MetaCommand, words ChangeWords) (uint64, error) {
	var e JournalEntry
	var err error
	f.Read(func(s *MetaState) { e, err = ChangeIntent(s, cmd, words) })
	if err != nil {
		return 0, err
	}
	off, err := f.journal.append(e)
	if err != nil {
		return 0, fmt.Errorf("nothing changed: %w", err)
	}
	return off, nil
}

// Change writes a leadership change to cluster.meta and journals its
// outcome (see MetaStore). A failed write leaves cluster.meta as it was;
// a failed outcome entry is an error wrapping ErrJournalFailed, the change
// having taken effect.
func (f *fileStore) Change(ctx context.Context, cmd MetaCommand, intent uint64, words ChangeWords) (PartitionMetadata, error) {
	f.metaMu.Lock()
	before, next, after, err := f.decideLocked(cmd)
	if err == nil {
		err = f.persistLocked(next)
	}
	f.metaMu.Unlock()
	if err != nil {
		return PartitionMetadata{}, err
	}
	f.signal()
	e := changeEntry(cmd, before, PhaseDone, words.Outcome)
	e.Intent = &intent
	if words.Cut != nil {
		e.Cut, e.Quarantine = words.Cut, words.Quarantine
	}
	if _, err := f.journal.append(e); err != nil {
		return after, fmt.Errorf("%w: %w", ErrJournalFailed, err)
	}
	return after, nil
}

// changeEntry is a journal entry of a leadership change: the event of its
// command, the broker it acts on (the failed leader of a failover, the new
// leader of a move, the follower otherwise).
func changeEntry(cmd MetaCommand, before PartitionMetadata, phase JournalPhase, summary string) JournalEntry {
	acted := cmd.Broker
	if cmd.Op == OpFailover {
		acted = before.Leader
	}
	return JournalEntry{Event: changeEvent(cmd.Op), Phase: phase, By: by(cmd), Topic: cmd.Topic, Partition: cmd.Partition,
		Broker: acted, Summary: summary, Reason: cmd.Reason}
}

// changeEvent is the journal's event of a leadership command.
func changeEvent(op MetaOp) JournalEvent {
	switch op {
	case OpFailover:
		return EventFailover
	case OpMoveLeader:
		return EventMoveLeader
	case OpDeactivate:
		return EventDeactivate
	}
	return EventRecover
}

// Journal appends e to the journal file.
func (f *fileStore) Journal(ctx context.Context, e JournalEntry) (uint64, error) {
	return f.journal.append(e)
}

// JournalEntries reads the journal file.
func (f *fileStore) JournalEntries(since uint64, max int) ([]JournalEntry, error) {
	return f.journal.read(since, max)
}

// JournalEnd is the journal file's next offset.
func (f *fileStore) JournalEnd() (uint64, error) { return f.journal.end() }

// SetHealing records the switch in memory and journals it.
func (f *fileStore) SetHealing(ctx context.Context, on bool, summary, reason string) (bool, error) {
	f.metaMu.Lock()
	changed := f.healing == nil || *f.healing != on
	state := on
	f.healing = &state
	f.metaMu.Unlock()
	switched := on
	word := "off"
	if on {
		word = "on"
	}
	e := JournalEntry{Event: EventHealing, Phase: PhaseDone, By: ByOperator,
		Summary: fmt.Sprintf("automatic healing %s: %s", word, summary), Reason: reason, Automatic: &switched}
	if _, err := f.journal.append(e); err != nil {
		return changed, fmt.Errorf("cluster: journal automatic healing %s: %w", word, err)
	}
	if changed {
		f.signal()
	}
	return changed, nil
}

// offsetStore returns the consumer offset store, opened once, so that every
// consumer of the cluster shares its per-file locks.
func (f *fileStore) offsetStore() (*client.OffsetStore, error) {
	f.offsetsMu.Lock()
	defer f.offsetsMu.Unlock()
	if f.closed {
		return nil, ErrClosed
	}
	if f.offsets == nil {
		s, err := client.OpenOffsetStoreWithOptions(f.offsetsDir(), client.OffsetStoreOptions{FS: f.fsys})
		if err != nil {
			return nil, fmt.Errorf("cluster: open offset store: %w", err)
		}
		f.offsets = s
	}
	return f.offsets, nil
}

// CommitOffset is client.OffsetStore.Commit.
func (f *fileStore) CommitOffset(ctx context.Context, consumerID, topicName string, partition int, offset uint64) error {
	s, err := f.offsetStore()
	if err != nil {
		return err
	}
	return s.Commit(consumerID, topicName, partition, offset)
}

// ResetOffset is client.OffsetStore.Reset.
func (f *fileStore) ResetOffset(ctx context.Context, consumerID, topicName string, partition int, offset uint64) error {
	s, err := f.offsetStore()
	if err != nil {
		return err
	}
	return s.Reset(consumerID, topicName, partition, offset)
}

// LoadOffset is client.OffsetStore.Load.
func (f *fileStore) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	s, err := f.offsetStore()
	if err != nil {
		return 0, false, err
	}
	return s.Load(consumerID, topicName, partition)
}

// ListOffsets is client.OffsetStore.List.
func (f *fileStore) ListOffsets(consumerID string) ([]client.CommittedOffset, error) {
	s, err := f.offsetStore()
	if err != nil {
		return nil, err
	}
	return s.List(consumerID)
}

// ListAllOffsets is client.OffsetStore.ListAll.
func (f *fileStore) ListAllOffsets() ([]client.StoredOffset, error) {
	s, err := f.offsetStore()
	if err != nil {
		return nil, err
	}
	return s.ListAll()
}

// DeleteOffsets is client.OffsetStore.DeleteConsumer.
func (f *fileStore) DeleteOffsets(ctx context.Context, consumerID string) (int, error) {
	s, err := f.offsetStore()
	if err != nil {
		return 0, err
	}
	return s.DeleteConsumer(consumerID)
}

// DeleteOffset is client.OffsetStore.DeleteOffset.
func (f *fileStore) DeleteOffset(ctx context.Context, consumerID, topicName string, partition int) (bool, error) {
	s, err := f.offsetStore()
	if err != nil {
		return false, err
	}
	return s.DeleteOffset(consumerID, topicName, partition)
}

// close closes the journal; the store refuses offsets afterwards.
func (f *fileStore) close() error {
	f.offsetsMu.Lock()
	f.closed = true
	f.offsetsMu.Unlock()
	return f.journal.close()
}

// persistLocked writes next as cluster.meta and, only if that succeeded,
// makes it the persisted metadata. f.metaMu must be held.
//
// A write can fail after its rename (only the directory fsync left), with
// next already in the file. Memory keeps the old metadata, so the file is
// then put back to it: a failed change is undone on disk too, and can be
// retried. If the file cannot be shown to hold the old content, every later
// change is refused (ErrMetadataFailed) until the cluster is reopened.
func (f *fileStore) persistLocked(next Metadata) error {
	if f.metaFailed != nil {
		return fmt.Errorf("%w: %w", ErrMetadataFailed, f.metaFailed)
	}
	data, err := EncodeClusterMeta(next)
	if err != nil {
		return err
	}
	err = durable.WriteFile(f.fsys, f.metaPath(), data)
	if err == nil {
		f.meta = next
		return nil
	}
	err = fmt.Errorf("cluster: write %s: %w", f.metaPath(), err)
	if rerr := f.restoreMetaLocked(); rerr != nil {
		f.metaFailed = errors.Join(err, rerr)
		return f.metaFailed
	}
	return err
}

// restoreMetaLocked makes sure cluster.meta holds f.meta after a failed
// write, rewriting it if it does not. f.metaMu must be held.
func (f *fileStore) restoreMetaLocked() error {
	old, err := EncodeClusterMeta(f.meta)
	if err != nil {
		return err
	}
	onDisk, err := durable.ReadFile(f.fsys, f.metaPath())
	if err == nil && bytes.Equal(onDisk, old) {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) && len(f.meta.Topics) == 0 && len(f.meta.Brokers) == 0 {
		return nil // never written: nothing to restore
	}
	if err := durable.WriteFile(f.fsys, f.metaPath(), old); err != nil {
		return fmt.Errorf("cluster: restore %s after a failed write: %w", f.metaPath(), err)
	}
	return nil
}

// knownBroker reports whether cluster.meta lists broker id.
func (f *fileStore) knownBroker(id int) bool {
	f.metaMu.Lock()
	defer f.metaMu.Unlock()
	for _, b := range f.meta.Brokers {
		if b == id {
			return true
		}
	}
	return false
}
