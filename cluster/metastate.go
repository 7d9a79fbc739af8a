package cluster

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// This file is the cluster's metadata as a replicated state machine: what
// a consensus group (the server's cluster mode runs hashicorp/raft) holds
// when brokers are processes on separate machines. MetaState is the state,
// MetaCommand one change, and MetaState.Apply the one function that
// decides it — pure, deterministic, with no clock and no I/O, so that every
// node applying the same commands in the same order holds the same state.
// The leadership rules are the in-process cluster's own (transitions.go);
// the metadata is checked by the same validation as cluster.meta.

// MetaJournalKeep is how many journal entries a MetaState keeps: the
// oldest are dropped beyond it, so that the state (and every snapshot of
// it) stays bounded.
const MetaJournalKeep = 4096

// NodeInfo is one broker process of a cluster-mode cluster.
type NodeInfo struct {
	// ID is the broker id, from 1.
	ID int `json:"id"`
	// Addr is its internal address (Raft and replication), host:port.
	Addr string `json:"addr"`
	// HTTPAddr is its client-facing HTTP address, host:port.
	HTTPAddr string `json:"http_addr"`
	// KafkaAddr is the address its Kafka listener advertises, host:port;
	// empty when the node serves no Kafka listener. Snapshots written
	// before the field existed have none, and one without it is encoded
	// as they were.
	KafkaAddr string `json:"kafka_addr,omitempty"`
}

// validate checks what every registered node needs: an id from 1, an
// internal address, and a Kafka address that is host:port when there is
// one.
func (n NodeInfo) validate() error {
	switch {
	case n.ID < 1:
		return fmt.Errorf("cluster: node %d: %w", n.ID, ErrInvalidBrokerID)
	case n.Addr == "":
		return fmt.Errorf("cluster: node %d: no internal address: %w", n.ID, ErrInvalidArgument)
	case n.KafkaAddr != "" && !hostPort(n.KafkaAddr):
		return fmt.Errorf("cluster: node %d: Kafka address %q is not host:port: %w", n.ID, n.KafkaAddr, ErrInvalidArgument)
	}
	return nil
}

// hostPort reports whether s is host:port with a host and a port from 1
// to 65535.
func hostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p >= 1 && p <= 65535
}

