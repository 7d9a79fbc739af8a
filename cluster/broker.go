package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/log/wal"
	"github.com/pystream/pystream/topic"
)

// Broker is one logical storage node. It owns the directory
// <root>/broker-<id, 6 digits>/ and nothing else; each replica it holds is a
// segmented log (package log/segment) in the directory
// topics/<topic>/partition-<6 digits>/ inside it.
// A broker knows nothing about leaders or followers: the Cluster decides who
// writes what.
//
// A closed broker is unavailable: every operation on it fails with
// ErrBrokerUnavailable until a new Broker with the same id is registered.
// A Broker is safe for concurrent use.
type Broker struct {
	id   int
	root string
	dir  string
	opts BrokerOptions
	// journal is the broker's commit journal when BrokerOptions.Journal
	// asks for one: opts.FS is then the journal (commitjournal.go).
	journal *wal.FS

	// mu guards closed and logs.
	mu sync.Mutex
	// closed is set by Close.
	closed bool
	// logs holds the replica logs opened so far, by replica key, and
	// epochs the leader-epoch history of each (epochs.go), read when its
	// log is opened.
	logs   map[replicaKey]*segment.Log
	epochs map[replicaKey]*epochHistory
	// dropped holds the topics whose logs dropTopic closed: a deleted
	// topic's files are never opened again, whoever asks late, until a
	// topic of the name is created (a replica opened with create).
	dropped map[string]bool
}

type replicaKey struct {
	topic     string
	partition int
}

// OpenBroker opens (creating if needed) broker id's directory under root.
// Replica logs are opened on first use, so a broker with one damaged replica
// still opens and serves its other replicas; the damaged one reports its
// *log.CorruptionError to whoever touches it.
func OpenBroker(id int, root string) (*Broker, error) {
	return OpenBrokerWithOptions(id, root, BrokerOptions{})
}

// OpenBrokerWithOptions is OpenBroker with explicit options.
func OpenBrokerWithOptions(id int, root string, opts BrokerOptions) (*Broker, error) {
	if id < 1 {
		return nil, fmt.Errorf("cluster: open broker %d: %w", id, ErrInvalidBrokerID)
	}
	opts = opts.withDefaults()
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("cluster: open broker %d: %w", id, err)
	}
	dir := BrokerDir(abs, id)
	if _, err := durable.MkdirAll(opts.FS, dir); err != nil {
		return nil, fmt.Errorf("cluster: open broker %d: %w", id, err)
	}
	b := &Broker{id: id, root: abs, dir: dir, opts: opts, logs: map[replicaKey]*segment.Log{},
		epochs: map[replicaKey]*epochHistory{}, dropped: map[string]bool{}}
	if err := b.openJournal(); err != nil {
		return nil, fmt.Errorf("cluster: open broker %d: %w", id, err)
	}
	return b, nil
}

// BrokerDir is the directory broker id owns under root:
// <root>/broker-<id, 6 digits>.
func BrokerDir(root string, id int) string {
	return filepath.Join(root, fmt.Sprintf("broker-%06d", id))
}

// brokerTopicsDir holds, inside a broker's directory, one directory per
// topic the broker has a replica of.
const brokerTopicsDir = "topics"

// ReplicaDir is the segmented log of broker id's replica of one partition:
// <root>/broker-<id>/topics/<topic>/partition-<6 digits>/, the partition
// part spelled by topic.PartitionLogDir.
func ReplicaDir(root string, id int, topicName string, partition int) string {
	return topic.PartitionLogDir(filepath.Join(BrokerDir(root, id), brokerTopicsDir, topicName), partition)
}

// ID is the broker's id.
func (b *Broker) ID() int { return b.id }

// Root is the cluster root the broker lives under (absolute).
func (b *Broker) Root() string { return b.root }

// Dir is the broker's own directory.
func (b *Broker) Dir() string { return b.dir }

