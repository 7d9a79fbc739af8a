package nodebackend

import (
	"context"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/topic"
)

// Backend is a cluster node as every interface of package backend: its
// data, topic administration and operations are its cluster.Cluster's —
// the same as one process's (backend.Local), answered in cluster mode by
// the process that must — and its controller, membership and group home
// are the node's. Every error it returns is marked (mark). It is safe for
// concurrent use.
type Backend struct {
	node  *clusternode.Node
	local *backend.Local
}

// New returns node as a backend.
func New(node *clusternode.Node) *Backend {
	return &Backend{node: node, local: &backend.Local{Cluster: node.Cluster()}}
}

var (
	_ backend.Data       = (*Backend)(nil)
	_ backend.TopicAdmin = (*Backend)(nil)
	_ backend.Storage    = (*Backend)(nil)
	_ backend.Operator   = (*Backend)(nil)
	_ backend.Membership = (*Backend)(nil)
)

// Node is the node the backend serves.
func (b *Backend) Node() *clusternode.Node { return b.node }

// Root is the node's data directory.
func (b *Backend) Root() string { return b.local.Root() }

// Close closes the node.
func (b *Backend) Close() error { return b.node.Close() }

// --- Data ---

// MetadataCurrent reports whether the node's copy of the metadata is
// replayed up to its registration.
func (b *Backend) MetadataCurrent() bool { return b.local.MetadataCurrent() }

// Brokers lists every registered broker with its availability, as the
// controller knows it.
func (b *Backend) Brokers() []cluster.BrokerInfo { return b.local.Brokers() }

// Topics lists every topic of the node's metadata.
func (b *Backend) Topics() []cluster.TopicInfo { return b.local.Topics() }

// Topic describes one topic.
func (b *Backend) Topic(name string) (cluster.TopicInfo, error) { return marked(b.local.Topic(name)) }

// Status is a partition's status as the controller knows it.
func (b *Backend) Status(topicName string, partition int) (cluster.PartitionStatus, error) {
	return marked(b.local.Status(topicName, partition))
}

// MaxPayloadSize is the node's record size limit.
func (b *Backend) MaxPayloadSize() int { return b.local.MaxPayloadSize() }

// Send writes through the partitions' leaders.
func (b *Backend) Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	return marked(b.local.Send(topicName, partition, msgs))
}

// SendQueued queues for the partition's leader.
func (b *Backend) SendQueued(topicName string, partition int, msgs []topic.Message) cluster.Queued {
	q := b.local.SendQueued(topicName, partition, msgs)
	wait := q.Wait
	q.Wait = func() ([]cluster.SendResult, error) { return marked(wait()) }
	return q
}

// NewProducerID reserves producer ids through the metadata group.
func (b *Backend) NewProducerID(ctx context.Context) (int64, error) {
	return marked(b.local.NewProducerID(ctx))
}

// InitTransactions asks the transaction coordinator, through the
// metadata group.
func (b *Backend) InitTransactions(ctx context.Context, id string, timeout time.Duration, producerID int64, epoch int16) (int64, int16, error) {
	pid, e, err := b.local.InitTransactions(ctx, id, timeout, producerID, epoch)
	return pid, e, mark(err)
}

// AddPartitionsToTxn adds partitions to the open transaction.
func (b *Backend) AddPartitionsToTxn(ctx context.Context, id string, producerID int64, epoch int16, parts []cluster.TxnPartition) error {
	return mark(b.local.AddPartitionsToTxn(ctx, id, producerID, epoch, parts))
}

// AddOffsetsToTxn adds a consumer group to the open transaction.
func (b *Backend) AddOffsetsToTxn(ctx context.Context, id string, producerID int64, epoch int16, group string) error {
	return mark(b.local.AddOffsetsToTxn(ctx, id, producerID, epoch, group))
}

// TxnOffsetCommit keeps offsets to commit with the transaction.
func (b *Backend) TxnOffsetCommit(ctx context.Context, id string, producerID int64, epoch int16, offsets []cluster.TxnOffset) error {
	return mark(b.local.TxnOffsetCommit(ctx, id, producerID, epoch, offsets))
}

// EndTxn commits or aborts the open transaction.
func (b *Backend) EndTxn(ctx context.Context, id string, producerID int64, epoch int16, commit bool) error {
	return mark(b.local.EndTxn(ctx, id, producerID, epoch, commit))
}

// Transactions lists the transactional ids of the node's metadata.
func (b *Backend) Transactions() ([]cluster.Transaction, error) {
	return marked(b.local.Transactions())
}

