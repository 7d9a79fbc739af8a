package clusternode

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// raftStore is the node's cluster.MetaStore: the metadata group's state
// machine (cluster.MetaState), read from this node's copy and changed by a
// command committed through Raft — on this node when it leads the group,
// else proposed to the leader over the internal API — then applied here
// before the call returns. Refusals are MetaState.Apply's, the same as in
// one process.
type raftStore struct{ n *Node }

var (
	_ cluster.MetaStore  = raftStore{}
	_ cluster.TopicStore = raftStore{}
)

func (st raftStore) Read(fn func(s *cluster.MetaState)) { st.n.fsm.read(fn) }

func (st raftStore) Changed() <-chan struct{} {
	ch, _ := st.n.fsm.watch()
	return ch
}

// Ready is true once this node's registration is applied — its copy is
// then at least as recent as its start — and it knows what the controller
// knows of the brokers (heartbeats.known).
func (st raftStore) Ready() bool { return st.n.registered.Load() && st.n.hbs.known() }

// Version is the metadata group's log index this node's copy has applied.
func (st raftStore) Version() uint64 {
	_, applied := st.n.fsm.watch()
	return max(applied, st.n.raft.AppliedIndex())
}

// AwaitVersion waits until this node's copy has applied index v.
func (st raftStore) AwaitVersion(ctx context.Context, v uint64) error {
	return st.n.fsm.waitApplied(ctx, v, st.n.raft.AppliedIndex)
}

func (st raftStore) propose(ctx context.Context, c cluster.MetaCommand) (cluster.MetaResult, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return st.n.propose(ctx, c)
}

func (st raftStore) Intend(ctx context.Context, cmd cluster.MetaCommand, words cluster.ChangeWords) (uint64, error) {
	var e cluster.JournalEntry
	var err error
	st.Read(func(s *cluster.MetaState) { e, err = cluster.ChangeIntent(s, cmd, words) })
	if err != nil {
		return 0, err
	}
	return st.Journal(ctx, e)
}

func (st raftStore) Change(ctx context.Context, cmd cluster.MetaCommand, intent uint64, words cluster.ChangeWords) (cluster.PartitionMetadata, error) {
	res, err := st.propose(ctx, cmd)
	if err != nil {
		return cluster.PartitionMetadata{}, err
	}
	if res.Partition == nil {
		return cluster.PartitionMetadata{}, fmt.Errorf("clusternode: %s %s/%d: no partition in the answer", cmd.Op, cmd.Topic, cmd.Partition)
	}
	return *res.Partition, nil
}

func (st raftStore) Journal(ctx context.Context, e cluster.JournalEntry) (uint64, error) {
	res, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpJournal, Entry: &e})
	if err != nil {
		return 0, err
	}
	if res.Journal == nil {
		return 0, fmt.Errorf("clusternode: journal entry: no offset in the answer")
	}
	return *res.Journal, nil
}

func (st raftStore) JournalEntries(since uint64, max int) ([]cluster.JournalEntry, error) {
	var out []cluster.JournalEntry
	st.Read(func(s *cluster.MetaState) {
		for _, e := range s.Journal {
			if e.Offset >= since && len(out) < max {
				out = append(out, e)
			}
		}
	})
	return out, nil
}

func (st raftStore) JournalEnd() (uint64, error) {
	var end uint64
	st.Read(func(s *cluster.MetaState) { end = s.JournalEnd() })
	return end, nil
}

func (st raftStore) CommitOffset(ctx context.Context, consumerID, topicName string, partition int, offset uint64) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpCommitOffset, Consumer: consumerID, Topic: topicName, Partition: partition, Offset: offset})
	return err
}

func (st raftStore) ResetOffset(ctx context.Context, consumerID, topicName string, partition int, offset uint64) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpResetOffset, Consumer: consumerID, Topic: topicName, Partition: partition, Offset: offset})
	return err
}

func (st raftStore) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	var off uint64
	var ok bool
	st.Read(func(s *cluster.MetaState) {
		off, ok = s.Offsets[cluster.OffsetKey{Consumer: consumerID, Topic: topicName, Partition: partition}]
	})
	return off, ok, nil
}

func (st raftStore) ListOffsets(consumerID string) ([]client.CommittedOffset, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return nil, fmt.Errorf("client: consumer id: %w", err)
	}
	var out []client.CommittedOffset
	st.Read(func(s *cluster.MetaState) {
		for k, off := range s.Offsets {
			if k.Consumer == consumerID {
				out = append(out, client.CommittedOffset{Topic: k.Topic, Partition: k.Partition, Offset: off})
			}
		}
	})
	slices.SortFunc(out, func(a, b client.CommittedOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	return out, nil
}

func (st raftStore) ListAllOffsets() ([]client.StoredOffset, error) {
	var out []client.StoredOffset
	st.Read(func(s *cluster.MetaState) {
		for k, off := range s.Offsets {
			out = append(out, client.StoredOffset{ConsumerID: k.Consumer, CommittedOffset: client.CommittedOffset{Topic: k.Topic, Partition: k.Partition, Offset: off}})
		}
	})
	slices.SortFunc(out, func(a, b client.StoredOffset) int {
		if c := strings.Compare(a.ConsumerID, b.ConsumerID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	return out, nil
}

func (st raftStore) DeleteOffsets(ctx context.Context, consumerID string) (int, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return 0, fmt.Errorf("cluster: delete offsets: consumer id: %w", err)
	}
	res, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpDeleteOffsets, Consumer: consumerID})
	return res.Count, err
}

func (st raftStore) DeleteOffset(ctx context.Context, consumerID, topicName string, partition int) (bool, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return false, fmt.Errorf("cluster: delete offset: consumer id: %w", err)
	}
	res, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpDeleteOffset, Consumer: consumerID, Topic: topicName, Partition: partition})
	return res.Count > 0, err
}