// ReplicaDir is the log directory of the broker's replica of one partition.
func (b *Broker) ReplicaDir(topicName string, partition int) string {
	return ReplicaDir(b.root, b.id, topicName, partition)
}

// Available reports whether the broker is open.
func (b *Broker) Available() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.closed
}

// Close closes every replica log (waiting for appends in flight) and makes
// the broker unavailable. Closing twice is harmless.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	logs, epochs := b.logs, b.epochs
	b.logs, b.epochs = nil, nil
	b.mu.Unlock()
	for _, h := range epochs {
		h.close()
	}
	var errs []error
	for _, l := range logs {
		errs = append(errs, l.Close())
	}
	errs = append(errs, b.closeJournal())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster: close broker %d: %w", b.id, err)
	}
	return nil
}

// replica returns the broker's log for one partition, opening it on first
// use. With create false a missing log file is ErrReplicaMissing: a replica
// is created only when its topic is, never silently recreated empty.
func (b *Broker) replica(topicName string, partition int, create bool) (*segment.Log, error) {
	if err := topic.ValidateName(topicName); err != nil {
		return nil, err
	}
	key := replicaKey{topicName, partition}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("cluster: broker %d: %w", b.id, ErrBrokerUnavailable)
	}
	if l, ok := b.logs[key]; ok {
		b.mu.Unlock()
		return l, nil
	}
	if b.dropped[topicName] {
		if !create {
			b.mu.Unlock()
			return nil, fmt.Errorf("cluster: broker %d: topic %q: deleted: %w", b.id, topicName, ErrUnknownTopic)
		}
		delete(b.dropped, topicName)
	}
	b.mu.Unlock()
	// The file I/O runs without b.mu, so that a creation opening thousands
	// of replicas does not hold up the broker's other replicas.
	dir := b.ReplicaDir(topicName, partition)
	opts := b.segmentOptions(topicName)
	opts.MustExist = !create
	l, err := segment.Open(dir, opts)
	if create && errors.Is(err, fs.ErrExist) {
		// Another caller created the first segment between our finding it
		// missing and our creating it: open that one (kept once, below).
		l, err = segment.Open(dir, opts)
	}
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cluster: broker %d: %s: %w", b.id, dir, ErrReplicaMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: broker %d: open replica %s/%d: %w", b.id, topicName, partition, err)
	}
	h, err := openEpochHistory(b.opts.FS, dir, l.LogStart(), l.NextOffset(), b.logf)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("cluster: broker %d: open replica %s/%d: %w", b.id, topicName, partition, err), l.Close())
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.Join(fmt.Errorf("cluster: broker %d: %w", b.id, ErrBrokerUnavailable), l.Close())
	}
	if other, ok := b.logs[key]; ok {
		// Opened by another caller meanwhile: one instance per file.
		b.mu.Unlock()
		return other, l.Close()
	}
	if b.dropped[topicName] {
		// Deleted while it was being opened.
		b.mu.Unlock()
		return nil, errors.Join(fmt.Errorf("cluster: broker %d: topic %q: deleted: %w", b.id, topicName, ErrUnknownTopic), l.Close())
	}
	b.logs[key], b.epochs[key] = l, h
	b.mu.Unlock()
	return l, nil
}

// epochsOf returns the leader-epoch history of the broker's replica of
// one partition, opening its log if needed (replica).
func (b *Broker) epochsOf(topicName string, partition int) (*epochHistory, error) {
	key := replicaKey{topicName, partition}
	b.mu.Lock()
	h, ok := b.epochs[key]
	b.mu.Unlock()
	if ok {
		return h, nil // open: every batch takes this way
	}
	if _, err := b.replica(topicName, partition, false); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.epochs[key]; ok {
		return h, nil
	}
	return nil, fmt.Errorf("cluster: broker %d: replica %s/%d closed meanwhile: %w", b.id, topicName, partition, ErrBrokerUnavailable)
}

