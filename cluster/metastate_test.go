package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// The rules these tests pin are MetaState's own, written in metastate.go:
// "Apply ... pure, deterministic, with no clock and no I/O, so that every
// node applying the same commands in the same order holds the same state",
// and "On error s is unchanged: the command was refused, and every node
// refuses it alike". The leadership rules are docs/design.md
// § Leader epochs, § Failover and § Placement; the journal is
// docs/design.md § The journal.

// metaT0 is the proposer's clock of the tests' commands.
var metaT0 = time.Date(2024, 12, 2, 9, 20, 0, 0, time.UTC)

// metaNode is broker id's addresses in the tests.
func metaNode(id int) *NodeInfo {
	return &NodeInfo{ID: id, Addr: fmt.Sprintf("10.0.0.%d:7000", id), HTTPAddr: fmt.Sprintf("10.0.0.%d:8080", id)}
}

// newMetaState returns a state with brokers 1..n registered.
func newMetaState(t *testing.T, n int) *MetaState {
	t.Helper()
	s := &MetaState{}
	for id := 1; id <= n; id++ {
		mustApply(t, s, MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: metaNode(id)})
	}
	return s
}

// mustApply applies c to s and requires it to succeed.
func mustApply(t *testing.T, s *MetaState, c MetaCommand) MetaResult {
	t.Helper()
	res, err := s.Apply(c)
	require.NoError(t, err, "apply %s", c.Op)
	return res
}

// encodeMeta is EncodeMetaState(s), required to succeed.
func encodeMeta(t *testing.T, s *MetaState) []byte {
	t.Helper()
	b, err := EncodeMetaState(s)
	require.NoError(t, err)
	return b
}

// applyRefused applies c to s, requires a refusal that leaves s's
// encoding as it was, and returns the refusal.
func applyRefused(t *testing.T, s *MetaState, c MetaCommand) error {
	t.Helper()
	before := encodeMeta(t, s)
	_, err := s.Apply(c)
	require.Error(t, err, "apply %s must be refused", c.Op)
	require.Equal(t, string(before), string(encodeMeta(t, s)), "a refused %s leaves the state unchanged", c.Op)
	return err
}

// Rule (OpRegisterNode): a node joins Meta.Brokers, kept ascending, with
// its addresses recorded and one broker-start done entry journaled;
// registering the same addresses again changes nothing and journals
// nothing; new addresses are recorded and journaled; an id below 1 is
// ErrInvalidBrokerID, a node without an internal address (or no node)
// ErrInvalidArgument, a node at another node's internal address
// *AddrTakenError (ErrAddrTaken): a node keeps its own address when it
// registers again, and may move to a free one.
func TestMetaStateRegisterNode(t *testing.T) {
	moved := &NodeInfo{ID: 2, Addr: "10.9.9.9:7000", HTTPAddr: "10.9.9.9:8080"}
	cases := []struct {
		name        string
		before      []int // ids registered first, in this order
		node        *NodeInfo
		by          string
		wantErr     error
		wantBrokers []int
		wantEntries int // new journal entries
		wantSummary string
	}{
		{name: "first node", node: metaNode(1), wantBrokers: []int{1}, wantEntries: 1, wantSummary: "joins"},
		{name: "ids kept ascending", before: []int{5, 3}, node: metaNode(1), wantBrokers: []int{1, 3, 5}, wantEntries: 1, wantSummary: "joins"},
		{name: "author kept", node: metaNode(4), by: ByController, wantBrokers: []int{4}, wantEntries: 1, wantSummary: "joins"},
		{name: "same addresses change nothing", before: []int{1, 2}, node: metaNode(2), wantBrokers: []int{1, 2}, wantEntries: 0, wantSummary: "already registered"},
		{name: "new addresses recorded", before: []int{1, 2}, node: moved, wantBrokers: []int{1, 2}, wantEntries: 1, wantSummary: "moves"},
		{name: "new client address alone recorded", before: []int{1}, node: &NodeInfo{ID: 1, Addr: metaNode(1).Addr, HTTPAddr: "other:1"}, wantBrokers: []int{1}, wantEntries: 1, wantSummary: "moves"},
		{name: "id 0", before: []int{1}, node: &NodeInfo{ID: 0, Addr: "a:1"}, wantErr: ErrInvalidBrokerID},
		{name: "negative id", node: &NodeInfo{ID: -3, Addr: "a:1"}, wantErr: ErrInvalidBrokerID},
		{name: "no internal address", before: []int{1}, node: &NodeInfo{ID: 2, HTTPAddr: "a:1"}, wantErr: ErrInvalidArgument},
		{name: "no internal address on re-registration", before: []int{1}, node: &NodeInfo{ID: 1, HTTPAddr: "a:1"}, wantErr: ErrInvalidArgument},
		{name: "Kafka address alone recorded", before: []int{1}, node: &NodeInfo{ID: 1, Addr: metaNode(1).Addr, HTTPAddr: metaNode(1).HTTPAddr, KafkaAddr: "10.0.0.1:9092"}, wantBrokers: []int{1}, wantEntries: 1, wantSummary: "Kafka: 10.0.0.1:9092"},
		{name: "Kafka address without port", node: &NodeInfo{ID: 1, Addr: "a:1", KafkaAddr: "10.0.0.1"}, wantErr: ErrInvalidArgument},
		{name: "Kafka address port 0", node: &NodeInfo{ID: 1, Addr: "a:1", KafkaAddr: "10.0.0.1:0"}, wantErr: ErrInvalidArgument},
		{name: "no node", before: []int{1}, wantErr: ErrInvalidArgument},
		{name: "another node's address", before: []int{1, 2}, node: &NodeInfo{ID: 3, Addr: metaNode(2).Addr}, wantErr: ErrAddrTaken},
		{name: "moving to another node's address", before: []int{1, 2}, node: &NodeInfo{ID: 1, Addr: metaNode(2).Addr, HTTPAddr: metaNode(1).HTTPAddr}, wantErr: ErrAddrTaken},
		{name: "own address, new client address", before: []int{1, 2}, node: &NodeInfo{ID: 2, Addr: metaNode(2).Addr, HTTPAddr: "10.9.9.9:8080"}, wantBrokers: []int{1, 2}, wantEntries: 1, wantSummary: "moves"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &MetaState{}
			for _, id := range tc.before {
				mustApply(t, s, MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: metaNode(id)})
			}
			c := MetaCommand{Op: OpRegisterNode, Time: metaT0.Add(time.Minute), By: tc.by, Node: tc.node}
			if tc.wantErr != nil {
				err := applyRefused(t, s, c)
				require.ErrorIs(t, err, tc.wantErr)
				var taken *AddrTakenError
				if errors.As(err, &taken) {
					require.Equal(t, AddrTakenError{Node: tc.node.ID, Addr: tc.node.Addr, Holder: 2}, *taken)
				}
				return
			}
			journalBefore, stateBefore := len(s.Journal), encodeMeta(t, s)
			res := mustApply(t, s, c)
			require.Contains(t, res.Summary, tc.wantSummary)
			require.Equal(t, tc.wantBrokers, s.Meta.Brokers)
			require.Equal(t, *tc.node, s.Nodes[tc.node.ID], "addresses recorded")
			require.Len(t, s.Journal, journalBefore+tc.wantEntries)
			if tc.wantEntries == 0 {
				require.Equal(t, string(stateBefore), string(encodeMeta(t, s)), "nothing changed")
				return
			}
			e := s.Journal[len(s.Journal)-1]
			wantBy := tc.by
			if wantBy == "" {
				wantBy = ByOperator
			}
			require.Equal(t, EventBrokerStart, e.Event)
			require.Equal(t, PhaseDone, e.Phase)
			require.Equal(t, wantBy, e.By)
			require.Equal(t, tc.node.ID, e.Broker)
			require.Equal(t, res.Summary, e.Summary)
			require.True(t, e.Time.Equal(c.Time), "stamped with the command's time")
			require.Equal(t, uint64(len(tc.before)), e.Offset)
		})
	}
}

// Rule (OpCreateTopic, docs/design.md § Placement): a new topic's metadata
// is cluster.Placement's over the registered brokers, each partition led
// by its preferred replica (the first in placement order) at epoch 0, with
// every replica active. Brokers registered later move nothing.
func TestMetaStateCreateTopicPlacement(t *testing.T) {
	cases := []struct {
		name       string
		brokers    int
		partitions int
		rf         int
	}{
		{"one broker", 1, 1, 1},
		{"spec 3x3 rf2", 3, 3, 2},
		{"rf3 over 3", 3, 4, 3},
		{"rf1 spread", 3, 7, 1},
		{"more partitions than brokers", 5, 12, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newMetaState(t, tc.brokers)
			mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: tc.partitions, ReplicationFactor: tc.rf})
			want, err := Placement(s.Meta.Brokers, tc.partitions, tc.rf)
			require.NoError(t, err)
			got := s.Meta.Topics["orders"]
			require.Equal(t, tc.partitions, got.PartitionCount)
			require.Equal(t, tc.rf, got.ReplicationFactor)
			require.Len(t, got.Partitions, tc.partitions)
			for p, a := range want {
				pm := got.Partitions[p]
				require.Equal(t, p, pm.Partition)
				require.Equal(t, a.Leader, pm.Leader, "partition %d", p)
				require.Equal(t, append([]int{a.Leader}, a.Followers...), pm.Replicas, "partition %d: placement order", p)
				require.Equal(t, pm.Preferred(), pm.Leader, "led by the preferred replica")
				require.Equal(t, pm.Assigned(), pm.Active, "every replica active")
				require.Zero(t, pm.LeaderEpoch)
			}
			tm, err := NewTopicMetadata(s.Meta.Brokers, tc.partitions, tc.rf)
			require.NoError(t, err)
			require.Equal(t, tm, got, "the same as NewTopicMetadata")

			mustApply(t, s, MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: metaNode(99)})
			require.Equal(t, got, s.Meta.Topics["orders"], "placement stored, never recomputed")
		})
	}
}