// ReadStable reads a read_committed consumer's records from the
// partition's leader.
func (b *Backend) ReadStable(topicName string, partition int, start uint64, maxRecords int) (cluster.StableRead, error) {
	return marked(b.local.ReadStable(topicName, partition, start, maxRecords))
}

// ReadCommitted reads from the partition's leader.
func (b *Backend) ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error) {
	return marked(b.local.ReadCommitted(topicName, partition, start, maxRecords))
}

// HighWatermark is the partition's high watermark.
func (b *Backend) HighWatermark(topicName string, partition int) (uint64, error) {
	return marked(b.local.HighWatermark(topicName, partition))
}

// Bounds is the partition's readable range.
func (b *Backend) Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error) {
	logStart, highWatermark, err = b.local.Bounds(topicName, partition)
	return logStart, highWatermark, mark(err)
}

// OffsetForTime searches by time on the partition's leader.
func (b *Backend) OffsetForTime(topicName string, partition int, ts int64) (uint64, bool, error) {
	off, found, err := b.local.OffsetForTime(topicName, partition, ts)
	return off, found, mark(err)
}

// LeaderEpochs reads the leader-epoch history of the partition's leader.
func (b *Backend) LeaderEpochs(topicName string, partition int) (cluster.LeaderEpochs, error) {
	return marked(b.local.LeaderEpochs(topicName, partition))
}

// ListOffsets lists a consumer's committed offsets.
func (b *Backend) ListOffsets(consumerID string) ([]client.CommittedOffset, error) {
	return marked(b.local.ListOffsets(consumerID))
}

// LoadOffset reads one committed offset.
func (b *Backend) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	off, ok, err := b.local.LoadOffset(consumerID, topicName, partition)
	return off, ok, mark(err)
}

// ListAllOffsets lists every committed offset.
func (b *Backend) ListAllOffsets() ([]client.StoredOffset, error) {
	return marked(b.local.ListAllOffsets())
}

// CommitOffset commits through the metadata group.
func (b *Backend) CommitOffset(consumerID, topicName string, partition int, offset uint64) error {
	return mark(b.local.CommitOffset(consumerID, topicName, partition, offset))
}

// ResetOffset resets through the metadata group.
func (b *Backend) ResetOffset(consumerID, topicName string, partition int, offset uint64) error {
	return mark(b.local.ResetOffset(consumerID, topicName, partition, offset))
}

// DeleteOffsets deletes a consumer's offsets through the metadata group.
func (b *Backend) DeleteOffsets(consumerID string) (int, error) {
	return marked(b.local.DeleteOffsets(consumerID))
}

// DeleteOffset deletes a consumer's offset on one partition through the
// metadata group.
func (b *Backend) DeleteOffset(consumerID, topicName string, partition int) (bool, error) {
	return marked(b.local.DeleteOffset(consumerID, topicName, partition))
}

// --- TopicAdmin ---

// CreateTopicWithConfig creates a topic through the metadata group.
func (b *Backend) CreateTopicWithConfig(name string, partitions, replicationFactor int, config map[string]string) error {
	return mark(b.local.CreateTopicWithConfig(name, partitions, replicationFactor, config))
}

// AddPartitions grows a topic through the metadata group; each node
// creates its replicas of the new partitions as it first uses them.
func (b *Backend) AddPartitions(name string, partitions int) error {
	return mark(b.local.AddPartitions(name, partitions))
}

// TopicConfig is a topic's effective configuration.
func (b *Backend) TopicConfig(name string) (topic.Config, error) {
	return marked(b.local.TopicConfig(name))
}

// TopicConfigOverrides are the keys set for a topic.
func (b *Backend) TopicConfigOverrides(name string) (map[string]string, error) {
	return marked(b.local.TopicConfigOverrides(name))
}

// TopicDefaults is the node's server-wide topic configuration.
func (b *Backend) TopicDefaults() topic.Config { return b.local.TopicDefaults() }

// AlterTopicConfig sets and removes overrides through the metadata group.
func (b *Backend) AlterTopicConfig(name string, set map[string]string, remove []string) (topic.Config, error) {
	return marked(b.local.AlterTopicConfig(name, set, remove))
}

// DeleteTopic deletes a topic through the metadata group; every node
// holding its replicas removes their files as it learns of it.
func (b *Backend) DeleteTopic(name string) (cluster.DeleteTopicResult, error) {
	return marked(b.local.DeleteTopic(name))
}

// AdvanceLogStart raises a partition's log start, on its leader's
// process.
func (b *Backend) AdvanceLogStart(topicName string, partition int, offset uint64, reason string) (cluster.RetentionResult, error) {
	return marked(b.local.AdvanceLogStart(topicName, partition, offset, reason))
}

