package backend

import (
	"context"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// MaxBrokers is the most brokers a PyStream cluster has: broker and node
// ids run from 1 to it.
const MaxBrokers = 64

// Data is what a client of the cluster reads and writes: the brokers and
// topics that say where records are, the records themselves, and the
// consumers' committed offsets. Both protocols serve it, and both modes
// offer all of it. An implementation must be safe for concurrent use.
type Data interface {
	// MetadataCurrent reports whether the metadata this server answers
	// from is known to be current (cluster.Cluster.MetadataCurrent): a
	// node of cluster mode that is still replaying its copy after a start
	// is not, and every answer that depends on the metadata — topics,
	// records, offsets, groups — is then "not ready, try again", never
	// "unknown" or empty.
	MetadataCurrent() bool
	// Brokers lists every broker, ascending by id, with its availability.
	Brokers() []cluster.BrokerInfo
	// Topics lists every topic; Topic describes one.
	Topics() []cluster.TopicInfo
	Topic(name string) (cluster.TopicInfo, error)
	// Status is a partition's leader, leader epoch, placement, active set
	// and every replica's availability, log end and lag.
	Status(topicName string, partition int) (cluster.PartitionStatus, error)
	// MaxPayloadSize is the largest payload a record may carry.
	MaxPayloadSize() int
	// Send writes msgs: to one partition when partition is set, routed
	// by key otherwise, with cluster.Producer's results and errors. It
	// returns once every active replica holds them durably.
	Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error)
	// SendQueued is Send to one partition in two steps
	// (cluster.Producer.SendBatchToQueued): the records are queued for
	// the partition's leader before it returns, and Queued.Wait returns Send's
	// results. Records queued one call after the other reach the
	// partition in that order: a Kafka connection's pipelined produce
	// requests.
	SendQueued(topicName string, partition int, msgs []topic.Message) cluster.Queued
	// ReadCommitted reads up to maxRecords records from start, never
	// past the high watermark.
	ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error)
	// HighWatermark is the offset below which every active replica holds
	// every record.
	HighWatermark(topicName string, partition int) (uint64, error)
	// Bounds is a partition's readable range: its leader's log start and
	// its high watermark (cluster.Cluster.Bounds).
	Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error)
	// OffsetForTime is the first offset whose record's timestamp
	// (nanoseconds) is at or after ts, searched on the leader; found
	// false, and the high watermark, when none below it is
	// (cluster.Cluster.OffsetForTime).
	OffsetForTime(topicName string, partition int, ts int64) (offset uint64, found bool, err error)
	// LeaderEpochs is a partition's leader's leader-epoch history, log
	// start and log end (cluster.Cluster.LeaderEpochs): what a Kafka
	// OffsetForLeaderEpoch answers from.
	LeaderEpochs(topicName string, partition int) (cluster.LeaderEpochs, error)
	// NewProducerID is a producer id never handed out before in the
	// cluster, for an idempotent producer (cluster.Cluster.NewProducerID).
	NewProducerID(ctx context.Context) (int64, error)
	Offsets
	Transactions
}

// Transactions are Kafka's transactions (KIP-98) in PyStream's terms: the
// transaction coordinator's requests, answered where consumer groups are
// coordinated (GroupHome), and the read of a read_committed consumer
// (cluster/transactions.go, cluster/markers.go). Refusals are
// *cluster.TxnError values (cluster.ErrProducerFenced and the rest).
type Transactions interface {
	// InitTransactions gives transactional id its producer id and a new
	// epoch, fencing every older one; producerID and epoch are the
	// caller's current ones (-1 when it has none).
	InitTransactions(ctx context.Context, id string, timeout time.Duration, producerID int64, epoch int16) (int64, int16, error)
	// AddPartitionsToTxn and AddOffsetsToTxn add partitions, and a
	// consumer group, to the id's open transaction (opening one).
	AddPartitionsToTxn(ctx context.Context, id string, producerID int64, epoch int16, parts []cluster.TxnPartition) error
	AddOffsetsToTxn(ctx context.Context, id string, producerID int64, epoch int16, group string) error
	// TxnOffsetCommit keeps consumer offsets to commit when, and only
	// if, the transaction commits.
	TxnOffsetCommit(ctx context.Context, id string, producerID int64, epoch int16, offsets []cluster.TxnOffset) error
	// EndTxn commits or aborts the open transaction.
	EndTxn(ctx context.Context, id string, producerID int64, epoch int16, commit bool) error
	// Transactions lists every transactional id's state, by id.
	Transactions() ([]cluster.Transaction, error)
	// ReadStable reads up to maxRecords records from start, never past
	// the last stable offset, with the aborted transactions among them;
	// maxRecords 0 gives only the bounds.
	ReadStable(topicName string, partition int, start uint64, maxRecords int) (cluster.StableRead, error)
}