// Rule (NewTopicMetadata): placement, leader = preferred, epoch 0, all
// active; a partition count below 1 is ErrInvalidPartitionCount, a
// replication factor outside 1..len(brokers) ErrInvalidReplicationFactor,
// bad broker ids Placement's refusal.
func TestMetaStateNewTopicMetadata(t *testing.T) {
	cases := []struct {
		name       string
		brokers    []int
		partitions int
		rf         int
		want       []PartitionMetadata
		wantErr    error
	}{
		{"spec 3x3 rf2", []int{1, 2, 3}, 3, 2, []PartitionMetadata{
			{Partition: 0, Leader: 1, Replicas: []int{1, 2}, Active: []int{1, 2}},
			{Partition: 1, Leader: 2, Replicas: []int{2, 3}, Active: []int{2, 3}},
			{Partition: 2, Leader: 3, Replicas: []int{3, 1}, Active: []int{1, 3}},
		}, nil},
		{"unsorted brokers", []int{20, 10}, 1, 2, []PartitionMetadata{
			{Partition: 0, Leader: 10, Replicas: []int{10, 20}, Active: []int{10, 20}},
		}, nil},
		{"no partitions", []int{1}, 0, 1, nil, ErrInvalidPartitionCount},
		{"too many partitions", []int{1}, topic.MaxPartitionCount + 1, 1, nil, ErrInvalidPartitionCount},
		{"rf 0", []int{1, 2}, 1, 0, nil, ErrInvalidReplicationFactor},
		{"rf above brokers", []int{1, 2}, 1, 3, nil, ErrInvalidReplicationFactor},
		{"no brokers", nil, 1, 1, nil, ErrInvalidReplicationFactor},
		{"broker id 0", []int{0, 1}, 1, 1, nil, ErrInvalidBrokerID},
		{"broker listed twice", []int{1, 1}, 1, 1, nil, ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm, err := NewTopicMetadata(tc.brokers, tc.partitions, tc.rf)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, TopicMetadata{PartitionCount: tc.partitions, ReplicationFactor: tc.rf, Partitions: tc.want}, tm)
		})
	}
}

// Rule (OpCreateTopic refusals): a name topic.ValidateName refuses, a
// partition count outside 1..topic.MaxPartitionCount
// (ErrInvalidPartitionCount), a replication factor outside 1..brokers
// (ErrInvalidReplicationFactor), a name taken (*TopicExistsError, with
// SameSettings saying whether the request matched) or one that differs
// from a topic's only in letter case (*TopicNameConflictError) are all
// refused, and every refusal leaves the state as it was.
func TestMetaStateCreateTopicRefusals(t *testing.T) {
	cases := []struct {
		name       string
		brokers    int
		topic      string
		partitions int
		rf         int
		wantErr    error
		check      func(t *testing.T, err error)
	}{
		{name: "empty name", brokers: 3, topic: "", partitions: 1, rf: 1, wantErr: topic.ErrInvalidName},
		{name: "slash in name", brokers: 3, topic: "a/b", partitions: 1, rf: 1, wantErr: topic.ErrInvalidName},
		{name: "dot dot", brokers: 3, topic: "..", partitions: 1, rf: 1, wantErr: topic.ErrInvalidName},
		{name: "name too long", brokers: 3, topic: strings.Repeat("x", topic.MaxNameLength+1), partitions: 1, rf: 1, wantErr: topic.ErrInvalidName},
		{name: "zero partitions", brokers: 3, topic: "t", partitions: 0, rf: 1, wantErr: ErrInvalidPartitionCount},
		{name: "negative partitions", brokers: 3, topic: "t", partitions: -1, rf: 1, wantErr: ErrInvalidPartitionCount},
		{name: "partitions above the maximum", brokers: 3, topic: "t", partitions: topic.MaxPartitionCount + 1, rf: 1, wantErr: ErrInvalidPartitionCount},
		{name: "partitions far above the maximum", brokers: 3, topic: "t", partitions: math.MaxInt, rf: 1, wantErr: ErrInvalidPartitionCount},
		{name: "rf 0", brokers: 3, topic: "t", partitions: 1, rf: 0, wantErr: ErrInvalidReplicationFactor},
		{name: "rf above brokers", brokers: 3, topic: "t", partitions: 1, rf: 4, wantErr: ErrInvalidReplicationFactor},
		{name: "no brokers registered", brokers: 0, topic: "t", partitions: 1, rf: 1, wantErr: ErrInvalidReplicationFactor},
		{name: "exists with the same settings", brokers: 3, topic: "Orders", partitions: 3, rf: 2, wantErr: ErrTopicExists,
			check: func(t *testing.T, err error) {
				var te *TopicExistsError
				require.ErrorAs(t, err, &te)
				require.Equal(t, TopicExistsError{Topic: "Orders", PartitionCount: 3, ReplicationFactor: 2, SameSettings: true}, *te)
			}},
		{name: "exists with other partitions", brokers: 3, topic: "Orders", partitions: 4, rf: 2, wantErr: ErrTopicExists,
			check: func(t *testing.T, err error) {
				var te *TopicExistsError
				require.ErrorAs(t, err, &te)
				require.Equal(t, TopicExistsError{Topic: "Orders", PartitionCount: 3, ReplicationFactor: 2, SameSettings: false}, *te)
			}},
		{name: "exists with another rf", brokers: 3, topic: "Orders", partitions: 3, rf: 3, wantErr: ErrTopicExists,
			check: func(t *testing.T, err error) {
				var te *TopicExistsError
				require.ErrorAs(t, err, &te)
				require.False(t, te.SameSettings)
			}},
		{name: "case twin", brokers: 3, topic: "orders", partitions: 3, rf: 2, wantErr: ErrTopicNameConflict,
			check: func(t *testing.T, err error) {
				var ce *TopicNameConflictError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, TopicNameConflictError{Topic: "orders", Existing: "Orders"}, *ce)
			}},
		{name: "case twin with other settings", brokers: 3, topic: "ORDERS", partitions: 1, rf: 1, wantErr: ErrTopicNameConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newMetaState(t, tc.brokers)
			if tc.brokers >= 2 {
				mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "Orders", Partitions: 3, ReplicationFactor: 2})
			}
			err := applyRefused(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: tc.topic, Partitions: tc.partitions, ReplicationFactor: tc.rf})
			require.ErrorIs(t, err, tc.wantErr)
			if tc.check != nil {
				tc.check(t, err)
			}
		})
	}
}