// OffsetKey names one committed consumer offset.
type OffsetKey struct {
	Consumer  string `json:"consumer"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}

// MetaState is everything a cluster-mode cluster agrees on: the metadata
// cluster.meta holds in one process (brokers, topics, placement, leaders,
// leader epochs, active sets), each broker's addresses, the committed
// consumer offsets and the journal. The zero value is an empty cluster.
// A MetaState is not safe for concurrent use; its owner serialises Apply.
type MetaState struct {
	Meta    Metadata
	Nodes   map[int]NodeInfo
	Offsets map[OffsetKey]uint64
	// Journal holds the last MetaJournalKeep entries, oldest first; their
	// Offset fields count from the first entry ever applied.
	Journal []JournalEntry
	// Healing is automatic healing as the operator last switched it
	// (OpSetHealing): false, the controller changes no metadata; true, it
	// acts after its node's failover delay. Nil, never switched: each
	// node's configured failover delay decides, zero meaning off.
	Healing *bool
	// Deleting holds the topics deleted whose files some brokers have not
	// yet removed: each name with those brokers, ascending, and the offset
	// of the deletion's intent in the journal. Such a name cannot be
	// created again until every broker has removed its files
	// (OpTopicFilesRemoved), so that no broker ever serves a new topic from
	// an old one's records.
	Deleting map[string]TopicDeletion
	// Groups holds each consumer group's saved leases, by group id
	// (OpSaveGroupLeases): opaque here, read back by the group
	// coordinator that starts next.
	Groups map[string][]byte
	// NextProducerID is the first producer id no block has reserved yet
	// (OpAllocateProducerIDs); it only grows, so that no id is handed out
	// twice.
	NextProducerID int64
	// Transactions holds each transactional id's state, by id
	// (OpSaveTransaction, OpDeleteTransaction): the transaction
	// coordinator's (transactions.go).
	Transactions map[string]Transaction
}

// TopicDeletion is a deleted topic whose files are not all removed yet.
type TopicDeletion struct {
	// Brokers are the brokers that still hold files of it, ascending.
	Brokers []int `json:"brokers"`
	// Intent is the journal offset of the deletion's intent.
	Intent uint64 `json:"intent"`
	// Offsets is how many committed consumer offsets the deletion dropped.
	Offsets int `json:"offsets"`
}

// MetaOp names the kind of a MetaCommand.
type MetaOp string

// The commands a MetaState applies.
const (
	// OpRegisterNode adds a broker (or updates its addresses): Node.
	OpRegisterNode MetaOp = "register-node"
	// OpCreateTopic places a new topic over the registered brokers:
	// Topic, Partitions, ReplicationFactor, and its configuration
	// overrides in Config.
	OpCreateTopic MetaOp = "create-topic"
	// OpAlterConfig changes a topic's configuration overrides: the keys
	// of Config take their values, those of DeleteConfig go back to the
	// default (topic.AlterConfigOverrides), checked as a whole.
	OpAlterConfig MetaOp = "alter-config"
	// OpAddPartitions grows Topic to Partitions partitions, the new ones
	// placed over the registered brokers as a creation places them
	// (GrownTopicMetadata).
	OpAddPartitions MetaOp = "add-partitions"
	// OpDeleteTopic removes a topic and its consumer offsets: Topic. The
	// brokers that held its replicas remove their files next, each
	// telling so with OpTopicFilesRemoved.
	OpDeleteTopic MetaOp = "delete-topic"
	// OpTopicFilesRemoved says that Broker removed the files of the
	// deleted Topic; once every broker has, the deletion is done and the
	// name free again.
	OpTopicFilesRemoved MetaOp = "topic-files-removed"
	// OpFailover makes Broker the leader of Topic/Partition at the next
	// epoch; the old leader and the replicas in Leave leave the active set.
	OpFailover MetaOp = "failover"
	// OpMoveLeader makes Broker, an active follower, the leader at the next
	// epoch; the old leader stays active.
	OpMoveLeader MetaOp = "move-leader"
	// OpDeactivate takes follower Broker out of the active set.
	OpDeactivate MetaOp = "deactivate"
	// OpActivate brings follower Broker, recovered to its leader's log,
	// back into the active set.
	OpActivate MetaOp = "activate"
	// OpCommitOffset commits Consumer's Offset on Topic/Partition; never
	// backwards.
	OpCommitOffset MetaOp = "commit-offset"
	// OpResetOffset sets Consumer's Offset, backwards too.
	OpResetOffset MetaOp = "reset-offset"
	// OpDeleteOffsets removes every offset of Consumer (a consumer group
	// deleted); a consumer without offsets is no error.
	OpDeleteOffsets MetaOp = "delete-offsets"
	// OpDeleteOffset removes Consumer's offset on Topic/Partition (Kafka's
	// OffsetDelete); an offset never committed is no error (Count 0).
	OpDeleteOffset MetaOp = "delete-offset"
	// OpSaveGroupLeases replaces consumer group Consumer's saved leases
	// with Leases (at most MaxGroupLeases bytes); none removes them.
	OpSaveGroupLeases MetaOp = "save-group-leases"
	// OpJournal appends Entry to the journal and changes nothing else.
	OpJournal MetaOp = "journal"
	// OpSetHealing switches automatic healing (MetaState.Healing) to
	// Automatic, journaled as a healing entry with Reason; switching it
	// to what it already is changes nothing and journals nothing.
	OpSetHealing MetaOp = "set-healing"
	// OpAllocateProducerIDs reserves ProducerIDs producer ids (1 to
	// MaxProducerIDCount) from NextProducerID and answers the first in
	// FirstProducerID. Nothing is journaled.
	OpAllocateProducerIDs MetaOp = "allocate-producer-ids"
	// OpSaveTransaction replaces Transaction's state (by its ID) if the
	// state stored is the one Expect names (none: the id has none);
	// Transaction.Version must be Expect's plus one. A save of what is
	// stored already changes nothing. Nothing is journaled.
	OpSaveTransaction MetaOp = "save-transaction"
	// OpDeleteTransaction removes TransactionalID's state if it is the
	// one Expect names; one no longer stored is no error. Nothing is
	// journaled.
	OpDeleteTransaction MetaOp = "delete-transaction"
)

// MetaCommand is one change to a MetaState. Which fields count depends on
// Op (see the constants). Time is the proposer's clock: the journal entry a
// command writes is stamped with it, so that every node writes the same.
type MetaCommand struct {
	Op   MetaOp    `json:"op"`
	Time time.Time `json:"time"`
	// By and Reason go to the journal: ByOperator or ByController, and the
	// controller's reason. An empty By is ByOperator; an author the
	// journal does not know is refused.
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`

	Node              *NodeInfo `json:"node,omitempty"`
	Topic             string    `json:"topic,omitempty"`
	Partition         int       `json:"partition,omitempty"`
	Partitions        int       `json:"partitions,omitempty"`
	ReplicationFactor int       `json:"replication_factor,omitempty"`
	// Broker is the new leader (failover, move), or the follower
	// deactivated or activated.
	Broker int   `json:"broker,omitempty"`
	Leave  []int `json:"leave,omitempty"`
	// Epoch is the partition's leader epoch the command was decided on; a
	// partition command on any other epoch is refused (ErrStaleAction).
	Epoch uint64 `json:"epoch,omitempty"`
	// Quarantine names the file an activation's recovery kept its cut
	// records in, for the journal.
	Quarantine string `json:"quarantine,omitempty"`
	// Candidates are the followers a failover compared, for the journal
	// (JournalEntry.Candidates).
	Candidates []JournalCandidate `json:"candidates,omitempty"`
	// Config is a new topic's configuration overrides (create), or the
	// keys an alter-config sets; DeleteConfig the keys it removes.
	Config       map[string]string `json:"config,omitempty"`
	DeleteConfig []string          `json:"delete_config,omitempty"`
	Consumer     string            `json:"consumer,omitempty"`
	// Leases is what a save-group-leases command saves.
	Leases []byte        `json:"leases,omitempty"`
	Offset uint64        `json:"offset,omitempty"`
	Entry  *JournalEntry `json:"entry,omitempty"`
	// Automatic is what a set-healing command switches automatic
	// healing to.
	Automatic *bool `json:"automatic,omitempty"`
	// Summary, when set, is what the journal entry of a partition
	// command says (the operation's own words); Intent the offset of the
	// intent that entry is the outcome of; Cut what a recovery cut.
	Summary string      `json:"summary,omitempty"`
	Intent  *uint64     `json:"intent,omitempty"`
	Cut     *JournalCut `json:"cut,omitempty"`
	// ProducerIDs is how many producer ids an allocate-producer-ids
	// command reserves.
	ProducerIDs int64 `json:"producer_ids,omitempty"`
	// Transaction is the state a save-transaction command writes;
	// TransactionalID the id a delete-transaction command forgets;
	// Expect the stored state either was decided on (nil: none).
	Transaction     *Transaction `json:"transaction,omitempty"`
	TransactionalID string       `json:"transactional_id,omitempty"`
	Expect          *TxnStamp    `json:"expect,omitempty"`
}

