package kafka

import (
	"crypto/sha256"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// ClusterID is the cluster id Metadata reports.
const ClusterID = "pystream"

// metadata answers Metadata (key 3) v0-v12: the cluster's id, its
// controller and every broker with its advertised address, as
// DescribeCluster answers them (clusterFacts); v8-v10's cluster
// authorized operations when asked for (clusterOperations); and for each
// topic asked for (all when none is named) each partition's leader, leader epoch, replicas in placement
// order, the active set as ISR, and the assigned replicas whose broker
// is down as offline. A topic that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION: topics are never created by asking.
func (s *Server) metadata(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	cl := s.clusterFacts()
	for _, n := range cl.nodes {
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port, mb.Rack = n.id, n.host, n.port, n.rack
		resp.Brokers = append(resp.Brokers, mb)
	}
	resp.ControllerID = cl.controller
	resp.ClusterID = kmsg.StringPtr(cl.id)
	if req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = s.clusterOperations(x)
	}

	var names []string
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, t := range s.c.Topics() {
			names = append(names, t.Name)
		}
	} else {
		for _, t := range req.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
			}
		}
	}
	for _, name := range names {
		resp.Topics = append(resp.Topics, s.topicMetadata(x, name, cl.up))
	}
	return resp
}

// clusterFacts is what a listener answers of the cluster as a whole,
// the one copy Metadata and DescribeCluster both answer: its id, its
// controller, and every broker with the address its listener advertises.
type clusterFacts struct {
	// id is the cluster id (ClusterID).
	id string
	// nodes is every broker with an advertised address (in node mode,
	// the address each node registered in the cluster's metadata; a node
	// without one is left out), in the backend's order, available or not.
	nodes []node
	// up holds the ids of the listed brokers that are available.
	up map[int]bool
	// controller is the broker a client sends what the controller does
	// to, -1 while none is known. One process: the
	// controller (server/controller) runs in the process that hosts
	// every broker, each of whose listeners reaches it; the lowest
	// available broker is named. A cluster of processes: the node that
	// leads the metadata group, which runs the controller, as this node
	// knows it now.
	controller int32
}

// node is one broker of an answer: its id, advertised host and port,
// and rack (PyStream has no racks: always nil).
type node struct {
	id   int32
	host string
	port int32
	rack *string
}

// clusterFacts reads the cluster's id, controller and brokers as they
// are now.
func (s *Server) clusterFacts() clusterFacts {
	f := clusterFacts{id: ClusterID, up: map[int]bool{}, controller: -1}
	var dir map[int]string
	if s.dir != nil {
		dir = s.dir.KafkaAddrs()
	}
	for _, b := range s.c.Brokers() {
		host, port, ok := s.advertised(b.ID, dir)
		if !ok {
			continue
		}
		f.nodes = append(f.nodes, node{id: int32(b.ID), host: host, port: port})
		if b.Available {
			f.up[b.ID] = true
			if f.controller < 0 {
				f.controller = int32(b.ID)
			}
		}
	}
	if s.dir != nil {
		// A cluster of processes: the controller runs on the metadata
		// group's leader, wherever the listener is asked.
		f.controller = int32(s.dir.Controller())
		if f.controller == 0 {
			f.controller = -1
		}
	}
	return f
}

// topicMetadata is one topic's part of a Metadata answer.
func (s *Server) topicMetadata(x *exchange, name string, up map[int]bool) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = kmsg.StringPtr(name)
	mt.TopicID = topicID(name)
	info, err := s.c.Topic(name)
	if err != nil {
		mt.ErrorCode = x.code(errorCode(err))
		return mt
	}
	for p := 0; p < info.PartitionCount; p++ {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = int32(p)
		st, err := s.c.Status(name, p)
		if err != nil {
			mp.ErrorCode = x.code(errorCode(err))
			mp.Leader = -1
			mt.Partitions = append(mt.Partitions, mp)
			continue
		}
		mp.Leader, mp.LeaderEpoch = int32(st.Leader), int32(st.LeaderEpoch)
		mp.Replicas, mp.ISR = ids(st.Placement), ids(st.Active)
		for _, id := range st.Assigned {
			if !up[id] {
				mp.OfflineReplicas = append(mp.OfflineReplicas, int32(id))
			}
		}
		if !up[st.Leader] {
			// Kafka's answer while a leader is being elected: the client
			// waits and asks again.
			mp.ErrorCode = x.code(kerr.LeaderNotAvailable.Code)
			mp.Leader = -1
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

func failMetadata(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	for _, t := range req.Topics {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.ErrorCode = t.Topic, code
		resp.Topics = append(resp.Topics, mt)
	}
	resp.ErrorCode = code
	return resp
}

// topicID is a topic's id in Metadata v10+: PyStream topics have none,
// so it is derived from the name, the same in every answer.
func topicID(name string) [16]byte {
	sum := sha256.Sum256([]byte("pystream topic " + name))
	var id [16]byte
	copy(id[:], sum[:16])
	return id
}

// ids converts broker ids.
func ids(in []int) []int32 {
	out := make([]int32, 0, len(in))
	for _, id := range in {
		out = append(out, int32(id))
	}
	return slices.Clip(out)
}

// leaderCheck is the error code of a request for a partition reaching
// broker: NOT_LEADER_OR_FOLLOWER when another broker leads it,
// LEADER_NOT_AVAILABLE when its leader is down, the cluster's error for
// an unknown topic or partition, and the epoch checks of KIP-320 when
// the client names the leader epoch it knows (-1: none).
func (s *Server) leaderCheck(topicName string, partition int32, broker int, clientEpoch int32) (cluster.PartitionStatus, int16) {
	if partition < 0 {
		return cluster.PartitionStatus{}, kerr.UnknownTopicOrPartition.Code
	}
	st, err := s.c.Status(topicName, int(partition))
	if err != nil {
		return st, errorCode(err)
	}
	if st.Leader != broker {
		return st, kerr.NotLeaderForPartition.Code
	}
	for _, r := range st.Replicas {
		if r.BrokerID == st.Leader && !r.Available {
			return st, kerr.LeaderNotAvailable.Code
		}
	}
	switch epoch := int64(st.LeaderEpoch); {
	case clientEpoch < 0:
	case int64(clientEpoch) < epoch:
		return st, kerr.FencedLeaderEpoch.Code
	case int64(clientEpoch) > epoch:
		return st, kerr.UnknownLeaderEpoch.Code
	}
	return st, 0
}