// Rule (OpDeleteTopic): the topic and its committed offsets go, nothing
// else; one delete-topic done entry is journaled with the command's time,
// author and reason; an unknown topic (a case twin included) is
// ErrUnknownTopic and changes nothing.
func TestMetaStateDeleteTopic(t *testing.T) {
	setup := func(t *testing.T) *MetaState {
		s := newMetaState(t, 3)
		for _, name := range []string{"orders", "payments"} {
			mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: name, Partitions: 2, ReplicationFactor: 2})
			for _, consumer := range []string{"billing", "audit"} {
				for p := range 2 {
					mustApply(t, s, MetaCommand{Op: OpCommitOffset, Time: metaT0, Consumer: consumer, Topic: name, Partition: p, Offset: 7})
				}
			}
		}
		return s
	}
	cases := []struct {
		name    string
		topic   string
		by      string
		reason  string
		wantErr error
	}{
		{name: "operator", topic: "orders"},
		{name: "controller with a reason", topic: "payments", by: ByController, reason: "retention"},
		{name: "unknown", topic: "nope", wantErr: ErrUnknownTopic},
		{name: "case twin is unknown", topic: "ORDERS", wantErr: ErrUnknownTopic},
		{name: "empty name", topic: "", wantErr: ErrUnknownTopic},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := setup(t)
			c := MetaCommand{Op: OpDeleteTopic, Time: metaT0.Add(time.Hour), By: tc.by, Reason: tc.reason, Topic: tc.topic}
			if tc.wantErr != nil {
				require.ErrorIs(t, applyRefused(t, s, c), tc.wantErr)
				return
			}
			other := "payments"
			if tc.topic == "payments" {
				other = "orders"
			}
			keep := s.Meta.Topics[other]
			brokers := slices.Clone(s.Meta.Brokers)
			end := s.JournalEnd()
			res := mustApply(t, s, c)

			require.NotContains(t, s.Meta.Topics, tc.topic)
			require.Equal(t, keep, s.Meta.Topics[other], "the other topic untouched")
			require.Equal(t, brokers, s.Meta.Brokers)
			require.Len(t, s.Offsets, 4, "only the deleted topic's offsets go")
			for k, v := range s.Offsets {
				require.Equal(t, other, k.Topic)
				require.Equal(t, uint64(7), v)
			}
			require.Equal(t, end+1, s.JournalEnd(), "one entry: the intent")
			e := s.Journal[len(s.Journal)-1]
			wantBy := tc.by
			if wantBy == "" {
				wantBy = ByOperator
			}
			require.Equal(t, JournalEntry{Offset: end, Time: c.Time, Event: EventDeleteTopic, Phase: PhaseIntent, By: wantBy,
				Topic: tc.topic, Summary: e.Summary, Reason: tc.reason}, e)
			require.Contains(t, e.Summary, "delete 2 partition(s)")
			require.Contains(t, res.Summary, "4 committed consumer offset(s)")
			require.Equal(t, 4, res.Count)
			require.Equal(t, &end, res.Journal)
			require.Equal(t, TopicDeletion{Brokers: []int{1, 2, 3}, Intent: end, Offsets: 4}, s.Deleting[tc.topic],
				"the brokers that held replicas have their files to remove")

			// The name is reserved until every broker removed its files.
			create := MetaCommand{Op: OpCreateTopic, Time: c.Time, Topic: tc.topic, Partitions: 1, ReplicationFactor: 1}
			refused := applyRefused(t, s, create)
			require.ErrorIs(t, refused, ErrDeleteUnfinished)
			var pending *DeletionPendingError
			require.ErrorAs(t, refused, &pending)
			require.Equal(t, DeletionPendingError{Topic: tc.topic, Brokers: []int{1, 2, 3}}, *pending)
			snap, err := EncodeMetaState(s)
			require.NoError(t, err)
			back, err := ParseMetaState(snap)
			require.NoError(t, err)
			require.Equal(t, s.Deleting, back.Deleting, "a snapshot keeps the unfinished deletion")
			for _, id := range []int{2, 1, 4} {
				mustApply(t, s, MetaCommand{Op: OpTopicFilesRemoved, Time: c.Time, Topic: tc.topic, Broker: id})
			}
			require.Equal(t, []int{3}, s.Deleting[tc.topic].Brokers, "broker 4 held nothing; 3 has yet to")
			require.Equal(t, end+1, s.JournalEnd(), "nothing journaled until the last")
			mustApply(t, s, MetaCommand{Op: OpTopicFilesRemoved, Time: c.Time, Topic: tc.topic, Broker: 3})
			require.Empty(t, s.Deleting)
			done := s.Journal[len(s.Journal)-1]
			require.Equal(t, PhaseDone, done.Phase)
			require.Equal(t, &end, done.Intent)
			require.Contains(t, done.Summary, "4 consumer offset(s) removed")
			mustApply(t, s, create)
			mustApply(t, s, MetaCommand{Op: OpDeleteTopic, Time: c.Time, Topic: tc.topic})
			for _, id := range []int{1, 2, 3, 4} {
				mustApply(t, s, MetaCommand{Op: OpTopicFilesRemoved, Time: c.Time, Topic: tc.topic, Broker: id})
			}

			require.ErrorIs(t, applyRefused(t, s, c), ErrUnknownTopic, "a second delete")
		})
	}
}

// leadershipState is the base of the leadership table: brokers 1..4, topic
// "orders" with two partitions, partition 0 led by 1, replicas [1 2 3],
// all active, epoch 0; then the setup commands of the case.
func leadershipState(t *testing.T, setup ...MetaCommand) *MetaState {
	t.Helper()
	s := newMetaState(t, 4)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 3})
	pm, err := s.Partition("orders", 0)
	require.NoError(t, err)
	require.Equal(t, PartitionMetadata{Partition: 0, Leader: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}}, pm)
	for _, c := range setup {
		mustApply(t, s, c)
	}
	return s
}

// Rules (failover, move-leader, deactivate, activate):
// docs/design.md § Leader epochs,
// docs/design.md § Failover,
// docs/phase-5-failover.md § Active vs assigned replicas.
//   - a command decided on another epoch than the partition's is
//     ErrStaleAction; its broker must be assigned (ErrNotAssigned) and not
//     the leader (ErrReplicaIsLeader);
//   - failover and move need an active target (ErrReplicaInactive);
//     failover takes the old leader and Leave out of the active set, move
//     keeps the old leader active; both add one to the epoch;
//   - deactivate takes an active follower out (an inactive one is
//     ErrReplicaInactive); activate re-adds one, ascending, and refuses an
//     active one (ErrReplicaActive); neither changes the epoch;
//   - each journals one done entry with Before, After and the command's
//     Time, By (ByOperator when empty), Reason (and Quarantine);
//   - a refusal changes nothing.
func TestMetaStateLeadership(t *testing.T) {
	cmd := func(op MetaOp, broker int, epoch uint64) MetaCommand {
		return MetaCommand{Op: op, Time: metaT0.Add(time.Second), Topic: "orders", Partition: 0, Broker: broker, Epoch: epoch}
	}
	with := func(c MetaCommand, change func(*MetaCommand)) MetaCommand { change(&c); return c }
	deactivate3 := cmd(OpDeactivate, 3, 0)
	failoverTo2 := cmd(OpFailover, 2, 0)
	cases := []struct {
		name    string
		setup   []MetaCommand
		cmd     MetaCommand
		wantErr error
		want    PartitionMetadata // after, when accepted
		event   JournalEvent
	}{
		{name: "failover", cmd: cmd(OpFailover, 2, 0),
			want: PartitionMetadata{Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{2, 3}}, event: EventFailover},
		{name: "failover with leave", cmd: with(cmd(OpFailover, 3, 0), func(c *MetaCommand) { c.Leave = []int{2} }),
			want: PartitionMetadata{Leader: 3, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{3}}, event: EventFailover},
		{name: "failover at a later epoch", setup: []MetaCommand{cmd(OpMoveLeader, 2, 0), cmd(OpMoveLeader, 3, 1)}, cmd: cmd(OpFailover, 1, 2),
			want: PartitionMetadata{Leader: 1, LeaderEpoch: 3, Replicas: []int{1, 2, 3}, Active: []int{1, 2}}, event: EventFailover},
		{name: "move leader", cmd: cmd(OpMoveLeader, 3, 0),
			want: PartitionMetadata{Leader: 3, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}}, event: EventMoveLeader},
		{name: "deactivate", cmd: cmd(OpDeactivate, 2, 0),
			want: PartitionMetadata{Leader: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 3}}, event: EventDeactivate},
		{name: "activate", setup: []MetaCommand{deactivate3}, cmd: with(cmd(OpActivate, 3, 0), func(c *MetaCommand) { c.Quarantine = "quarantine/orders-0-3.bin" }),
			want: PartitionMetadata{Leader: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}}, event: EventRecover},
		{name: "activate re-adds ascending", setup: []MetaCommand{failoverTo2}, cmd: cmd(OpActivate, 1, 1),
			want: PartitionMetadata{Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}}, event: EventRecover},
		{name: "controller with a reason", cmd: with(cmd(OpMoveLeader, 2, 0), func(c *MetaCommand) { c.By, c.Reason = ByController, "preferred leader" }),
			want: PartitionMetadata{Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}}, event: EventMoveLeader},

		{name: "failover stale epoch", cmd: cmd(OpFailover, 2, 1), wantErr: ErrStaleAction},
		{name: "move stale epoch", setup: []MetaCommand{failoverTo2}, cmd: cmd(OpMoveLeader, 3, 0), wantErr: ErrStaleAction},
		{name: "deactivate stale epoch", cmd: cmd(OpDeactivate, 2, 7), wantErr: ErrStaleAction},
		{name: "activate stale epoch", setup: []MetaCommand{failoverTo2}, cmd: cmd(OpActivate, 1, 0), wantErr: ErrStaleAction},
		{name: "failover to an unassigned broker", cmd: cmd(OpFailover, 4, 0), wantErr: ErrNotAssigned},
		{name: "move to an unknown broker", cmd: cmd(OpMoveLeader, 9, 0), wantErr: ErrNotAssigned},
		{name: "deactivate an unassigned broker", cmd: cmd(OpDeactivate, 4, 0), wantErr: ErrNotAssigned},
		{name: "activate broker 0", cmd: cmd(OpActivate, 0, 0), wantErr: ErrNotAssigned},
		{name: "failover to the leader", cmd: cmd(OpFailover, 1, 0), wantErr: ErrReplicaIsLeader},
		{name: "move to the leader", cmd: cmd(OpMoveLeader, 1, 0), wantErr: ErrReplicaIsLeader},
		{name: "deactivate the leader", cmd: cmd(OpDeactivate, 1, 0), wantErr: ErrReplicaIsLeader},
		{name: "activate the leader", setup: []MetaCommand{failoverTo2}, cmd: cmd(OpActivate, 2, 1), wantErr: ErrReplicaIsLeader},
		{name: "failover to an inactive replica", setup: []MetaCommand{deactivate3}, cmd: cmd(OpFailover, 3, 0), wantErr: ErrReplicaInactive},
		{name: "move to an inactive replica", setup: []MetaCommand{deactivate3}, cmd: cmd(OpMoveLeader, 3, 0), wantErr: ErrReplicaInactive},
		{name: "move to the failed leader", setup: []MetaCommand{failoverTo2}, cmd: cmd(OpMoveLeader, 1, 1), wantErr: ErrReplicaInactive},
		{name: "deactivate an inactive replica", setup: []MetaCommand{deactivate3}, cmd: cmd(OpDeactivate, 3, 0), wantErr: ErrReplicaInactive},
		{name: "activate an active replica", cmd: cmd(OpActivate, 2, 0), wantErr: ErrReplicaActive},
		{name: "failover whose new leader leaves", cmd: with(cmd(OpFailover, 2, 0), func(c *MetaCommand) { c.Leave = []int{3, 2} }), wantErr: ErrInvalidArgument},
		{name: "unknown topic", cmd: with(cmd(OpFailover, 2, 0), func(c *MetaCommand) { c.Topic = "nope" }), wantErr: ErrUnknownTopic},
		{name: "partition out of range", cmd: with(cmd(OpMoveLeader, 2, 0), func(c *MetaCommand) { c.Partition = 2 }), wantErr: topic.ErrPartitionOutOfRange},
		{name: "negative partition", cmd: with(cmd(OpDeactivate, 2, 0), func(c *MetaCommand) { c.Partition = -1 }), wantErr: topic.ErrPartitionOutOfRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := leadershipState(t, tc.setup...)
			if tc.wantErr != nil {
				require.ErrorIs(t, applyRefused(t, s, tc.cmd), tc.wantErr)
				return
			}
			before, err := s.Partition("orders", 0)
			require.NoError(t, err)
			other := s.Meta.Topics["orders"].Partitions[1].clone()
			end := s.JournalEnd()

			res := mustApply(t, s, tc.cmd)
			after, err := s.Partition("orders", 0)
			require.NoError(t, err)
			require.Equal(t, tc.want, after)
			require.Equal(t, &after, res.Partition, "the result is the partition's new metadata")
			require.Equal(t, other, s.Meta.Topics["orders"].Partitions[1], "the other partition untouched")

			require.Equal(t, end+1, s.JournalEnd(), "exactly one entry")
			e := s.Journal[len(s.Journal)-1]
			wantBy := tc.cmd.By
			if wantBy == "" {
				wantBy = ByOperator
			}
			// The entry names the broker acted on, as in one process: a
			// failover's is the failed leader.
			acted := tc.cmd.Broker
			if tc.cmd.Op == OpFailover {
				acted = before.Leader
			}
			require.Equal(t, JournalEntry{Offset: end, Time: tc.cmd.Time, Event: tc.event, Phase: PhaseDone, By: wantBy,
				Topic: "orders", Partition: 0, Broker: acted, Summary: res.Summary, Reason: tc.cmd.Reason,
				Before: &before, After: &after, Quarantine: tc.cmd.Quarantine}, e)

			stale := tc.cmd
			stale.Time = stale.Time.Add(time.Second)
			if after.LeaderEpoch != before.LeaderEpoch {
				require.ErrorIs(t, applyRefused(t, s, stale), ErrStaleAction, "the same command again is decided on the old epoch")
			} else {
				applyRefused(t, s, stale) // deactivate an inactive, activate an active replica
			}
		})
	}
}