// MetaResult is what an applied command did.
type MetaResult struct {
	// Summary is one line for people.
	Summary string `json:"summary"`
	// Partition is the partition's metadata after a partition command.
	Partition *PartitionMetadata `json:"partition,omitempty"`
	// Journal is the offset a journal command's entry got, so that an
	// outcome can name its intent.
	Journal *uint64 `json:"journal,omitempty"`
	// Count is how many consumer offsets a deletion (of a topic, or of a
	// consumer's offsets) dropped.
	Count int `json:"count,omitempty"`
	// FirstProducerID is the first id of the block an
	// allocate-producer-ids command reserved.
	FirstProducerID *int64 `json:"first_producer_id,omitempty"`
}

// EncodeMetaCommand renders c as JSON, the form a Raft log entry holds.
func EncodeMetaCommand(c MetaCommand) ([]byte, error) { return json.Marshal(c) }

// ParseMetaCommand decodes one command: JSON with the fields of
// MetaCommand, no others, no trailing data. Whether the command is valid
// for a state is Apply's to decide.
func ParseMetaCommand(data []byte) (MetaCommand, error) {
	var c MetaCommand
	if err := strictJSON(data, &c); err != nil {
		return MetaCommand{}, fmt.Errorf("cluster: meta command: %w: %w", ErrInvalidArgument, err)
	}
	return c, nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// dec.More reports false before a stray ']' or '}', so it cannot tell
	// that the input ended: only io.EOF from the next token can.
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// Clone returns a deep copy of s.
func (s *MetaState) Clone() *MetaState {
	out := &MetaState{Meta: s.Meta.clone(), Nodes: make(map[int]NodeInfo, len(s.Nodes)),
		Offsets: make(map[OffsetKey]uint64, len(s.Offsets)), Journal: make([]JournalEntry, len(s.Journal))}
	for i, e := range s.Journal {
		out.Journal[i] = cloneEntry(e)
	}
	for k, v := range s.Nodes {
		out.Nodes[k] = v
	}
	for k, v := range s.Offsets {
		out.Offsets[k] = v
	}
	if s.Healing != nil {
		on := *s.Healing
		out.Healing = &on
	}
	out.Groups = cloneGroups(s.Groups)
	out.NextProducerID = s.NextProducerID
	out.Transactions = cloneTransactions(s.Transactions)
	if s.Deleting != nil {
		out.Deleting = make(map[string]TopicDeletion, len(s.Deleting))
		for name, d := range s.Deleting {
			d.Brokers = slices.Clone(d.Brokers)
			out.Deleting[name] = d
		}
	}
	return out
}

// JournalEnd is the offset the next journal entry will get.
func (s *MetaState) JournalEnd() uint64 {
	if len(s.Journal) == 0 {
		return 0
	}
	return s.Journal[len(s.Journal)-1].Offset + 1
}

// Partition returns one partition's metadata.
func (s *MetaState) Partition(topicName string, partition int) (PartitionMetadata, error) {
	t, ok := s.Meta.Topics[topicName]
	if !ok {
		return PartitionMetadata{}, fmt.Errorf("cluster: topic %q: %w", topicName, ErrUnknownTopic)
	}
	if partition < 0 || partition >= len(t.Partitions) {
		return PartitionMetadata{}, fmt.Errorf("cluster: topic %q has %d partition(s), no partition %d: %w", topicName, len(t.Partitions), partition, topic.ErrPartitionOutOfRange)
	}
	return t.Partitions[partition].clone(), nil
}

// Apply applies c to s. On error s is unchanged: the command was refused,
// and every node refuses it alike.
func (s *MetaState) Apply(c MetaCommand) (MetaResult, error) {
	if s.Meta.Topics == nil {
		s.Meta.Topics = map[string]TopicMetadata{}
	}
	if s.Meta.Brokers == nil {
		s.Meta.Brokers = []int{}
	}
	switch c.By {
	case "", ByOperator, ByController, ByStartup, ByRetention:
	default:
		// The journal entry it would write could never be encoded, and
		// neither could any snapshot after it.
		return MetaResult{}, fmt.Errorf("cluster: %s by %q: unknown author: %w", c.Op, c.By, ErrInvalidArgument)
	}
	if leadershipOp(c.Op) {
		return s.changePartition(c)
	}
	switch c.Op {
	case OpRegisterNode:
		return s.registerNode(c)
	case OpCreateTopic:
		return s.createTopic(c)
	case OpDeleteTopic:
		return s.deleteTopic(c)
	case OpTopicFilesRemoved:
		return s.topicFilesRemoved(c)
	case OpAlterConfig:
		return s.alterConfig(c)
	case OpAddPartitions:
		return s.addPartitions(c)
	case OpCommitOffset, OpResetOffset:
		return s.setOffset(c)
	case OpDeleteOffsets:
		return s.deleteOffsets(c)
	case OpDeleteOffset:
		return s.deleteOffset(c)
	case OpSaveGroupLeases:
		return s.saveGroupLeases(c)
	case OpSetHealing:
		return s.setHealing(c)
	case OpAllocateProducerIDs:
		return s.allocateProducerIDs(c)
	case OpSaveTransaction:
		return s.saveTransaction(c)
	case OpDeleteTransaction:
		return s.deleteTransaction(c)
	case OpJournal:
		if c.Entry == nil {
			return MetaResult{}, fmt.Errorf("cluster: journal command without an entry: %w", ErrInvalidArgument)
		}
		if err := c.Entry.validate(); err != nil {
			return MetaResult{}, err
		}
		e := *c.Entry
		off := s.JournalEnd()
		s.journal(c, e)
		return MetaResult{Summary: e.Summary, Journal: &off}, nil
	default:
		return MetaResult{}, fmt.Errorf("cluster: unknown meta command %q: %w", c.Op, ErrInvalidArgument)
	}
}

// journal appends a copy of e, stamped with the command's time and the
// next offset, and drops the oldest entries beyond MetaJournalKeep. The
// copy shares nothing with e, so neither the command nor the result can
// change the state afterwards.
func (s *MetaState) journal(c MetaCommand, e JournalEntry) {
	e = cloneEntry(e)
	e.Offset, e.Time = s.JournalEnd(), c.Time
	s.Journal = append(s.Journal, e)
	if over := len(s.Journal) - MetaJournalKeep; over > 0 {
		s.Journal = slices.Delete(s.Journal, 0, over)
	}
}

// cloneEntry returns a deep copy of e: its pointers are its own.
func cloneEntry(e JournalEntry) JournalEntry {
	if e.Intent != nil {
		intent := *e.Intent
		e.Intent = &intent
	}
	if e.Before != nil {
		before := e.Before.clone()
		e.Before = &before
	}
	if e.After != nil {
		after := e.After.clone()
		e.After = &after
	}
	e.ConfigBefore, e.ConfigAfter = maps.Clone(e.ConfigBefore), maps.Clone(e.ConfigAfter)
	return e
}

func by(c MetaCommand) string {
	if c.By == "" {
		return ByOperator
	}
	return c.By
}

func (s *MetaState) registerNode(c MetaCommand) (MetaResult, error) {
	n := c.Node
	if n == nil {
		return MetaResult{}, fmt.Errorf("cluster: register node: no node: %w", ErrInvalidArgument)
	}
	if err := n.validate(); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: register: %w", err)
	}
	if s.Nodes == nil {
		s.Nodes = map[int]NodeInfo{}
	}
	old, known := s.Nodes[n.ID]
	if known && old == *n {
		return MetaResult{Summary: fmt.Sprintf("broker %d already registered at %s", n.ID, n.Addr)}, nil
	}
	if holder := s.nodeAt(n.Addr); holder != 0 && holder != n.ID {
		return MetaResult{}, &AddrTakenError{Node: n.ID, Addr: n.Addr, Holder: holder}
	}
	s.Nodes[n.ID] = *n
	if !slices.Contains(s.Meta.Brokers, n.ID) {
		s.Meta.Brokers = append(s.Meta.Brokers, n.ID)
		slices.Sort(s.Meta.Brokers)
	}
	clients := n.HTTPAddr
	if n.KafkaAddr != "" {
		clients += ", Kafka: " + n.KafkaAddr
	}
	summary := fmt.Sprintf("broker %d joins the cluster at %s (clients: %s); brokers %v", n.ID, n.Addr, clients, s.Meta.Brokers)
	if known {
		summary = fmt.Sprintf("broker %d moves from %s to %s (clients: %s)", n.ID, old.Addr, n.Addr, clients)
	}
	s.journal(c, JournalEntry{Event: EventBrokerStart, Phase: PhaseDone, By: by(c), Broker: n.ID, Summary: summary})
	return MetaResult{Summary: summary}, nil
}

