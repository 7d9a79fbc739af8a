package kafka

import (
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
)

// Cluster is what the Kafka listener serves: the backend's data
// (brokers, topics, records, committed offsets) and its topic
// administration (CreateTopics, DeleteTopics, DescribeConfigs). The server
// hands its backend to New, whichever mode it runs: the embedded cluster
// (backend.Local) or a node of a cluster of processes; a test can hand
// anything with these methods. An implementation must be safe for
// concurrent use. A backend that does not delete topics returns an error
// wrapping errors.ErrUnsupported from DeleteTopic.
type Cluster interface {
	backend.Data
	backend.TopicAdmin
	backend.Storage
	// MoveLeader is the operator's leader move (backend.Operator's), by
	// which ElectLeaders hands a partition back to its preferred replica;
	// Wake has the controller plan again after it.
	MoveLeader(topicName string, partition, brokerID int) (cluster.MoveResult, error)
	Wake()
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
	// Controller is the broker whose process runs the controller (the
	// metadata group's leader), 0 while none is known: Metadata's
	// controller id.
	Controller() int
	// GroupHome names the node that coordinates every consumer group:
	// the one node whose listener keeps group membership
	// (FindCoordinator names it; the others answer group requests
	// NOT_COORDINATOR). Its id is 0 while no node is known to be it.
	backend.GroupHome
}