// errOffsetRegression marks, in TestMetaStateOffsets, a step refused with
// a *client.OffsetRegressionError (which has no sentinel of its own).
var errOffsetRegression = errors.New("test: offset regression")

// Rule (OpCommitOffset, OpResetOffset; client.OffsetStore's rule): a
// commit never goes backwards (*client.OffsetRegressionError), a reset
// may; each names an existing topic and partition (ErrUnknownTopic,
// topic.ErrPartitionOutOfRange) and a valid consumer id (topic.ValidateName)
// and journals nothing.
func TestMetaStateOffsets(t *testing.T) {
	type step struct {
		op        MetaOp
		consumer  string
		topic     string
		partition int
		offset    uint64
		wantErr   error
	}
	billing := func(op MetaOp, offset uint64) step {
		return step{op: op, consumer: "billing", topic: "orders", offset: offset}
	}
	commit := func(offset uint64) step { return billing(OpCommitOffset, offset) }
	reset := func(offset uint64) step { return billing(OpResetOffset, offset) }
	refused := func(s step, err error) step { s.wantErr = err; return s }
	cases := []struct {
		name  string
		steps []step
		want  uint64 // billing's offset on orders/0 at the end
	}{
		{name: "first commit", steps: []step{commit(5)}, want: 5},
		{name: "first commit at 0", steps: []step{commit(0)}, want: 0},
		{name: "forward", steps: []step{commit(5), commit(9)}, want: 9},
		{name: "the same again", steps: []step{commit(5), commit(5)}, want: 5},
		{name: "backwards refused", steps: []step{commit(5), refused(commit(4), errOffsetRegression)}, want: 5},
		{name: "reset backwards", steps: []step{commit(5), reset(2)}, want: 2},
		{name: "reset then commit forward", steps: []step{commit(5), reset(2), commit(3)}, want: 3},
		{name: "reset then commit behind the reset refused", steps: []step{commit(5), reset(2), refused(commit(1), errOffsetRegression)}, want: 2},
		{name: "first reset", steps: []step{reset(math.MaxUint64)}, want: math.MaxUint64},
		{name: "other consumer independent", steps: []step{commit(5), {op: OpCommitOffset, consumer: "audit", topic: "orders", offset: 1}}, want: 5},
		{name: "other partition independent", steps: []step{commit(5), {op: OpCommitOffset, consumer: "billing", topic: "orders", partition: 1, offset: 1}}, want: 5},
		{name: "unknown topic", steps: []step{commit(5), refused(step{op: OpCommitOffset, consumer: "billing", topic: "nope", offset: 9}, ErrUnknownTopic)}, want: 5},
		{name: "reset on unknown topic", steps: []step{commit(5), refused(step{op: OpResetOffset, consumer: "billing", topic: "nope"}, ErrUnknownTopic)}, want: 5},
		{name: "partition out of range", steps: []step{commit(5), refused(step{op: OpCommitOffset, consumer: "billing", topic: "orders", partition: 2, offset: 9}, topic.ErrPartitionOutOfRange)}, want: 5},
		{name: "negative partition", steps: []step{commit(5), refused(step{op: OpResetOffset, consumer: "billing", topic: "orders", partition: -1}, topic.ErrPartitionOutOfRange)}, want: 5},
		{name: "empty consumer id", steps: []step{commit(5), refused(step{op: OpCommitOffset, topic: "orders", offset: 9}, topic.ErrInvalidName)}, want: 5},
		{name: "unsafe consumer id", steps: []step{commit(5), refused(step{op: OpResetOffset, consumer: "../billing", topic: "orders"}, topic.ErrInvalidName)}, want: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newMetaState(t, 2)
			mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 2})
			end := s.JournalEnd()
			for i, st := range tc.steps {
				c := MetaCommand{Op: st.op, Time: metaT0, Consumer: st.consumer, Topic: st.topic, Partition: st.partition, Offset: st.offset}
				if st.wantErr == nil {
					mustApply(t, s, c)
					continue
				}
				err := applyRefused(t, s, c)
				if st.wantErr != errOffsetRegression {
					require.ErrorIs(t, err, st.wantErr, "step %d", i)
				} else {
					var re *client.OffsetRegressionError
					require.ErrorAs(t, err, &re)
					require.Equal(t, client.OffsetRegressionError{ConsumerID: "billing", Topic: "orders", Partition: 0,
						Committed: s.Offsets[OffsetKey{"billing", "orders", 0}], Requested: st.offset}, *re)
				}
			}
			require.Equal(t, tc.want, s.Offsets[OffsetKey{Consumer: "billing", Topic: "orders", Partition: 0}])
			require.Equal(t, end, s.JournalEnd(), "offsets are not journaled")
		})
	}
}

// Rule (OpDeleteOffsets): every offset of the consumer goes, no other
// consumer's; a consumer without offsets is no error; an invalid consumer
// id is refused; nothing is journaled.
func TestMetaStateDeleteOffsets(t *testing.T) {
	s := newMetaState(t, 2)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 2})
	for _, c := range []MetaCommand{
		{Op: OpCommitOffset, Consumer: "billing", Topic: "orders", Partition: 0, Offset: 3},
		{Op: OpCommitOffset, Consumer: "billing", Topic: "orders", Partition: 1, Offset: 4},
		{Op: OpCommitOffset, Consumer: "audit", Topic: "orders", Partition: 0, Offset: 5},
	} {
		c.Time = metaT0
		mustApply(t, s, c)
	}
	end := s.JournalEnd()
	res := mustApply(t, s, MetaCommand{Op: OpDeleteOffsets, Time: metaT0, Consumer: "billing"})
	require.Equal(t, `consumer "billing": 2 offset(s) deleted`, res.Summary)
	require.Equal(t, map[OffsetKey]uint64{{Consumer: "audit", Topic: "orders", Partition: 0}: 5}, s.Offsets)
	mustApply(t, s, MetaCommand{Op: OpDeleteOffsets, Time: metaT0, Consumer: "billing"})
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpDeleteOffsets, Time: metaT0, Consumer: "../x"}), topic.ErrInvalidName)
	require.Equal(t, end, s.JournalEnd(), "offsets are not journaled")
}