// --- Storage ---

// BrokerUsage reads the node's own broker's replicas and file system.
func (b *Backend) BrokerUsage(id int, topics []string) (cluster.BrokerUsage, error) {
	return marked(b.local.BrokerUsage(id, topics))
}

// --- Operator ---

// Journal reads the replicated journal.
func (b *Backend) Journal(since uint64, max int) ([]cluster.JournalEntry, error) {
	return marked(b.local.Journal(since, max))
}

// JournalEnd is the offset the next journal entry gets.
func (b *Backend) JournalEnd() (uint64, error) { return marked(b.local.JournalEnd()) }

// StopBroker is refused in cluster mode: a broker is a process.
func (b *Backend) StopBroker(id int) error { return mark(b.local.StopBroker(id)) }

// StartBroker is refused in cluster mode: a broker is a process.
func (b *Backend) StartBroker(id int) error { return mark(b.local.StartBroker(id)) }

// ReopenBroker reopens a broker's failed logs, on its process.
func (b *Backend) ReopenBroker(id int) (cluster.ReopenResult, error) {
	return marked(b.local.ReopenBroker(id))
}

// Failover fails a partition over, on the controller's process.
func (b *Backend) Failover(topicName string, partition int) (cluster.FailoverResult, error) {
	return marked(b.local.Failover(topicName, partition))
}

// CatchUp catches a follower up, on the leader's process.
func (b *Backend) CatchUp(topicName string, partition, followerID int) (cluster.CatchUpResult, error) {
	return marked(b.local.CatchUp(topicName, partition, followerID))
}

// RecoverReplica recovers an inactive replica, on the leader's process.
func (b *Backend) RecoverReplica(topicName string, partition, brokerID int) (cluster.RecoveryResult, error) {
	return marked(b.local.RecoverReplica(topicName, partition, brokerID))
}

// MoveLeader moves a partition's leadership, on the leader's process.
func (b *Backend) MoveLeader(topicName string, partition, brokerID int) (cluster.MoveResult, error) {
	return marked(b.local.MoveLeader(topicName, partition, brokerID))
}

// EnforceRetention runs the node's pass over the partitions it leads.
func (b *Backend) EnforceRetention() ([]cluster.RetentionResult, error) {
	return marked(b.local.EnforceRetention())
}

// Wake wakes the controller, where it runs.
func (b *Backend) Wake() { b.node.Wake() }

// Ready is the node's readiness.
func (b *Backend) Ready() (bool, []string) { return b.node.Ready() }

// ForgetTopic has the controller forget a deleted topic.
func (b *Backend) ForgetTopic(name string) { b.node.ForgetTopic(name) }

// AutomaticHealing is the switch as this node's copy of the metadata has
// it, with this node's failover delay; always switchable.
func (b *Backend) AutomaticHealing() (on bool, failoverAfter time.Duration, switchable bool) {
	on, failoverAfter = b.node.AutomaticHealing()
	return on, failoverAfter, true
}

// SetAutomaticHealing proposes the set-healing command through the
// metadata group, from whichever node is asked.
func (b *Backend) SetAutomaticHealing(ctx context.Context, on bool, reason string) (bool, error) {
	return marked(b.node.SetAutomaticHealing(ctx, on, reason))
}

// --- Membership ---

// ClusterNodes lists the metadata group's voters and the registered
// brokers.
func (b *Backend) ClusterNodes() (int, []backend.NodeView, error) {
	controller, nodes, err := b.node.ClusterNodes()
	if err != nil {
		return 0, nil, mark(err)
	}
	return controller, nodes, nil
}

// AddNode adds a voter through the metadata group's leader.
func (b *Backend) AddNode(ctx context.Context, id int, addr string) error {
	return mark(b.node.AddNode(ctx, id, addr))
}

// RemoveNode removes a voter through the metadata group's leader.
func (b *Backend) RemoveNode(ctx context.Context, id int) error {
	return mark(b.node.RemoveNode(ctx, id))
}

// Controller is the node that leads the metadata group as this node knows
// it; 0 when none is known.
func (b *Backend) Controller() int { return b.node.Controller() }

// KafkaAddrs maps every registered node that serves Kafka to its
// advertised address (kafka.Directory).
func (b *Backend) KafkaAddrs() map[int]string {
	out := map[int]string{}
	for _, n := range b.node.Nodes() {
		if n.KafkaAddr != "" {
			out[n.ID] = n.KafkaAddr
		}
	}
	return out
}
