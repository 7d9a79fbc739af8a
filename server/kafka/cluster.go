package kafka

import (
	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic"
)

// Cluster is what the Kafka listener serves: the few operations of the
// server's backend it needs. The server hands its backend (the embedded
// cluster today) to New; a test can hand anything with these methods.
// An implementation must be safe for concurrent use.
type Cluster interface {
	// Brokers lists every broker, ascending by id, with its availability:
	// a broker is served by a listener while it is available.
	Brokers() []cluster.BrokerInfo
	// Topics lists every topic; Topic describes one.
	Topics() []cluster.TopicInfo
	Topic(name string) (cluster.TopicInfo, error)
	// Status is a partition's leader, leader epoch, placement, active set
	// and replicas' availability.
	Status(topicName string, partition int) (cluster.PartitionStatus, error)
	// Send writes msgs to one partition (partition is never nil here),
	// returning once every active replica holds them durably.
	Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error)
	// ReadCommitted reads up to maxRecords records from start, never past
	// the high watermark.
	ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error)
	// Bounds is a partition's log start and high watermark.
	Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error)
	// OffsetForTime is the first offset whose record's timestamp
	// (nanoseconds) is at or after ts; found false when there is none.
	OffsetForTime(topicName string, partition int, ts int64) (offset uint64, found bool, err error)
	// MaxPayloadSize is the largest payload a record may carry.
	MaxPayloadSize() int

	// Administration and stored offsets (createtopics.go, deletetopics.go,
	// offsetcommit.go, offsetfetch.go): the Backend's methods of the
	// same names.

	// CreateTopicWithConfig creates a topic with configuration overrides
	// (topic.ConfigKeys), checking everything before creating anything.
	CreateTopicWithConfig(name string, partitions, replicationFactor int, config map[string]string) error
	// TopicConfig is a topic's effective configuration.
	TopicConfig(name string) (topic.Config, error)
	// DeleteTopic deletes a topic, its records and its committed
	// offsets. A backend that does not delete topics returns an error
	// wrapping errors.ErrUnsupported.
	DeleteTopic(name string) (cluster.DeleteTopicResult, error)
	// CommitOffset durably stores a consumer's offset on a partition:
	// never below the offset committed, never past the high watermark.
	CommitOffset(consumerID, topicName string, partition int, offset uint64) error
	// LoadOffset is a consumer's committed offset; ok false when it never
	// committed there.
	LoadOffset(consumerID, topicName string, partition int) (offset uint64, ok bool, err error)
	// ListOffsets is every offset a consumer committed.
	ListOffsets(consumerID string) ([]client.CommittedOffset, error)
	// ListAllOffsets is every offset every consumer committed: the
	// groups without members that ListGroups lists (Empty).
	ListAllOffsets() ([]client.StoredOffset, error)
}

// Directory is what a node of a cluster of processes adds to Cluster
// (Config.NodeID): where every broker's Kafka listener is, as the
// cluster's replicated metadata registers it, and which node coordinates
// consumer groups. Metadata lists these addresses, so that a client goes
// to each partition's leader directly.
type Directory interface {
	// KafkaAddrs maps every registered broker that serves Kafka to the
	// host:port its listener advertises.
	KafkaAddrs() map[int]string
	// GroupCoordinator is the node that coordinates every consumer
	// group: the one node whose listener keeps group membership
	// (FindCoordinator names it; the others answer group requests
	// NOT_COORDINATOR). 0 while no node is known to be it.
	GroupCoordinator() int
}