// Rule (OpDeleteOffset): the consumer's offset on the partition goes, no
// other; one never committed is no error (Count 0); invalid names are
// refused; nothing is journaled.
func TestMetaStateDeleteOffset(t *testing.T) {
	s := newMetaState(t, 2)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 2})
	for _, c := range []MetaCommand{
		{Op: OpCommitOffset, Consumer: "billing", Topic: "orders", Partition: 0, Offset: 3},
		{Op: OpCommitOffset, Consumer: "billing", Topic: "orders", Partition: 1, Offset: 4},
		{Op: OpCommitOffset, Consumer: "audit", Topic: "orders", Partition: 0, Offset: 5},
	} {
		c.Time = metaT0
		mustApply(t, s, c)
	}
	end := s.JournalEnd()
	res := mustApply(t, s, MetaCommand{Op: OpDeleteOffset, Time: metaT0, Consumer: "billing", Topic: "orders", Partition: 0})
	require.Equal(t, 1, res.Count)
	require.Equal(t, map[OffsetKey]uint64{{Consumer: "billing", Topic: "orders", Partition: 1}: 4, {Consumer: "audit", Topic: "orders", Partition: 0}: 5}, s.Offsets)
	res = mustApply(t, s, MetaCommand{Op: OpDeleteOffset, Time: metaT0, Consumer: "billing", Topic: "orders", Partition: 0})
	require.Zero(t, res.Count)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpDeleteOffset, Time: metaT0, Consumer: "../x", Topic: "orders"}), topic.ErrInvalidName)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpDeleteOffset, Time: metaT0, Consumer: "billing", Topic: "../x"}), topic.ErrInvalidName)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpDeleteOffset, Time: metaT0, Consumer: "billing", Topic: "orders", Partition: -1}), topic.ErrPartitionOutOfRange)
	require.Len(t, s.Offsets, 2)
	require.Equal(t, end, s.JournalEnd(), "offsets are not journaled")
}

// Rule (OpJournal): the entry is validated and appended, stamped with the
// next journal offset and the command's time (whatever the entry itself
// says); an invalid entry, or none, is ErrInvalidArgument and changes
// nothing; nothing but the journal changes.
func TestMetaStateJournalCommand(t *testing.T) {
	before := PartitionMetadata{Partition: 0, Leader: 1, Replicas: []int{1, 2}, Active: []int{1, 2}}
	after := PartitionMetadata{Partition: 0, Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2}, Active: []int{2}}
	cases := []struct {
		name    string
		entry   *JournalEntry
		wantErr error
	}{
		{name: "refusal", entry: &JournalEntry{Event: EventFailover, Phase: PhaseRefused, By: ByController, Topic: "orders", Summary: "orders/0: failover not carried out", Reason: "leader 1 unavailable", Error: "no eligible replica"}},
		{name: "catch-up", entry: &JournalEntry{Event: EventCatchUp, Phase: PhaseDone, By: ByOperator, Topic: "orders", Partition: 3, Broker: 2, Summary: "copied 4 records"}},
		{name: "intent with before and after", entry: &JournalEntry{Event: EventFailover, Phase: PhaseIntent, By: ByController, Topic: "orders", Summary: "s", Before: &before, After: &after}},
		{name: "the entry's own offset and time ignored", entry: &JournalEntry{Offset: 99, Time: metaT0.Add(-time.Hour), Event: EventBrokerStop, Phase: PhaseDone, By: ByOperator, Broker: 1, Summary: "stopped"}},
		{name: "no entry", wantErr: ErrInvalidArgument},
		{name: "unknown event", entry: &JournalEntry{Event: "explode", Phase: PhaseDone, By: ByOperator, Summary: "s"}, wantErr: ErrInvalidArgument},
		{name: "unknown phase", entry: &JournalEntry{Event: EventCatchUp, Phase: "maybe", By: ByOperator, Summary: "s"}, wantErr: ErrInvalidArgument},
		{name: "unknown author", entry: &JournalEntry{Event: EventCatchUp, Phase: PhaseDone, By: "someone", Summary: "s"}, wantErr: ErrInvalidArgument},
		{name: "empty author", entry: &JournalEntry{Event: EventCatchUp, Phase: PhaseDone, Summary: "s"}, wantErr: ErrInvalidArgument},
		{name: "intent without before", entry: &JournalEntry{Event: EventFailover, Phase: PhaseIntent, By: ByOperator, Summary: "s", After: &after}, wantErr: ErrInvalidArgument},
		{name: "deletion without topic", entry: &JournalEntry{Event: EventDeleteTopic, Phase: PhaseDone, By: ByOperator, Summary: "s"}, wantErr: ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newMetaState(t, 2)
			c := MetaCommand{Op: OpJournal, Time: metaT0.Add(time.Minute), Entry: tc.entry}
			if tc.wantErr != nil {
				require.ErrorIs(t, applyRefused(t, s, c), tc.wantErr)
				return
			}
			meta, nodes := s.Meta.clone(), s.Clone().Nodes
			end := s.JournalEnd()
			res := mustApply(t, s, c)
			require.Equal(t, tc.entry.Summary, res.Summary)
			want := *tc.entry
			want.Offset, want.Time = end, c.Time
			require.Equal(t, want, s.Journal[len(s.Journal)-1])
			require.Equal(t, end+1, s.JournalEnd())
			require.Equal(t, meta, s.Meta, "nothing but the journal changes")
			require.Equal(t, nodes, s.Nodes)
		})
	}
}

// Rule (MetaJournalKeep): the journal keeps the last MetaJournalKeep
// entries, oldest first; offsets keep counting from the first entry ever
// applied, so JournalEnd is the number of entries ever journaled.
func TestMetaStateJournalKeep(t *testing.T) {
	cases := []struct {
		name    string
		entries int
	}{
		{"none", 0},
		{"below the bound", 10},
		{"at the bound", MetaJournalKeep},
		{"one beyond", MetaJournalKeep + 1},
		{"many beyond", MetaJournalKeep + 37},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &MetaState{}
			for i := range tc.entries {
				mustApply(t, s, MetaCommand{Op: OpJournal, Time: metaT0.Add(time.Duration(i) * time.Second),
					Entry: &JournalEntry{Event: EventCatchUp, Phase: PhaseDone, By: ByOperator, Summary: fmt.Sprint(i)}})
			}
			require.Equal(t, uint64(tc.entries), s.JournalEnd())
			require.Len(t, s.Journal, min(tc.entries, MetaJournalKeep))
			for i, e := range s.Journal {
				n := tc.entries - len(s.Journal) + i
				if e.Offset != uint64(n) || e.Summary != fmt.Sprint(n) || !e.Time.Equal(metaT0.Add(time.Duration(n)*time.Second)) {
					t.Fatalf("entry %d is %v, want the entry applied as number %d", i, e, n)
				}
			}
			if tc.entries > MetaJournalKeep {
				parsed, err := ParseMetaState(encodeMeta(t, s))
				require.NoError(t, err)
				require.Equal(t, s.JournalEnd(), parsed.JournalEnd(), "the offsets survive a snapshot")
			}
		})
	}
}

// Rule: a command of no known op is ErrInvalidArgument, as is one by an
// author the journal does not know (it would journal an entry that no
// snapshot could hold).
func TestMetaStateUnknownCommandRefused(t *testing.T) {
	cases := []struct {
		name string
		cmd  MetaCommand
	}{
		{"empty op", MetaCommand{}},
		{"unknown op", MetaCommand{Op: "drop-everything", Topic: "orders"}},
		{"register by an unknown author", MetaCommand{Op: OpRegisterNode, By: "root", Node: metaNode(3)}},
		{"delete by an unknown author", MetaCommand{Op: OpDeleteTopic, By: "root", Topic: "orders"}},
		{"move by an unknown author", MetaCommand{Op: OpMoveLeader, By: "root", Topic: "orders", Broker: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newMetaState(t, 2)
			mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 1, ReplicationFactor: 2})
			require.ErrorIs(t, applyRefused(t, s, tc.cmd), ErrInvalidArgument)
		})
	}
}