// nodeAt is the lowest id of a node registered at internal address addr,
// 0 when none is: the same answer on every node, whatever the map's order.
func (s *MetaState) nodeAt(addr string) int {
	holder := 0
	for id, info := range s.Nodes {
		if info.Addr == addr && (holder == 0 || id < holder) {
			holder = id
		}
	}
	return holder
}

func (s *MetaState) createTopic(c MetaCommand) (MetaResult, error) {
	name := c.Topic
	if err := topic.ValidateName(name); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: create topic: %w", err)
	}
	if c.Partitions < 1 || c.Partitions > topic.MaxPartitionCount {
		return MetaResult{}, fmt.Errorf("cluster: create topic %q: %d partitions, want 1..%d: %w", name, c.Partitions, topic.MaxPartitionCount, ErrInvalidPartitionCount)
	}
	overrides, err := topic.ParseConfigOverrides(c.Config)
	if err != nil {
		return MetaResult{}, fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	if t, ok := s.Meta.Topics[name]; ok {
		return MetaResult{}, &TopicExistsError{Topic: name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor,
			SameSettings: t.PartitionCount == c.Partitions && t.ReplicationFactor == c.ReplicationFactor && maps.Equal(t.Config, overrides)}
	}
	if d, ok := s.Deleting[name]; ok {
		return MetaResult{}, &DeletionPendingError{Topic: name, Brokers: slices.Clone(d.Brokers)}
	}
	for other := range s.Meta.Topics {
		if strings.EqualFold(other, name) {
			return MetaResult{}, &TopicNameConflictError{Topic: name, Existing: other}
		}
	}
	tm, err := NewTopicMetadata(s.Meta.Brokers, c.Partitions, c.ReplicationFactor)
	if err != nil {
		return MetaResult{}, fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	tm.Config = overrides
	next := s.Meta.clone()
	next.Topics[name] = tm
	if err := next.validate(); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	s.Meta = next
	summary := fmt.Sprintf("topic %q created: %d partitions, replication factor %d", name, c.Partitions, c.ReplicationFactor)
	if len(overrides) > 0 {
		summary += ", configuration overrides " + describeOverrides(overrides)
	}
	return MetaResult{Summary: summary}, nil
}

// addPartitions grows a topic by the rule both modes share
// (GrownTopicMetadata). A topic whose deletion committed is unknown, its
// files removed or not.
func (s *MetaState) addPartitions(c MetaCommand) (MetaResult, error) {
	tm, ok := s.Meta.Topics[c.Topic]
	if !ok {
		if d, deleting := s.Deleting[c.Topic]; deleting {
			return MetaResult{}, fmt.Errorf("cluster: add partitions to topic %q: deleted, brokers %v still removing its files: %w", c.Topic, d.Brokers, ErrUnknownTopic)
		}
		return MetaResult{}, fmt.Errorf("cluster: add partitions to topic %q: %w", c.Topic, ErrUnknownTopic)
	}
	grown, err := GrownTopicMetadata(tm, s.Meta.Brokers, c.Partitions)
	if err != nil {
		return MetaResult{}, fmt.Errorf("cluster: add partitions to topic %q: %w", c.Topic, err)
	}
	next := s.Meta.clone()
	next.Topics[c.Topic] = grown
	if err := next.validate(); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: add partitions to topic %q: %w", c.Topic, err)
	}
	s.Meta = next
	return MetaResult{Summary: fmt.Sprintf("topic %q grown from %d to %d partitions", c.Topic, len(tm.Partitions), c.Partitions)}, nil
}