// Offsets are the consumers' committed offsets (phase 3): durable, never
// moved backwards by a commit, never past the high watermark.
type Offsets interface {
	// ListOffsets is every offset a consumer committed.
	ListOffsets(consumerID string) ([]client.CommittedOffset, error)
	// LoadOffset is a consumer's committed offset on a partition; ok
	// false when it never committed there.
	LoadOffset(consumerID, topicName string, partition int) (offset uint64, ok bool, err error)
	// ListAllOffsets is every offset every consumer committed.
	ListAllOffsets() ([]client.StoredOffset, error)
	// CommitOffset stores a consumer's offset: never below the one
	// committed, never past the high watermark.
	CommitOffset(consumerID, topicName string, partition int, offset uint64) error
	// ResetOffset stores a consumer's offset wherever it is in the log,
	// backwards too.
	ResetOffset(consumerID, topicName string, partition int, offset uint64) error
	// DeleteOffsets deletes every committed offset of a consumer (a
	// consumer group deleted) and returns how many there were.
	DeleteOffsets(consumerID string) (int, error)
	// DeleteOffset deletes a consumer's offset on one partition and
	// reports whether there was one.
	DeleteOffset(consumerID, topicName string, partition int) (bool, error)
}

// TopicAdmin creates, grows, configures and deletes topics.
type TopicAdmin interface {
	// CreateTopicWithConfig creates a topic with configuration overrides
	// (topic.ConfigKeys), checking everything before creating anything.
	CreateTopicWithConfig(name string, partitions, replicationFactor int, config map[string]string) error
	// AddPartitions grows a topic to partitions partitions
	// (cluster.Cluster.AddPartitions): more than it has, each new one
	// placed and created before the new count is committed.
	AddPartitions(name string, partitions int) error
	// TopicConfig is a topic's effective configuration, and
	// TopicConfigOverrides the keys set for it.
	TopicConfig(name string) (topic.Config, error)
	TopicConfigOverrides(name string) (map[string]string, error)
	// TopicDefaults is the server-wide topic configuration a topic's
	// overrides lie over (cluster.Cluster.TopicDefaults): what a key not
	// overridden is.
	TopicDefaults() topic.Config
	// AlterTopicConfig sets and removes overrides (cluster/topicconfig.go).
	AlterTopicConfig(name string, set map[string]string, remove []string) (topic.Config, error)
	// DeleteTopic deletes a topic, its records and its committed offsets.
	DeleteTopic(name string) (cluster.DeleteTopicResult, error)
	// AdvanceLogStart raises a partition's log start on its leader and
	// followers, as retention does (cluster.Cluster.AdvanceLogStart): a
	// Kafka DeleteRecords.
	AdvanceLogStart(topicName string, partition int, offset uint64, reason string) (cluster.RetentionResult, error)
}

// Storage is what the brokers of this process keep on disk: Kafka's log
// directories (DescribeLogDirs).
type Storage interface {
	// BrokerUsage reads the replicas of broker id, which must run in
	// this process, and the space of its file system
	// (cluster.Cluster.BrokerUsage): of every topic when topics is nil,
	// of those named otherwise.
	BrokerUsage(id int, topics []string) (cluster.BrokerUsage, error)
}