// metaScript is a command sequence that touches every op, with refusals
// mixed in: what a Raft log could hold.
func metaScript() []MetaCommand {
	at := func(i int) time.Time { return metaT0.Add(time.Duration(i) * 1500 * time.Millisecond) }
	var cs []MetaCommand
	add := func(c MetaCommand) { c.Time = at(len(cs)); cs = append(cs, c) }
	for _, id := range []int{3, 1, 2, 4} {
		add(MetaCommand{Op: OpRegisterNode, Node: metaNode(id)})
	}
	add(MetaCommand{Op: OpRegisterNode, Node: metaNode(2)})
	add(MetaCommand{Op: OpRegisterNode, Node: &NodeInfo{ID: 4, Addr: "host4:7000"}})
	add(MetaCommand{Op: OpCreateTopic, Topic: "orders", Partitions: 4, ReplicationFactor: 3})
	add(MetaCommand{Op: OpCreateTopic, Topic: "payments", Partitions: 2, ReplicationFactor: 2})
	add(MetaCommand{Op: OpCreateTopic, Topic: "Orders", Partitions: 1, ReplicationFactor: 1}) // refused
	add(MetaCommand{Op: OpCreateTopic, Topic: "scratch", Partitions: 1, ReplicationFactor: 1})
	for i, consumer := range []string{"billing", "audit", "search", "ml", "ops", "x"} {
		for p := range 4 {
			add(MetaCommand{Op: OpCommitOffset, Consumer: consumer, Topic: "orders", Partition: p, Offset: uint64(10*i + p)})
		}
		add(MetaCommand{Op: OpCommitOffset, Consumer: consumer, Topic: "payments", Partition: i % 2, Offset: uint64(i)})
		add(MetaCommand{Op: OpCommitOffset, Consumer: consumer, Topic: "scratch", Offset: 1})
	}
	add(MetaCommand{Op: OpCommitOffset, Consumer: "billing", Topic: "orders", Partition: 0, Offset: 0}) // fine: equal
	add(MetaCommand{Op: OpCommitOffset, Consumer: "audit", Topic: "orders", Partition: 0, Offset: 1})   // refused
	add(MetaCommand{Op: OpResetOffset, Consumer: "audit", Topic: "orders", Partition: 0, Offset: 1})
	add(MetaCommand{Op: OpFailover, By: ByController, Reason: "leader 1 unavailable for 3.0s", Topic: "orders", Partition: 0, Broker: 2, Leave: []int{3}})
	add(MetaCommand{Op: OpFailover, Topic: "orders", Partition: 0, Broker: 2}) // refused: stale
	add(MetaCommand{Op: OpActivate, Topic: "orders", Partition: 0, Broker: 3, Epoch: 1, Quarantine: "quarantine/x"})
	add(MetaCommand{Op: OpMoveLeader, Topic: "orders", Partition: 1, Broker: 3})
	add(MetaCommand{Op: OpDeactivate, Topic: "orders", Partition: 2, Broker: 4})
	add(MetaCommand{Op: OpJournal, Entry: &JournalEntry{Event: EventBrokerStop, Phase: PhaseDone, By: ByOperator, Broker: 4, Summary: "broker 4 stopped"}})
	add(MetaCommand{Op: OpDeleteTopic, Topic: "scratch", Reason: "done with it"})
	add(MetaCommand{Op: OpDeleteTopic, Topic: "scratch"}) // refused
	off := false
	add(MetaCommand{Op: OpSetHealing, Reason: "maintenance", Automatic: &off})
	add(MetaCommand{Op: OpSetHealing, Reason: "no value"}) // refused
	add(MetaCommand{Op: OpAllocateProducerIDs, ProducerIDs: ProducerIDBlock})
	add(MetaCommand{Op: OpAllocateProducerIDs}) // refused: no count
	add(MetaCommand{Op: OpAllocateProducerIDs, ProducerIDs: 1})
	return cs
}

// Rule (determinism): two fresh states given the same commands in the
// same order — one directly, one through EncodeMetaCommand and
// ParseMetaCommand as a Raft follower receives them — refuse the same ones
// and encode byte for byte alike; encoding one state again gives the same
// bytes (map order never leaks into the snapshot).
func TestMetaStateDeterministic(t *testing.T) {
	cases := []struct {
		name    string
		viaWire bool
	}{
		{"direct", false},
		{"through the wire form", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := &MetaState{}, &MetaState{}
			refused := 0
			for i, c := range metaScript() {
				resA, errA := a.Apply(c)
				if errA != nil {
					refused++
				}
				if tc.viaWire {
					raw, err := EncodeMetaCommand(c)
					require.NoError(t, err)
					c, err = ParseMetaCommand(raw)
					require.NoError(t, err)
				}
				resB, errB := b.Apply(c)
				require.Equal(t, errA == nil, errB == nil, "command %d (%s): %v / %v", i, c.Op, errA, errB)
				require.Equal(t, resA, resB, "command %d", i)
			}
			encA, encB := encodeMeta(t, a), encodeMeta(t, b)
			require.Equal(t, string(encA), string(encB))
			for range 20 {
				require.Equal(t, string(encA), string(encodeMeta(t, a)), "encoding is stable")
			}
			require.Equal(t, 6, refused, "the script's refusals are refused")
			require.Equal(t, int64(ProducerIDBlock+1), a.NextProducerID)
			require.Len(t, a.Offsets, 6*4+6, "orders' and payments' offsets; scratch's went with it")
		})
	}
}

// Rule: the snapshot's offsets are ordered by consumer, topic, partition,
// and the order is total — two different keys never compare equal, even
// keys whose strings hold a NUL (a snapshot may carry any string), so the
// same state has exactly one encoding.
func TestMetaStateOffsetsEncodingDeterministic(t *testing.T) {
	cases := []struct {
		name string
		keys []OffsetKey
		want []OffsetKey // encoded order
	}{
		{"by consumer, topic, partition", []OffsetKey{{"b", "t", 0}, {"a", "u", 0}, {"a", "t", 10}, {"a", "t", 2}},
			[]OffsetKey{{"a", "t", 2}, {"a", "t", 10}, {"a", "u", 0}, {"b", "t", 0}}},
		{"prefix first", []OffsetKey{{"ab", "t", 0}, {"a", "t", 0}}, []OffsetKey{{"a", "t", 0}, {"ab", "t", 0}}},
		{"NUL inside names", []OffsetKey{{"a\x00b", "c", 0}, {"a", "b\x00c", 0}}, []OffsetKey{{"a", "b\x00c", 0}, {"a\x00b", "c", 0}}},
		{"negative partitions", []OffsetKey{{"a", "t", 1}, {"a", "t", -1}, {"a", "t", -20}}, []OffsetKey{{"a", "t", -20}, {"a", "t", -1}, {"a", "t", 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &MetaState{Offsets: map[OffsetKey]uint64{}}
			for i, k := range tc.keys {
				s.Offsets[k] = uint64(i)
			}
			first := encodeMeta(t, s)
			for range 50 {
				require.Equal(t, string(first), string(encodeMeta(t, s)))
			}
			parsed, err := ParseMetaState(first)
			require.NoError(t, err)
			require.Equal(t, s.Offsets, parsed.Offsets)
			var doc metaStateJSON
			require.NoError(t, json.Unmarshal(first, &doc))
			var order []OffsetKey
			for _, o := range doc.Offsets {
				order = append(order, o.OffsetKey)
			}
			require.Equal(t, tc.want, order, "the encoded order")
		})
	}
}

// richMetaState is a state with every part filled: nodes, topics after
// leader changes, offsets, and a journal whose head was dropped (offsets
// not from 0) with times in several zones and to the nanosecond.
func richMetaState(t *testing.T) *MetaState {
	t.Helper()
	s := &MetaState{}
	for _, c := range metaScript() {
		_, _ = s.Apply(c)
	}
	zone := time.FixedZone("", -(3*3600 + 30*60))
	for i := range MetaJournalKeep {
		at := metaT0.Add(time.Duration(i)*time.Millisecond + 123)
		if i%2 == 1 {
			at = at.In(zone)
		}
		mustApply(t, s, MetaCommand{Op: OpJournal, Time: at,
			Entry: &JournalEntry{Event: EventCatchUp, Phase: PhaseDone, By: ByController, Topic: "orders", Partition: i % 4, Broker: 2, Summary: "copied"}})
	}
	mustApply(t, s, MetaCommand{Op: OpMoveLeader, Time: metaT0.In(zone), Topic: "orders", Partition: 3, Broker: 2, Reason: "rebalance"})
	require.Greater(t, s.Journal[0].Offset, uint64(0), "the head was dropped")
	return s
}

// Rule (EncodeMetaState, ParseMetaState): a snapshot parses back to the
// same state — metadata, nodes, offsets, journal entries with their
// offsets and times — and re-encodes byte for byte.
func TestMetaStateEncodeRoundTrip(t *testing.T) {
	cases := []struct {
		name  string
		state func(t *testing.T) *MetaState
	}{
		{"zero value", func(*testing.T) *MetaState { return &MetaState{} }},
		{"brokers only", func(t *testing.T) *MetaState { return newMetaState(t, 3) }},
		{"script", func(*testing.T) *MetaState {
			s := &MetaState{}
			for _, c := range metaScript() {
				_, _ = s.Apply(c)
			}
			return s
		}},
		{"full journal", richMetaState},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state(t)
			enc := encodeMeta(t, s)
			parsed, err := ParseMetaState(enc)
			require.NoError(t, err)
			require.Equal(t, string(enc), string(encodeMeta(t, parsed)), "re-encoding is byte-equal")

			require.Equal(t, s.JournalEnd(), parsed.JournalEnd())
			require.Len(t, parsed.Journal, len(s.Journal))
			for i, e := range s.Journal {
				p := parsed.Journal[i]
				_, offE := e.Time.Zone()
				_, offP := p.Time.Zone()
				if !e.Time.Equal(p.Time) || offE != offP {
					t.Fatalf("entry %d: time %v parsed as %v", i, e.Time, p.Time)
				}
				p.Time = e.Time
				if !reflect.DeepEqual(e, p) {
					t.Fatalf("entry %d: %#v parsed as %#v", i, e, p)
				}
			}
			require.Equal(t, len(s.Offsets), len(parsed.Offsets))
			for k, v := range s.Offsets {
				require.Equal(t, v, parsed.Offsets[k], "%+v", k)
			}
			require.Equal(t, len(s.Nodes), len(parsed.Nodes))
			for id, n := range s.Nodes {
				require.Equal(t, n, parsed.Nodes[id])
			}
			require.Equal(t, s.Meta.clone(), parsed.Meta.clone())

			// The parsed state goes on as the original does.
			next := MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: metaNode(7)}
			mustApply(t, s, next)
			mustApply(t, parsed, next)
			require.Equal(t, string(encodeMeta(t, s)), string(encodeMeta(t, parsed)))
		})
	}
}