// alterConfig changes a topic's configuration overrides, journaled with
// the overrides before and after. A change that changes nothing is
// applied without a journal entry.
func (s *MetaState) alterConfig(c MetaCommand) (MetaResult, error) {
	t, ok := s.Meta.Topics[c.Topic]
	if !ok {
		return MetaResult{}, fmt.Errorf("cluster: alter config of topic %q: %w", c.Topic, ErrUnknownTopic)
	}
	after, err := topic.AlterConfigOverrides(t.Config, c.Config, c.DeleteConfig)
	if err != nil {
		return MetaResult{}, fmt.Errorf("cluster: alter config of topic %q: %w", c.Topic, err)
	}
	if maps.Equal(t.Config, after) {
		return MetaResult{Summary: fmt.Sprintf("%s: configuration overrides unchanged: %s", c.Topic, describeOverrides(after))}, nil
	}
	next := s.Meta.clone()
	nt := next.Topics[c.Topic]
	nt.Config = after
	next.Topics[c.Topic] = nt
	if err := next.validate(); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: alter config of topic %q: %w", c.Topic, err)
	}
	summary := describeConfigChange(c.Topic, t.Config, after)
	s.journal(c, JournalEntry{Event: EventAlterConfig, Phase: PhaseDone, By: by(c), Topic: c.Topic, Summary: summary, Reason: c.Reason,
		ConfigBefore: maps.Clone(t.Config), ConfigAfter: maps.Clone(after)})
	s.Meta = next
	return MetaResult{Summary: summary}, nil
}

func (s *MetaState) deleteTopic(c MetaCommand) (MetaResult, error) {
	tm, ok := s.Meta.Topics[c.Topic]
	if !ok {
		return MetaResult{}, fmt.Errorf("cluster: delete topic %q: %w", c.Topic, ErrUnknownTopic)
	}
	next := s.Meta.clone()
	delete(next.Topics, c.Topic)
	s.Meta = next
	dropped := 0
	for k := range s.Offsets {
		if k.Topic == c.Topic {
			delete(s.Offsets, k)
			dropped++
		}
	}
	holders := tm.Holders()
	intent := s.JournalEnd()
	summary := describeTopic(c.Topic, tm)
	s.journal(c, JournalEntry{Event: EventDeleteTopic, Phase: PhaseIntent, By: by(c), Topic: c.Topic, Summary: summary, Reason: c.Reason})
	if s.Deleting == nil {
		s.Deleting = map[string]TopicDeletion{}
	}
	s.Deleting[c.Topic] = TopicDeletion{Brokers: holders, Intent: intent, Offsets: dropped}
	return MetaResult{Summary: fmt.Sprintf("topic %q deleted with %d committed consumer offset(s); brokers %v remove its files", c.Topic, dropped, holders),
		Journal: &intent, Count: dropped}, nil
}

// topicFilesRemoved records that c.Broker removed the files of the
// deleted c.Topic; the last one journals the deletion's outcome and frees
// the name. A broker that has nothing left to remove changes nothing.
func (s *MetaState) topicFilesRemoved(c MetaCommand) (MetaResult, error) {
	d, ok := s.Deleting[c.Topic]
	if !ok || !slices.Contains(d.Brokers, c.Broker) {
		return MetaResult{Summary: fmt.Sprintf("%s: broker %d holds no files of a deleted topic", c.Topic, c.Broker)}, nil
	}
	d.Brokers = slices.DeleteFunc(slices.Clone(d.Brokers), func(id int) bool { return id == c.Broker })
	if len(d.Brokers) > 0 {
		s.Deleting[c.Topic] = d
		return MetaResult{Summary: fmt.Sprintf("%s: broker %d removed its files; brokers %v have yet to", c.Topic, c.Broker, d.Brokers)}, nil
	}
	delete(s.Deleting, c.Topic)
	intent := d.Intent
	summary := fmt.Sprintf("%s: replica directories removed from every broker, %d consumer offset(s) removed", c.Topic, d.Offsets)
	s.journal(c, JournalEntry{Event: EventDeleteTopic, Phase: PhaseDone, By: by(c), Topic: c.Topic, Summary: summary, Intent: &intent})
	return MetaResult{Summary: summary}, nil
}

