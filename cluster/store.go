package cluster

import (
	"context"

	"github.com/pystream/pystream/client"
)

// MetaStore is where a Cluster keeps what its brokers agree on: the
// metadata (brokers, topics, placement, leaders, leader epochs, active
// sets, configuration), the consumers' committed offsets, the journal and
// the healing switch. The replication core is written once over it:
//
//   - in one process (Open) it is cluster.meta, the journal file and the
//     phase-3 offset files under the cluster's root (fileStore), each
//     change written before it is reported;
//   - in cluster mode it is the metadata group's replicated state machine
//     (MetaState, applied by every node in the same order), each change a
//     MetaCommand committed through Raft (server/clusternode).
//
// Either way a change is decided by the same pure rules (MetaState.Apply,
// transitions.go), so the two cannot disagree on what a failover writes or
// which command is refused. Implementations are safe for concurrent use.
type MetaStore interface {
	// Read calls fn with the state as it is now; fn must neither keep nor
	// change it. In one process, only Meta and Healing are filled in: the
	// offsets and the journal are read through their own methods.
	Read(fn func(s *MetaState))
	// Changed returns a channel that the next change of the state closes.
	Changed() <-chan struct{}
	// Ready reports whether the state is known to be current; until it is,
	// an answer built from it could say that something does not exist when
	// it does (ErrNotReady).
	Ready() bool
	// Version is how far this copy of the state has come: a number that
	// only grows. AwaitVersion waits until this copy has come at least as
	// far as v, a Version read from another process's copy, so that an
	// operation that another process ran for this one is seen here when
	// it returns. In one process there is one copy: Version is 0 and
	// AwaitVersion returns at once.
	Version() uint64
	AwaitVersion(ctx context.Context, v uint64) error

	// Intend journals the intent of cmd, a change of one partition's
	// leadership or active set (OpFailover, OpMoveLeader, OpDeactivate,
	// OpActivate), with the partition before and after it and
	// words.Summary, and returns the intent's offset. Nothing changes: an
	// operation writes its intent before it touches anything, so that the
	// journal says what it was doing if it stops half way. A command the
	// state refuses is refused here already.
	Intend(ctx context.Context, cmd MetaCommand, words ChangeWords) (intent uint64, err error)
	// Change commits cmd, journaled as the outcome of intent with
	// words.Outcome, and returns the partition's metadata after it. A
	// command its state refuses changes nothing. An error wrapping
	// ErrJournalFailed means the change took effect but its outcome was
	// not journaled.
	Change(ctx context.Context, cmd MetaCommand, intent uint64, words ChangeWords) (PartitionMetadata, error)
	// Journal records an entry of something that happened without a
	// change of the metadata (a catch-up, a broker's stop, a retention
	// pass, a refusal) and returns its offset.
	Journal(ctx context.Context, e JournalEntry) (uint64, error)
	// JournalEntries returns up to max entries from offset since on,
	// oldest first; JournalEnd is the offset the next one gets.
	JournalEntries(since uint64, max int) ([]JournalEntry, error)
	JournalEnd() (uint64, error)

	// CommitOffset, ResetOffset, LoadOffset, ListOffsets, ListAllOffsets,
	// DeleteOffsets and DeleteOffset are phase 3's offset store
	// (client.OffsetStore's rules: a commit never goes backwards, a reset
	// may).
	CommitOffset(ctx context.Context, consumerID, topicName string, partition int, offset uint64) error
	ResetOffset(ctx context.Context, consumerID, topicName string, partition int, offset uint64) error
	LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error)
	ListOffsets(consumerID string) ([]client.CommittedOffset, error)
	ListAllOffsets() ([]client.StoredOffset, error)
	DeleteOffsets(ctx context.Context, consumerID string) (int, error)
	// DeleteOffset deletes a consumer's offset on one partition, durably,
	// and reports whether there was one.
	DeleteOffset(ctx context.Context, consumerID, topicName string, partition int) (bool, error)

	// SaveGroupLeases durably replaces what a consumer group's
	// coordinator keeps of the group across restarts (its leases, opaque
	// here), through the same path as a commit; nil removes them.
	// GroupLeases is every group's, by group id.
	SaveGroupLeases(ctx context.Context, group string, leases []byte) error
	GroupLeases() (map[string][]byte, error)

	// AllocateProducerIDs reserves count producer ids (1 to
	// MaxProducerIDCount) that no reservation has returned before and none
	// will again, and returns the first: the block is [first,
	// first+count). The reservation is durable before it returns, so that
	// a process that restarts, or another one, never gets these ids again.
	AllocateProducerIDs(ctx context.Context, count int64) (first int64, err error)

	// SaveTransaction durably replaces transactional id t.ID's state
	// with t, if the state stored is still the one expect names (the
	// zero stamp: none is stored) and t.Version is expect's plus one; a
	// change decided on any other is refused (*StaleTransactionError,
	// ErrStaleTransaction) and changes nothing. A save of what is stored
	// already (the same save twice) succeeds. DeleteTransaction removes
	// id's state under the same condition; one no longer stored is no
	// error. Transaction is id's state; Transactions every id's, by id
	// (txnstore.go).
	SaveTransaction(ctx context.Context, expect TxnStamp, t Transaction) error
	DeleteTransaction(ctx context.Context, id string, expect TxnStamp) error
	Transaction(id string) (t Transaction, ok bool, err error)
	Transactions() ([]Transaction, error)

	// SetHealing switches automatic healing, journaled as the operator's
	// healing entry with reason; it reports whether the switch changed.
	SetHealing(ctx context.Context, on bool, summary, reason string) (changed bool, err error)
}

// ChangeWords is what the journal says of a change: Summary is the change
// and the numbers it was decided on (an intent, in one process; the one
// entry Raft commits, in cluster mode), Outcome what it left (the done
// entry of one process). Quarantine and Cut name what a recovery cut.
type ChangeWords struct {
	Summary    string
	Outcome    string
	Quarantine string
	Cut        *JournalCut
}

// readPartition returns one partition's metadata from st.
func readPartition(st MetaStore, topicName string, partition int) (pm PartitionMetadata, err error) {
	st.Read(func(s *MetaState) { pm, err = s.Partition(topicName, partition) })
	return pm, err
}

// ChangeIntent is the journal's intent entry of cmd, a change of one
// partition's leadership or active set, on the state s: the partition
// before and after it (decided by MetaState.Apply, on a copy), the
// candidates of a failover, what a recovery will cut, and words.Summary.
// A command the state refuses is refused here. Both stores write the same
// intent.
func ChangeIntent(s *MetaState, cmd MetaCommand, words ChangeWords) (JournalEntry, error) {
	next := &MetaState{Meta: s.Meta.clone(), Healing: s.Healing}
	before, err := next.Partition(cmd.Topic, cmd.Partition)
	if err != nil {
		return JournalEntry{}, err
	}
	res, err := next.Apply(cmd)
	if err != nil {
		return JournalEntry{}, err
	}
	e := changeEntry(cmd, before, PhaseIntent, words.Summary)
	e.Before, e.After, e.Candidates = &before, res.Partition, cmd.Candidates
	e.Quarantine, e.Cut = words.Quarantine, words.Cut
	return e, nil
}