// Rule (NodeInfo.KafkaAddr): a node's Kafka address survives a snapshot;
// a node without one is encoded as before the field existed, and a
// snapshot written then (no "kafka_addr") still parses, with none.
func TestMetaStateNodeKafkaAddr(t *testing.T) {
	s := &MetaState{}
	with := NodeInfo{ID: 1, Addr: "10.0.0.1:7000", HTTPAddr: "10.0.0.1:8080", KafkaAddr: "kafka.example:9092"}
	without := *metaNode(2)
	mustApply(t, s, MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: &with})
	mustApply(t, s, MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: &without})

	data := encodeMeta(t, s)
	require.Equal(t, 1, strings.Count(string(data), `"kafka_addr"`), "only the node with a Kafka address carries the field")
	back, err := ParseMetaState(data)
	require.NoError(t, err)
	require.Equal(t, with, back.Nodes[1])
	require.Equal(t, without, back.Nodes[2])

	old := strings.Replace(string(data), `,"kafka_addr":"kafka.example:9092"`, "", 1)
	require.NotContains(t, old, "kafka_addr")
	back, err = ParseMetaState([]byte(old))
	require.NoError(t, err, "a snapshot from before the field")
	require.Empty(t, back.Nodes[1].KafkaAddr)
	require.Equal(t, with.HTTPAddr, back.Nodes[1].HTTPAddr)
}