// leadershipOp reports whether op is a change of a partition's leadership
// or active set, which MetaState.changePartition decides.
func leadershipOp(op MetaOp) bool {
	switch op {
	case OpFailover, OpMoveLeader, OpDeactivate, OpActivate:
		return true
	}
	return false
}

// changePartition applies the four leadership commands, each refused
// unless it was decided on the partition's current epoch and its broker
// plays the part the command needs, and the controller's while automatic
// healing is switched off.
func (s *MetaState) changePartition(c MetaCommand) (MetaResult, error) {
	before, err := s.Partition(c.Topic, c.Partition)
	if err != nil {
		return MetaResult{}, err
	}
	if c.By == ByController && s.Healing != nil && !*s.Healing {
		return MetaResult{}, fmt.Errorf("cluster: %s %s/%d: %w", c.Op, c.Topic, c.Partition, ErrHealingOff)
	}
	where := fmt.Sprintf("%s/%d", c.Topic, c.Partition)
	if c.Epoch != before.LeaderEpoch {
		return MetaResult{}, fmt.Errorf("cluster: %s %s: decided on epoch %d, the partition is at %d: %w", c.Op, where, c.Epoch, before.LeaderEpoch, ErrStaleAction)
	}
	if !slices.Contains(before.Replicas, c.Broker) {
		return MetaResult{}, fmt.Errorf("cluster: %s %s: broker %d: %w", c.Op, where, c.Broker, ErrNotAssigned)
	}
	if c.Broker == before.Leader {
		return MetaResult{}, fmt.Errorf("cluster: %s %s: broker %d: %w", c.Op, where, c.Broker, ErrReplicaIsLeader)
	}
	active := slices.Contains(before.Active, c.Broker)
	var next PartitionMetadata
	var ev JournalEvent
	var summary string
	switch c.Op {
	case OpFailover:
		if !active {
			return MetaResult{}, fmt.Errorf("cluster: failover %s: broker %d: %w", where, c.Broker, ErrReplicaInactive)
		}
		leave := append([]int{before.Leader}, c.Leave...)
		if slices.Contains(leave, c.Broker) {
			return MetaResult{}, fmt.Errorf("cluster: failover %s: the new leader %d cannot leave the active set: %w", where, c.Broker, ErrInvalidArgument)
		}
		next, ev = before.withLeader(c.Broker, leave), EventFailover
		summary = fmt.Sprintf("%s: leader %d -> %d (epoch %d); leaving the active set: %v", where, before.Leader, c.Broker, next.LeaderEpoch, sortedCopy(leave))
	case OpMoveLeader:
		if !active {
			return MetaResult{}, fmt.Errorf("cluster: move leader %s: broker %d: %w", where, c.Broker, ErrReplicaInactive)
		}
		next, ev = before.withLeader(c.Broker, nil), EventMoveLeader
		summary = fmt.Sprintf("%s: leader %d -> %d (epoch %d)", where, before.Leader, c.Broker, next.LeaderEpoch)
	case OpDeactivate:
		if !active {
			return MetaResult{}, fmt.Errorf("cluster: deactivate %s: broker %d: %w", where, c.Broker, ErrReplicaInactive)
		}
		next, ev = before.withoutActive(c.Broker), EventDeactivate
		summary = fmt.Sprintf("%s: follower %d leaves the active set %v -> %v", where, c.Broker, before.Active, next.Active)
	case OpActivate:
		if active {
			return MetaResult{}, fmt.Errorf("cluster: activate %s: broker %d: %w", where, c.Broker, ErrReplicaActive)
		}
		next, ev = before.withActive(c.Broker), EventRecover
		summary = fmt.Sprintf("%s: broker %d rejoins the active set %v -> %v", where, c.Broker, before.Active, next.Active)
	}
	meta := s.Meta.clone()
	t := meta.Topics[c.Topic]
	t.Partitions[c.Partition] = next
	meta.Topics[c.Topic] = t
	if err := meta.validate(); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: %s %s: %w", c.Op, where, err)
	}
	s.Meta = meta
	b, a := before, next.clone()
	// The entry names the broker acted on, as in one process: the failed
	// leader of a failover, the new leader of a move, the follower of a
	// deactivation or a return.
	acted := c.Broker
	if c.Op == OpFailover {
		acted = before.Leader
	}
	var cands []JournalCandidate
	if c.Op == OpFailover {
		cands = c.Candidates
	}
	if c.Summary != "" {
		summary = c.Summary
	}
	var intent *uint64
	if c.Intent != nil {
		off := *c.Intent
		intent = &off
	}
	var cut *JournalCut
	if c.Cut != nil && c.Op == OpActivate {
		cc := *c.Cut
		cut = &cc
	}
	s.journal(c, JournalEntry{Event: ev, Phase: PhaseDone, By: by(c), Topic: c.Topic, Partition: c.Partition, Broker: acted,
		Summary: summary, Reason: c.Reason, Before: &b, After: &a, Quarantine: c.Quarantine, Candidates: cands, Intent: intent, Cut: cut})
	return MetaResult{Summary: summary, Partition: &a}, nil
}