// truncateReplica cuts the broker's replica of one partition back to end
// (segment.Log.Truncate), then drops the runs of its history that start
// at or past end. The caller holds the replica's writes back.
func (b *Broker) truncateReplica(topicName string, partition int, end uint64) error {
	return b.rewriteReplica(topicName, partition, func(l *segment.Log) error { return l.Truncate(end) }, end)
}

// resetReplica starts the broker's replica of one partition again, empty,
// at start (segment.Log.ResetTo), then drops its whole leader-epoch
// history: its runs describe records the replica no longer holds, and a
// stale one would stand before the runs its leader sends next. The caller
// holds the replica's writes back.
func (b *Broker) resetReplica(topicName string, partition int, start uint64) error {
	return b.rewriteReplica(topicName, partition, func(l *segment.Log) error { return l.ResetTo(start) }, 0)
}

// rewriteReplica changes the log of the broker's replica of one
// partition with change, then drops the runs of its history that start
// at or past keepBelow: the log first, so that after a crash between the
// two, opening drops them (openEpochHistory).
func (b *Broker) rewriteReplica(topicName string, partition int, change func(*segment.Log) error, keepBelow uint64) error {
	l, err := b.replica(topicName, partition, false)
	if err != nil {
		return err
	}
	h, err := b.epochsOf(topicName, partition)
	if err != nil {
		return err
	}
	if err := change(l); err != nil {
		return err
	}
	return h.truncate(keepBelow)
}

// logf tells the broker options' logger, if any, what happened.
func (b *Broker) logf(format string, args ...any) {
	if b.opts.Logf != nil {
		b.opts.Logf(format, args...)
	}
}

// unavailable reports whether err means the broker (or the replica's log)
// was closed under us, which the cluster treats like an unavailable broker.
func unavailable(err error) bool {
	return errors.Is(err, ErrBrokerUnavailable) || errors.Is(err, log.ErrClosed)
}

// failedReplicas lists the replicas whose open logs refuse writes since a
// write failed (segment.Log.Failed), in no particular order.
func (b *Broker) failedReplicas() []replicaKey {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []replicaKey
	for k, l := range b.logs {
		if l.Failed() != nil {
			out = append(out, k)
		}
	}
	return out
}

// reopenReplica closes the replica's log if it has failed and opens it
// again, which scans the file as at start: what is on disk is what the log
// holds from then on, and damage (a torn tail included) is reported as a
// *log.CorruptionError, never repaired. A log that has not failed, or is
// not open, is left alone (reopened false). On error the replica is left
// closed, and its next use opens it (and reports the error) again, as
// after a broker start. The partition's writes must be held back by the
// caller (the partition's writer slot idle).
func (b *Broker) reopenReplica(key replicaKey) (reopened bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false, fmt.Errorf("cluster: broker %d: %w", b.id, ErrBrokerUnavailable)
	}
	l, ok := b.logs[key]
	if !ok || l.Failed() == nil {
		return false, nil
	}
	delete(b.logs, key)
	// The close error of a failed log says nothing about acknowledged
	// records (they were fsync-ed); what counts is what the scan finds.
	_ = l.Close()
	opts := b.segmentOptions(key.topic)
	opts.MustExist = true
	if h, ok := b.epochs[key]; ok {
		h.close()
		delete(b.epochs, key)
	}
	dir := b.ReplicaDir(key.topic, key.partition)
	nl, err := segment.Open(dir, opts)
	if err != nil {
		return false, fmt.Errorf("cluster: broker %d: reopen replica %s/%d: %w", b.id, key.topic, key.partition, err)
	}
	h, err := openEpochHistory(b.opts.FS, dir, nl.LogStart(), nl.NextOffset(), b.logf)
	if err != nil {
		return false, errors.Join(fmt.Errorf("cluster: broker %d: reopen replica %s/%d: %w", b.id, key.topic, key.partition, err), nl.Close())
	}
	b.logs[key], b.epochs[key] = nl, h
	return true, nil
}