func (st raftStore) SaveGroupLeases(ctx context.Context, group string, leases []byte) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpSaveGroupLeases, Consumer: group, Leases: leases})
	return err
}

func (st raftStore) GroupLeases() (map[string][]byte, error) {
	out := map[string][]byte{}
	st.Read(func(s *cluster.MetaState) {
		for g, l := range s.Groups {
			out[g] = slices.Clone(l)
		}
	})
	return out, nil
}

// AllocateProducerIDs commits an OpAllocateProducerIDs. propose may send
// the command again when an answer was lost after it committed: the block
// of the first application is then wasted, never handed out, and the ids
// stay unique.
func (st raftStore) AllocateProducerIDs(ctx context.Context, count int64) (int64, error) {
	res, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpAllocateProducerIDs, ProducerIDs: count})
	if err != nil {
		return 0, err
	}
	if res.FirstProducerID == nil {
		return 0, fmt.Errorf("clusternode: reserve producer ids: no first id in the answer")
	}
	return *res.FirstProducerID, nil
}

// SaveTransaction commits an OpSaveTransaction. propose may send the
// command again when an answer was lost after it committed: the second
// application finds the state saved already and changes nothing.
func (st raftStore) SaveTransaction(ctx context.Context, expect cluster.TxnStamp, t cluster.Transaction) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpSaveTransaction, Transaction: &t, Expect: &expect})
	return err
}

// DeleteTransaction commits an OpDeleteTransaction.
func (st raftStore) DeleteTransaction(ctx context.Context, id string, expect cluster.TxnStamp) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpDeleteTransaction, TransactionalID: id, Expect: &expect})
	return err
}

// Transaction is id's state in this node's copy.
func (st raftStore) Transaction(id string) (cluster.Transaction, bool, error) {
	var t cluster.Transaction
	var ok bool
	st.Read(func(s *cluster.MetaState) {
		t, ok = s.Transactions[id]
		t.Partitions, t.Groups, t.Offsets = slices.Clone(t.Partitions), slices.Clone(t.Groups), slices.Clone(t.Offsets)
	})
	return t, ok, nil
}

// Transactions is every transactional id's state in this node's copy, by
// id.
func (st raftStore) Transactions() ([]cluster.Transaction, error) {
	var out []cluster.Transaction
	st.Read(func(s *cluster.MetaState) {
		for _, t := range s.Transactions {
			t.Partitions, t.Groups, t.Offsets = slices.Clone(t.Partitions), slices.Clone(t.Groups), slices.Clone(t.Offsets)
			out = append(out, t)
		}
	})
	slices.SortFunc(out, func(a, b cluster.Transaction) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (st raftStore) SetHealing(ctx context.Context, on bool, summary, reason string) (bool, error) {
	res, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpSetHealing, By: cluster.ByOperator, Reason: reason, Automatic: &on})
	if err != nil {
		return false, fmt.Errorf("clusternode: switch automatic healing: %w", err)
	}
	// Only a switch that changed something is journaled.
	return res.Journal != nil, nil
}

// CreateTopic is checked against this node's copy first, so that the
// caller gets the full refusal even when the proposal travels to another
// node; the state machine checks it again where it is applied.
func (st raftStore) CreateTopic(ctx context.Context, name string, partitions, replicationFactor int, config map[string]string) error {
	var refusal error
	st.Read(func(s *cluster.MetaState) {
		if t, ok := s.Meta.Topics[name]; ok {
			refusal = &cluster.TopicExistsError{Topic: name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor,
				SameSettings: t.PartitionCount == partitions && t.ReplicationFactor == replicationFactor && maps.Equal(t.Config, config)}
			return
		}
		for other := range s.Meta.Topics {
			if other != name && strings.EqualFold(other, name) {
				refusal = &cluster.TopicNameConflictError{Topic: name, Existing: other}
			}
		}
	})
	if refusal != nil {
		return refusal
	}
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpCreateTopic, Topic: name, Partitions: partitions, ReplicationFactor: replicationFactor,
		Config: config})
	return err
}

// AddPartitions is checked by the state machine where it is applied; a
// refusal comes back as the command's error.
func (st raftStore) AddPartitions(ctx context.Context, name string, partitions int) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpAddPartitions, Topic: name, Partitions: partitions})
	return err
}

func (st raftStore) AlterTopicConfig(ctx context.Context, name string, set map[string]string, remove []string) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpAlterConfig, Topic: name, Config: set, DeleteConfig: remove})
	return err
}

func (st raftStore) DeleteTopic(ctx context.Context, name string) (int, error) {
	res, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpDeleteTopic, Topic: name})
	return res.Count, err
}

func (st raftStore) TopicFilesRemoved(ctx context.Context, name string, broker int) error {
	_, err := st.propose(ctx, cluster.MetaCommand{Op: cluster.OpTopicFilesRemoved, Topic: name, Broker: broker})
	return err
}