func sortedCopy(ids []int) []int {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *MetaState) setOffset(c MetaCommand) (MetaResult, error) {
	if err := topic.ValidateName(c.Consumer); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: %s: consumer id: %w", c.Op, err)
	}
	if _, err := s.Partition(c.Topic, c.Partition); err != nil {
		return MetaResult{}, err
	}
	k := OffsetKey{Consumer: c.Consumer, Topic: c.Topic, Partition: c.Partition}
	if old, ok := s.Offsets[k]; ok && c.Op == OpCommitOffset && c.Offset < old {
		return MetaResult{}, &client.OffsetRegressionError{ConsumerID: c.Consumer, Topic: c.Topic, Partition: c.Partition, Committed: old, Requested: c.Offset}
	}
	if s.Offsets == nil {
		s.Offsets = map[OffsetKey]uint64{}
	}
	s.Offsets[k] = c.Offset
	return MetaResult{Summary: fmt.Sprintf("consumer %q at offset %d of %s/%d", c.Consumer, c.Offset, c.Topic, c.Partition)}, nil
}

func (s *MetaState) deleteOffsets(c MetaCommand) (MetaResult, error) {
	if err := topic.ValidateName(c.Consumer); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: %s: consumer id: %w", c.Op, err)
	}
	n := 0
	for k := range s.Offsets {
		if k.Consumer == c.Consumer {
			delete(s.Offsets, k)
			n++
		}
	}
	return MetaResult{Summary: fmt.Sprintf("consumer %q: %d offset(s) deleted", c.Consumer, n), Count: n}, nil
}

func (s *MetaState) deleteOffset(c MetaCommand) (MetaResult, error) {
	if err := topic.ValidateName(c.Consumer); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: %s: consumer id: %w", c.Op, err)
	}
	if err := topic.ValidateName(c.Topic); err != nil {
		return MetaResult{}, fmt.Errorf("cluster: %s: topic: %w", c.Op, err)
	}
	if c.Partition < 0 {
		return MetaResult{}, fmt.Errorf("cluster: %s: partition %d: %w", c.Op, c.Partition, topic.ErrPartitionOutOfRange)
	}
	k := OffsetKey{Consumer: c.Consumer, Topic: c.Topic, Partition: c.Partition}
	if _, ok := s.Offsets[k]; !ok {
		return MetaResult{Summary: fmt.Sprintf("consumer %q: no offset of %s/%d to delete", c.Consumer, c.Topic, c.Partition)}, nil
	}
	delete(s.Offsets, k)
	return MetaResult{Summary: fmt.Sprintf("consumer %q: offset of %s/%d deleted", c.Consumer, c.Topic, c.Partition), Count: 1}, nil
}

// HealingSummary is what a healing entry says switching automatic
// healing on or off means: off, the controller changes no metadata; on,
// it acts after the failover delay in force where it runs.
func HealingSummary(on bool) string {
	if on {
		return "automatic healing on: the controller fails over, shrinks active sets and recovers after its failover delay"
	}
	return "automatic healing off: the controller changes no metadata: failover, shrinking the active set, recovery and leader moves are the operator's"
}

// setHealing switches automatic healing, journaled as the operator's
// healing entry with its reason. Switching it to what it already is
// changes nothing and journals nothing.
func (s *MetaState) setHealing(c MetaCommand) (MetaResult, error) {
	if c.Automatic == nil {
		return MetaResult{}, fmt.Errorf("cluster: set healing: automatic is required: %w", ErrInvalidArgument)
	}
	on := *c.Automatic
	summary := HealingSummary(on)
	if s.Healing != nil && *s.Healing == on {
		return MetaResult{Summary: "unchanged: " + summary}, nil
	}
	state, switched := on, on // the state and its journal entry share nothing
	s.Healing = &state
	entry := JournalEntry{Event: EventHealing, Phase: PhaseDone, By: by(c), Summary: summary, Reason: c.Reason, Automatic: &switched}
	at := s.JournalEnd()
	s.journal(c, entry)
	// Journal set says it changed: an unchanged switch journals nothing.
	return MetaResult{Summary: summary, Journal: &at}, nil
}

// metaStateVersion is the version of EncodeMetaState's form.
const metaStateVersion = 1

// metaStateJSON is a snapshot's form. The metadata is cluster.meta's own
// encoding, read back by its one parser.
type metaStateJSON struct {
	Version int             `json:"version"`
	Meta    json.RawMessage `json:"meta"`
	Nodes   []NodeInfo      `json:"nodes"`
	Offsets []offsetJSON    `json:"offsets"`
	Journal []journalJSON   `json:"journal"`
	// Healing is MetaState.Healing; a snapshot written before the field
	// existed has none, and one of a state never switched is encoded as
	// they were.
	Healing *bool `json:"healing,omitempty"`
	// Deleting is MetaState.Deleting, by name; absent when no deletion is
	// unfinished, as in snapshots written before the field existed.
	Deleting map[string]TopicDeletion `json:"deleting,omitempty"`
	// Groups is MetaState.Groups; absent when no group saved leases, as
	// in snapshots written before the field existed.
	Groups map[string][]byte `json:"groups,omitempty"`
	// NextProducerID is MetaState.NextProducerID; absent while no producer
	// id was reserved, as in snapshots written before the field existed.
	NextProducerID int64 `json:"next_producer_id,omitempty"`
	// Transactions is MetaState.Transactions, by id; absent while no
	// transactional id has a state, as in snapshots written before the
	// field existed.
	Transactions []Transaction `json:"transactions,omitempty"`
}