// Operator is what an operator does to the cluster by hand, and the
// controller loop that does the same on its own. An operation a mode does
// not offer returns an error wrapping ErrNotInThisMode.
type Operator interface {
	// Journal returns up to max entries from offset since on, oldest
	// first; JournalEnd is the offset the next entry will get.
	Journal(since uint64, max int) ([]cluster.JournalEntry, error)
	JournalEnd() (uint64, error)
	// StopBroker closes a broker as if its machine had failed;
	// StartBroker opens it again (cluster.ErrBrokerRegistered when it
	// runs); ReopenBroker opens a running broker's failed logs again.
	StopBroker(id int) error
	StartBroker(id int) error
	ReopenBroker(id int) (cluster.ReopenResult, error)
	// Failover, CatchUp, RecoverReplica and MoveLeader are phase 5's
	// repairs of one partition (cluster.Cluster's methods of the same
	// names).
	Failover(topicName string, partition int) (cluster.FailoverResult, error)
	CatchUp(topicName string, partition, followerID int) (cluster.CatchUpResult, error)
	RecoverReplica(topicName string, partition, brokerID int) (cluster.RecoveryResult, error)
	MoveLeader(topicName string, partition, brokerID int) (cluster.MoveResult, error)
	// EnforceRetention runs one retention pass (cluster.EnforceRetention);
	// in cluster mode, over the partitions this node leads.
	EnforceRetention() ([]cluster.RetentionResult, error)
	Controller
}

// Controller is the loop that keeps the cluster serving (failover,
// catch-up, recovery, leader moves): the embedded cluster's
// server/controller, or in cluster mode the one that runs wherever the
// metadata group's leader is.
type Controller interface {
	// Wake has the controller plan again at once, after a change.
	Wake()
	// Ready reports whether every partition can be served, with the
	// reasons when not.
	Ready() (bool, []string)
	// ForgetTopic drops what the controller remembers of a deleted topic.
	ForgetTopic(name string)
	// AutomaticHealing says whether the controller heals the cluster on
	// its own, after which failover delay, and whether it can be switched
	// at run time.
	AutomaticHealing() (on bool, failoverAfter time.Duration, switchable bool)
	// SetAutomaticHealing switches automatic healing on or off, journaled
	// with reason; changed is false when it already was so.
	SetAutomaticHealing(ctx context.Context, on bool, reason string) (changed bool, err error)
}

// Membership is the metadata group of a cluster of processes: its voters,
// which change by hand. The embedded cluster has none (its brokers are
// part of one process): there the wiring passes no Membership at all.
type Membership interface {
	// ClusterNodes lists the voters of the metadata group and the
	// registered brokers, by id, and names the controller (0 when there
	// is none).
	ClusterNodes() (controller int, nodes []NodeView, err error)
	// AddNode makes node id, listening at addr, a voter; RemoveNode
	// takes one out. Both are forwarded to the group's leader.
	AddNode(ctx context.Context, id int, addr string) error
	RemoveNode(ctx context.Context, id int) error
}

// NodeView is one node of the metadata group as an operator sees it.
type NodeView struct {
	ID int
	// Addr is its internal address; HTTPAddr its client address and
	// KafkaAddr the address its Kafka listener advertises ("" when it
	// serves none), once it has registered.
	Addr      string
	HTTPAddr  string
	KafkaAddr string
	// Voter is true for a member of the Raft configuration.
	Voter bool
	// Leader is true for the node that leads the metadata group: the
	// controller.
	Leader bool
}

// GroupHome is the one rule of where consumer groups are coordinated,
// which both protocols follow: the HTTP API answers a group request
// elsewhere with 421 not_coordinator, the Kafka listener with
// NOT_COORDINATOR and FindCoordinator's answer.
type GroupHome interface {
	// GroupCoordinator names the node that coordinates consumer groups
	// (0 while none is known, and in the embedded cluster) and reports
	// whether it is this server.
	GroupCoordinator() (id int, here bool)
}

// HereHome is the GroupHome of a server that coordinates every group
// itself: the embedded cluster's.
type HereHome struct{}

// GroupCoordinator is (0, true).
func (HereHome) GroupCoordinator() (int, bool) { return 0, true }
