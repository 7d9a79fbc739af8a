package server

import (
	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// Backend is what the HTTP API serves: the embedded cluster of logical
// brokers (LocalBackend, the default) or, in cluster mode, this process's
// broker among others on the network (server/clusternode). The handlers
// know only this interface, so both modes answer every route alike; an
// operation a mode does not offer returns an error wrapping
// ErrNotInThisMode.
type Backend interface {
	// Root is the data directory; the API never shows it (apierror.go
	// rewrites it out of error texts).
	Root() string
	Brokers() []cluster.BrokerInfo
	Topics() []cluster.TopicInfo
	Topic(name string) (cluster.TopicInfo, error)
	Status(topicName string, partition int) (cluster.PartitionStatus, error)
	CreateTopic(name string, partitions, replicationFactor int) error
	// CreateTopicWithConfig is CreateTopic with configuration overrides
	// (cluster.Cluster.CreateTopicWithConfig).
	CreateTopicWithConfig(name string, partitions, replicationFactor int, config map[string]string) error
	// TopicConfig is a topic's effective configuration, and
	// TopicConfigOverrides the keys set for it; AlterTopicConfig sets and
	// removes overrides (cluster/topicconfig.go).
	TopicConfig(name string) (topic.Config, error)
	TopicConfigOverrides(name string) (map[string]string, error)
	AlterTopicConfig(name string, set map[string]string, remove []string) (topic.Config, error)
	DeleteTopic(name string) (cluster.DeleteTopicResult, error)
	MaxPayloadSize() int
	// Send writes msgs: to one partition when partition is set, routed by
	// key otherwise, with cluster.Producer's results and errors.
	Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error)
	ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error)
	HighWatermark(topicName string, partition int) (uint64, error)
	// Bounds is a partition's readable range, its leader's log start and
	// its high watermark (cluster.Cluster.Bounds).
	Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error)
	// OffsetForTime is the first offset whose record's timestamp
	// (nanoseconds) is at or after ts, searched on the leader; found false
	// and the high watermark when none below it is
	// (cluster.Cluster.OffsetForTime).
	OffsetForTime(topicName string, partition int, ts int64) (offset uint64, found bool, err error)
	ListOffsets(consumerID string) ([]client.CommittedOffset, error)
	LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error)
	ListAllOffsets() ([]client.StoredOffset, error)
	CommitOffset(consumerID, topicName string, partition int, offset uint64) error
	ResetOffset(consumerID, topicName string, partition int, offset uint64) error
	// DeleteOffsets deletes every committed offset of a consumer (a
	// consumer group deleted) and returns how many there were.
	DeleteOffsets(consumerID string) (int, error)
	Journal(since uint64, max int) ([]cluster.JournalEntry, error)
	StopBroker(id int) error
	StartBroker(id int) error
	ReopenBroker(id int) (cluster.ReopenResult, error)
	Failover(topicName string, partition int) (cluster.FailoverResult, error)
	CatchUp(topicName string, partition, followerID int) (cluster.CatchUpResult, error)
	RecoverReplica(topicName string, partition, brokerID int) (cluster.RecoveryResult, error)
	MoveLeader(topicName string, partition, brokerID int) (cluster.MoveResult, error)
	// EnforceRetention runs one retention pass (cluster.EnforceRetention);
	// in cluster mode, over the partitions this node leads.
	EnforceRetention() ([]cluster.RetentionResult, error)
	Close() error
}

// LocalBackend is the embedded cluster as a Backend: every method is the
// cluster's own.
type LocalBackend struct {
	*cluster.Cluster
}

var _ Backend = LocalBackend{}

// Send writes through a cluster.Producer.
func (b LocalBackend) Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	p := cluster.NewProducer(b.Cluster, topicName)
	switch {
	case partition != nil:
		return p.SendBatchTo(*partition, msgs)
	case len(msgs) == 1:
		res, err := p.Send(msgs[0].Key, msgs[0].Payload)
		return []cluster.SendResult{res}, err
	default:
		return p.SendBatch(msgs)
	}
}

// StartBroker starts broker id (cluster.Cluster.StartBroker).
func (b LocalBackend) StartBroker(id int) error {
	_, err := b.Cluster.StartBroker(id)
	return err
}

// ListOffsets lists consumerID's committed offsets.
func (b LocalBackend) ListOffsets(consumerID string) ([]client.CommittedOffset, error) {
	store, err := b.OffsetStore()
	if err != nil {
		return nil, err
	}
	return store.List(consumerID)
}

// LoadOffset reads one committed offset.
func (b LocalBackend) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	store, err := b.OffsetStore()
	if err != nil {
		return 0, false, err
	}
	return store.Load(consumerID, topicName, partition)
}

// ListAllOffsets lists every committed offset of every consumer.
func (b LocalBackend) ListAllOffsets() ([]client.StoredOffset, error) {
	store, err := b.OffsetStore()
	if err != nil {
		return nil, err
	}
	return store.ListAll()
}