type offsetJSON struct {
	OffsetKey
	Offset uint64 `json:"offset"`
}

type journalJSON struct {
	Offset uint64          `json:"offset"`
	Time   time.Time       `json:"time"`
	Entry  json.RawMessage `json:"entry"`
}

// EncodeMetaState renders s as one JSON document: a Raft snapshot.
func EncodeMetaState(s *MetaState) ([]byte, error) {
	meta, err := EncodeClusterMeta(s.Meta.clone())
	if err != nil {
		return nil, err
	}
	out := metaStateJSON{Version: metaStateVersion, Meta: meta, Nodes: []NodeInfo{}, Offsets: []offsetJSON{}, Journal: []journalJSON{},
		Healing: s.Healing, Deleting: s.Deleting, Groups: s.Groups, NextProducerID: s.NextProducerID}
	if len(s.Transactions) > 0 {
		out.Transactions = sortedTransactions(s.Transactions)
	}
	for _, id := range sortedKeys(s.Nodes) {
		out.Nodes = append(out.Nodes, s.Nodes[id])
	}
	for k, v := range s.Offsets {
		out.Offsets = append(out.Offsets, offsetJSON{k, v})
	}
	// A total order (no two keys compare equal), so that map order never
	// shows in the encoding.
	slices.SortFunc(out.Offsets, func(a, b offsetJSON) int {
		return cmp.Or(strings.Compare(a.Consumer, b.Consumer), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for _, e := range s.Journal {
		raw, err := EncodeJournalEntry(e)
		if err != nil {
			return nil, err
		}
		out.Journal = append(out.Journal, journalJSON{Offset: e.Offset, Time: e.Time, Entry: raw})
	}
	return json.Marshal(out)
}

// ParseMetaState decodes EncodeMetaState's form, checking the metadata
// with ParseClusterMeta and every journal entry with ParseJournalEntry.
func ParseMetaState(data []byte) (*MetaState, error) {
	var in metaStateJSON
	if err := strictJSON(data, &in); err != nil {
		return nil, fmt.Errorf("cluster: meta state: %w: %w", ErrInvalidArgument, err)
	}
	if in.Version != metaStateVersion {
		return nil, fmt.Errorf("cluster: meta state version %d, want %d: %w", in.Version, metaStateVersion, ErrInvalidArgument)
	}
	meta, err := ParseClusterMeta(in.Meta)
	if err != nil {
		return nil, fmt.Errorf("cluster: meta state: %w", err)
	}
	s := &MetaState{Meta: meta, Nodes: map[int]NodeInfo{}, Offsets: map[OffsetKey]uint64{}, Healing: in.Healing}
	for name, d := range in.Deleting {
		if err := topic.ValidateName(name); err != nil {
			return nil, fmt.Errorf("cluster: meta state: deleting: %w", err)
		}
		if len(d.Brokers) == 0 || ascendingPositive(d.Brokers) != nil {
			return nil, fmt.Errorf("cluster: meta state: deleting %q: brokers %v: %w", name, d.Brokers, ErrInvalidArgument)
		}
		if _, live := meta.Topics[name]; live {
			return nil, fmt.Errorf("cluster: meta state: %q is both a topic and being deleted: %w", name, ErrInvalidArgument)
		}
		if s.Deleting == nil {
			s.Deleting = map[string]TopicDeletion{}
		}
		s.Deleting[name] = d
	}
	for group, leases := range in.Groups {
		if err := checkGroupLeases(group, leases); err != nil {
			return nil, fmt.Errorf("cluster: meta state: %w", err)
		}
		if len(leases) == 0 {
			return nil, fmt.Errorf("cluster: meta state: group %q: empty leases: %w", group, ErrInvalidArgument)
		}
	}
	s.Groups = cloneGroups(in.Groups)
	if in.NextProducerID < 0 {
		return nil, fmt.Errorf("cluster: meta state: next producer id %d is negative: %w", in.NextProducerID, ErrInvalidArgument)
	}
	s.NextProducerID = in.NextProducerID
	if len(in.Transactions) > 0 {
		txns, err := transactionsFromList(in.Transactions)
		if err != nil {
			return nil, fmt.Errorf("cluster: meta state: %w", err)
		}
		s.Transactions = txns
	}
	for _, n := range in.Nodes {
		if err := n.validate(); err != nil {
			return nil, fmt.Errorf("cluster: meta state: %w: %w", ErrInvalidArgument, err)
		}
		s.Nodes[n.ID] = n
	}
	for _, o := range in.Offsets {
		s.Offsets[o.OffsetKey] = o.Offset
	}
	for i, j := range in.Journal {
		e, err := ParseJournalEntry(j.Entry)
		if err != nil {
			return nil, fmt.Errorf("cluster: meta state: journal entry %d: %w", i, err)
		}
		if i > 0 && j.Offset != s.Journal[i-1].Offset+1 {
			return nil, fmt.Errorf("cluster: meta state: journal offset %d after %d: %w", j.Offset, s.Journal[i-1].Offset, ErrInvalidArgument)
		}
		e.Offset, e.Time = j.Offset, j.Time
		s.Journal = append(s.Journal, e)
	}
	return s, nil
}