// Rule (ParseMetaState): anything but EncodeMetaState's form is refused —
// unknown fields, trailing data, another version, metadata ParseClusterMeta
// refuses (*MetadataError), a node without id or address, an invalid
// journal entry, journal offsets that do not count up by one.
func TestMetaStateParseRefusals(t *testing.T) {
	s := newMetaState(t, 2)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 1, ReplicationFactor: 2})
	valid := string(encodeMeta(t, s))
	_, err := ParseMetaState([]byte(valid))
	require.NoError(t, err)
	meta, err := EncodeClusterMeta(s.Meta)
	require.NoError(t, err)
	metaJSON := strings.ReplaceAll(strings.ReplaceAll(string(meta), "\n", ""), "  ", "")
	doc := func(version, meta, nodes, offsets, journal string) []byte {
		return []byte(fmt.Sprintf(`{"version":%s,"meta":%s,"nodes":%s,"offsets":%s,"journal":%s}`, version, meta, nodes, offsets, journal))
	}
	okNodes := `[{"id":1,"addr":"a:1","http_addr":"a:2"}]`
	entry := `{"event":"catch-up","phase":"done","by":"operator","partition":0,"broker":1,"summary":"s"}`
	journal := func(offsets ...int) string {
		var parts []string
		for _, o := range offsets {
			parts = append(parts, fmt.Sprintf(`{"offset":%d,"time":"2024-12-02T09:20:00Z","entry":%s}`, o, entry))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	_, err = ParseMetaState(doc("1", metaJSON, okNodes, "[]", journal(5, 6, 7)))
	require.NoError(t, err, "the test's own document is valid")

	var metadataError *MetadataError
	cases := []struct {
		name    string
		data    []byte
		wantErr error
		wantAs  any
	}{
		{name: "empty", data: nil, wantErr: ErrInvalidArgument},
		{name: "not JSON", data: []byte("snapshot"), wantErr: ErrInvalidArgument},
		{name: "null", data: []byte("null"), wantErr: ErrInvalidArgument},
		{name: "array", data: []byte("[]"), wantErr: ErrInvalidArgument},
		{name: "trailing garbage", data: []byte(valid + "garbage"), wantErr: ErrInvalidArgument},
		{name: "trailing value", data: []byte(valid + valid), wantErr: ErrInvalidArgument},
		{name: "trailing brace", data: []byte(valid + "}"), wantErr: ErrInvalidArgument},
		{name: "trailing bracket", data: []byte(valid + " ]"), wantErr: ErrInvalidArgument},
		{name: "unknown field", data: []byte(strings.Replace(valid, `{"version":1,`, `{"version":1,"extra":true,`, 1)), wantErr: ErrInvalidArgument},
		{name: "version 0", data: doc("0", metaJSON, okNodes, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "version 2", data: doc("2", metaJSON, okNodes, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "huge version", data: doc("18446744073709551616", metaJSON, okNodes, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "no meta", data: doc("1", "null", okNodes, "[]", "[]"), wantAs: &metadataError},
		{name: "bad meta", data: doc("1", `{"version":2,"brokers":[0],"topics":{}}`, okNodes, "[]", "[]"), wantAs: &metadataError},
		{name: "node id 0", data: doc("1", metaJSON, `[{"id":0,"addr":"a:1","http_addr":""}]`, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "node without address", data: doc("1", metaJSON, `[{"id":1,"addr":"","http_addr":"a:2"}]`, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "node Kafka address not host:port", data: doc("1", metaJSON, `[{"id":1,"addr":"a:1","http_addr":"","kafka_addr":"a"}]`, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "node unknown field", data: doc("1", metaJSON, `[{"id":1,"addr":"a:1","http_addr":"","rack":"r"}]`, "[]", "[]"), wantErr: ErrInvalidArgument},
		{name: "negative offset value", data: doc("1", metaJSON, okNodes, `[{"consumer":"c","topic":"orders","partition":0,"offset":-1}]`, "[]"), wantErr: ErrInvalidArgument},
		{name: "journal gap", data: doc("1", metaJSON, okNodes, "[]", journal(5, 7)), wantErr: ErrInvalidArgument},
		{name: "journal backwards", data: doc("1", metaJSON, okNodes, "[]", journal(5, 4)), wantErr: ErrInvalidArgument},
		{name: "journal repeated offset", data: doc("1", metaJSON, okNodes, "[]", journal(5, 5)), wantErr: ErrInvalidArgument},
		{name: "journal entry invalid", data: doc("1", metaJSON, okNodes, "[]", `[{"offset":0,"time":"2024-12-02T09:20:00Z","entry":{"event":"x","phase":"done","by":"operator","partition":0,"broker":0,"summary":""}}]`), wantErr: ErrInvalidArgument},
		{name: "journal entry null", data: doc("1", metaJSON, okNodes, "[]", `[{"offset":0,"time":"2024-12-02T09:20:00Z","entry":null}]`), wantErr: ErrInvalidArgument},
		{name: "journal time not a time", data: doc("1", metaJSON, okNodes, "[]", `[{"offset":0,"time":"yesterday","entry":`+entry+`}]`), wantErr: ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetaState(tc.data)
			require.Error(t, err)
			require.Nil(t, got)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			}
			if tc.wantAs != nil {
				require.ErrorAs(t, err, tc.wantAs)
			}
		})
	}
}

// Rule (EncodeMetaCommand, ParseMetaCommand): a command survives its wire
// form unchanged; the parser takes JSON with MetaCommand's fields and
// nothing else — no unknown field (at any depth), no trailing data — and
// refuses anything else with ErrInvalidArgument.
func TestMetaStateParseCommand(t *testing.T) {
	entry := &JournalEntry{Event: EventRecover, Phase: PhaseIntent, By: ByController, Topic: "orders", Summary: "s",
		Before: &PartitionMetadata{Leader: 1, Replicas: []int{1, 2}, Active: []int{1}}, After: &PartitionMetadata{Leader: 1, Replicas: []int{1, 2}, Active: []int{1, 2}}}
	t.Run("round trip", func(t *testing.T) {
		for i, c := range append(metaScript(),
			MetaCommand{},
			MetaCommand{Op: OpJournal, Time: metaT0.In(time.FixedZone("", 5*3600)).Add(17), Entry: entry},
			MetaCommand{Op: OpResetOffset, Consumer: "c", Topic: "t", Partition: 3, Offset: math.MaxUint64, Epoch: math.MaxUint64},
		) {
			raw, err := EncodeMetaCommand(c)
			require.NoError(t, err)
			got, err := ParseMetaCommand(raw)
			require.NoError(t, err, "command %d: %s", i, raw)
			require.True(t, c.Time.Equal(got.Time), "command %d", i)
			got.Time = c.Time
			if len(c.Leave) == 0 {
				require.Empty(t, got.Leave)
				got.Leave = c.Leave
			}
			require.Equal(t, c, got, "command %d", i)
			again, err := EncodeMetaCommand(got)
			require.NoError(t, err)
			require.Equal(t, string(raw), string(again))
		}
	})

	valid := `{"op":"commit-offset","time":"2024-12-02T09:20:00Z","consumer":"c","topic":"t","offset":3}`
	_, err := ParseMetaCommand([]byte(valid))
	require.NoError(t, err)
	cases := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"whitespace", " \n"},
		{"not JSON", "commit"},
		{"array", "[]"},
		{"string", `"commit-offset"`},
		{"unknown field", `{"op":"commit-offset","group":"g"}`},
		{"unknown node field", `{"op":"register-node","node":{"id":1,"addr":"a:1","http_addr":"","rack":"r"}}`},
		{"unknown entry field", `{"op":"journal","entry":{"event":"catch-up","phase":"done","by":"operator","partition":0,"broker":0,"summary":"","extra":1}}`},
		{"entry offset is not a field", `{"op":"journal","entry":{"event":"catch-up","phase":"done","by":"operator","partition":0,"broker":0,"summary":"","Offset":1}}`},
		{"trailing garbage", valid + "garbage"},
		{"trailing value", valid + valid},
		{"trailing number", valid + " 1"},
		{"trailing brace", valid + "}"},
		{"trailing bracket", valid + "\n]"},
		{"truncated", valid[:len(valid)-1]},
		{"wrong type", `{"op":"commit-offset","offset":"3"}`},
		{"negative offset", `{"op":"commit-offset","offset":-3}`},
		{"huge offset", `{"op":"commit-offset","offset":18446744073709551616}`},
		{"huge partition", `{"op":"commit-offset","partition":92233720368547758070}`},
		{"bad time", `{"op":"commit-offset","time":"now"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseMetaCommand([]byte(tc.data))
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.Equal(t, MetaCommand{}, c)
		})
	}
}

// Rule (Clone, MetaResult): a clone shares nothing with its state, and
// nothing Apply returns or was given aliases the state — so that changing
// a copy, a result or a command after the fact never changes what a node
// holds (and so what it would snapshot).
func TestMetaStateNoAliasing(t *testing.T) {
	cases := []struct {
		name string
		// use takes what the case is about from s (a clone, a result, a
		// command it applies) and returns the change made to it afterwards.
		use func(t *testing.T, s *MetaState) (change func())
	}{
		{"clone", func(t *testing.T, s *MetaState) func() {
			c := s.Clone()
			return func() {
				c.Meta.Brokers[0] = 42
				c.Meta.Topics["orders"].Partitions[0].Active[0] = 42
				c.Nodes[1] = NodeInfo{ID: 1, Addr: "changed"}
				c.Offsets[OffsetKey{"billing", "orders", 0}] = 42
				last := c.Journal[len(c.Journal)-1]
				last.After.Leader, last.Before.Active[0] = 42, 42
				c.Journal[0].Summary = "changed"
			}
		}},
		{"partition", func(t *testing.T, s *MetaState) func() {
			pm, err := s.Partition("orders", 0)
			require.NoError(t, err)
			return func() { pm.Active[0], pm.Replicas[0] = 42, 42 }
		}},
		{"leadership result", func(t *testing.T, s *MetaState) func() {
			res := mustApply(t, s, MetaCommand{Op: OpMoveLeader, Time: metaT0, Topic: "orders", Partition: 1, Broker: 3})
			return func() { res.Partition.Leader, res.Partition.Active[0] = 42, 42 }
		}},
		{"journal command", func(t *testing.T, s *MetaState) func() {
			intent := uint64(3)
			e := &JournalEntry{Event: EventFailover, Phase: PhaseIntent, By: ByController, Topic: "orders", Summary: "s", Intent: &intent,
				Before: &PartitionMetadata{Leader: 1, Replicas: []int{1, 2}, Active: []int{1, 2}}, After: &PartitionMetadata{Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2}, Active: []int{2}}}
			mustApply(t, s, MetaCommand{Op: OpJournal, Time: metaT0, Entry: e})
			return func() { e.Before.Active[0], e.After.Leader, e.Summary, intent = 42, 42, "changed", 42 }
		}},
		{"node command", func(t *testing.T, s *MetaState) func() {
			n := metaNode(5)
			mustApply(t, s, MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: n})
			return func() { n.Addr = "changed" }
		}},
		{"failover command", func(t *testing.T, s *MetaState) func() {
			c := MetaCommand{Op: OpFailover, Time: metaT0, Topic: "orders", Partition: 1, Broker: 1, Leave: []int{3}}
			mustApply(t, s, c)
			return func() { c.Leave[0] = 1 }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newMetaState(t, 3)
			mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 3})
			mustApply(t, s, MetaCommand{Op: OpCommitOffset, Time: metaT0, Consumer: "billing", Topic: "orders", Offset: 3})
			mustApply(t, s, MetaCommand{Op: OpFailover, Time: metaT0, Topic: "orders", Broker: 2})
			change := tc.use(t, s)
			want := encodeMeta(t, s)
			change()
			require.Equal(t, string(want), string(encodeMeta(t, s)), "the state is not changed through the %s", tc.name)
		})
	}
}

// Rule (OpSetHealing): automatic healing is a fact of the metadata, nil
// until the operator first switches it ("as each node is configured").
// A switch sets it and journals one healing entry, by the operator, with
// the reason; switching it to what it already is changes nothing and
// journals nothing; a command without automatic is ErrInvalidArgument.
// The fact survives a snapshot, and a snapshot written before it existed
// (no "healing") loads as never switched.
func TestMetaStateSetHealing(t *testing.T) {
	s := newMetaState(t, 3)
	require.Nil(t, s.Healing, "never switched")
	plain := encodeMeta(t, s)
	require.NotContains(t, string(plain), `"healing"`, "a state never switched is encoded as before the field")

	err := applyRefused(t, s, MetaCommand{Op: OpSetHealing, Time: metaT0, Reason: "no value"})
	require.ErrorIs(t, err, ErrInvalidArgument)

	off := false
	end := s.JournalEnd()
	mustApply(t, s, MetaCommand{Op: OpSetHealing, Time: metaT0, By: ByOperator, Reason: "maintenance", Automatic: &off})
	require.NotNil(t, s.Healing)
	require.False(t, *s.Healing)
	require.Equal(t, end+1, s.JournalEnd(), "one entry")
	e := s.Journal[len(s.Journal)-1]
	require.Equal(t, EventHealing, e.Event)
	require.Equal(t, ByOperator, e.By)
	require.Equal(t, "maintenance", e.Reason)
	require.Equal(t, HealingSummary(false), e.Summary)
	require.NotNil(t, e.Automatic)
	require.False(t, *e.Automatic)
	require.Equal(t, metaT0, e.Time)

	before := encodeMeta(t, s)
	mustApply(t, s, MetaCommand{Op: OpSetHealing, Time: metaT0.Add(time.Second), Reason: "again", Automatic: &off})
	require.Equal(t, string(before), string(encodeMeta(t, s)), "already off: nothing changes, nothing is journaled")

	back, err := ParseMetaState(before)
	require.NoError(t, err)
	require.NotNil(t, back.Healing)
	require.False(t, *back.Healing)
	require.Equal(t, string(before), string(encodeMeta(t, back)))
	require.False(t, *s.Clone().Healing)

	old, err := ParseMetaState(plain)
	require.NoError(t, err, "a snapshot from before the field")
	require.Nil(t, old.Healing)

	on := true
	mustApply(t, s, MetaCommand{Op: OpSetHealing, Time: metaT0, Reason: "done", Automatic: &on})
	require.True(t, *s.Healing)
	require.True(t, *s.Journal[len(s.Journal)-1].Automatic)
	require.Equal(t, end+2, s.JournalEnd())
	on = false
	require.True(t, *s.Healing, "the state shares nothing with the command")
}

// Rule (MetaState.Healing): while automatic healing is switched off, the
// controller's changes of leadership and of the active set are refused
// with ErrHealingOff and change nothing, whatever the controller decided
// them on; an operator's are not; switched on, the controller's apply.
func TestMetaStateHealingOffRefusesTheController(t *testing.T) {
	s := newMetaState(t, 3)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 1, ReplicationFactor: 3})
	off, on := false, true
	mustApply(t, s, MetaCommand{Op: OpSetHealing, Time: metaT0, Reason: "maintenance", Automatic: &off})
	for _, op := range []MetaOp{OpFailover, OpMoveLeader, OpDeactivate} {
		before := encodeMeta(t, s)
		err := applyRefused(t, s, MetaCommand{Op: op, Time: metaT0, By: ByController, Topic: "orders", Partition: 0, Broker: 2})
		require.ErrorIs(t, err, ErrHealingOff, "%s", op)
		require.Equal(t, string(before), string(encodeMeta(t, s)), "%s refused: nothing changed", op)
	}
	mustApply(t, s, MetaCommand{Op: OpDeactivate, Time: metaT0, By: ByOperator, Topic: "orders", Partition: 0, Broker: 3})
	err := applyRefused(t, s, MetaCommand{Op: OpActivate, Time: metaT0, By: ByController, Topic: "orders", Partition: 0, Broker: 3})
	require.ErrorIs(t, err, ErrHealingOff)
	mustApply(t, s, MetaCommand{Op: OpSetHealing, Time: metaT0, Reason: "done", Automatic: &on})
	mustApply(t, s, MetaCommand{Op: OpActivate, Time: metaT0, By: ByController, Topic: "orders", Partition: 0, Broker: 3})
	mustApply(t, s, MetaCommand{Op: OpFailover, Time: metaT0, By: ByController, Topic: "orders", Partition: 0, Broker: 2})
}
