package kafka

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// Election types of ElectLeaders v1+ (KIP-460); v0 elects preferred
// replicas only.
const (
	electPreferred = 0
	electUnclean   = 1
)

// electLeaders answers ElectLeaders (key 43) v0-v2 partition by partition,
// as a Kafka controller does:
//
//   - PREFERRED hands the leadership to the partition's preferred replica
//     (the first of its placement, as Kafka's first assigned replica)
//     through the operator's leader move (backend.Operator.MoveLeader: a
//     controlled switch with nothing lost), when that replica is in the
//     active set and available; ELECTION_NOT_NEEDED when it leads
//     already, PREFERRED_LEADER_NOT_AVAILABLE when it cannot lead now.
//   - UNCLEAN is ELECTION_NOT_NEEDED while the partition's leader is
//     available, as Kafka answers it, and ELIGIBLE_LEADERS_NOT_AVAILABLE
//     otherwise: PyStream never elects a replica outside the active set,
//     and failover (the controller's, or the operator's) elects within it.
//
// Null topics elect for every partition, and, as Kafka does, the answer
// then leaves out each partition whose election was not needed. An
// unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION, an election
// type Kafka does not define INVALID_REQUEST. TimeoutMillis is not
// waited on: each move is done before the answer.
func (s *Server) electLeaders(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := req.ElectionType
	if req.Version == 0 {
		typ = electPreferred
	}
	if typ != electPreferred && typ != electUnclean {
		f := failElectLeaders(req, kerr.InvalidRequest.Code).(*kmsg.ElectLeadersResponse)
		msg := fmt.Sprintf("election type %d is not one Kafka defines: 0 elects the preferred replica, 1 is an unclean election", typ)
		for i := range f.Topics {
			for j := range f.Topics[i].Partitions {
				f.Topics[i].Partitions[j].ErrorMessage = kmsg.StringPtr(msg)
			}
		}
		x.code(f.ErrorCode)
		return f
	}
	all := req.Topics == nil
	type target struct {
		topic     string
		partition int32
	}
	var targets []target
	if all {
		for _, t := range s.c.Topics() {
			for p := range t.PartitionCount {
				targets = append(targets, target{t.Name, int32(p)})
			}
		}
	} else {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				targets = append(targets, target{t.Topic, p})
			}
		}
	}
	slices.SortFunc(targets, func(a, b target) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	targets = slices.Compact(targets)
	moved := false
	for _, t := range targets {
		code, msg := s.elect(x, t.topic, t.partition, typ)
		if code == 0 && typ == electPreferred {
			moved = true
		}
		if all && code == kerr.ElectionNotNeeded.Code {
			continue
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode = t.partition, x.code(code)
		if msg != "" {
			rp.ErrorMessage = kmsg.StringPtr(msg)
		}
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != t.topic {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.topic
			resp.Topics = append(resp.Topics, rt)
		}
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	if moved {
		s.c.Wake()
	}
	return resp
}

// elect runs one partition's election of type typ and returns its code
// and message.
func (s *Server) elect(x *exchange, topicName string, partition int32, typ int8) (int16, string) {
	where := fmt.Sprintf("%s/%d", topicName, partition)
	if partition < 0 {
		return kerr.UnknownTopicOrPartition.Code, where + ": no such partition"
	}
	st, err := s.c.Status(topicName, int(partition))
	if err != nil {
		return errorCode(err), where + ": " + statusMessage(err)
	}
	var leader, preferred cluster.ReplicaStatus
	for _, rs := range st.Replicas {
		switch rs.BrokerID {
		case st.Leader:
			leader = rs
		case st.Preferred:
			preferred = rs
		}
	}
	if typ == electUnclean {
		if leader.Available {
			return kerr.ElectionNotNeeded.Code, ""
		}
		return kerr.EligibleLeadersNotAvailable.Code, fmt.Sprintf("%s: the leader, broker %d, is unavailable, and PyStream never elects a replica that is not in the active set %v: "+
			"failover (the controller's, or the operator's) elects the new leader among the active replicas", where, st.Leader, st.Active)
	}
	if st.Leader == st.Preferred {
		return kerr.ElectionNotNeeded.Code, ""
	}
	switch {
	case !preferred.Active:
		return kerr.PreferredLeaderNotAvailable.Code, fmt.Sprintf("%s: the preferred replica, broker %d, is not in the active set %v: "+
			"PyStream elects only an active replica (recovery brings it back)", where, st.Preferred, st.Active)
	case !preferred.Available:
		return kerr.PreferredLeaderNotAvailable.Code, fmt.Sprintf("%s: the preferred replica, broker %d, is unavailable", where, st.Preferred)
	case !leader.Available:
		return kerr.PreferredLeaderNotAvailable.Code, fmt.Sprintf("%s: the leader, broker %d, is unavailable: "+
			"failover replaces it first, and a move back to broker %d follows", where, st.Leader, st.Preferred)
	}
	_, err = s.c.MoveLeader(topicName, int(partition), st.Preferred)
	for attempt := 0; errors.Is(err, cluster.ErrNotLeader) && attempt < moveRetries; attempt++ {
		// In a cluster of processes the leader's node may not have
		// applied the leadership this node read yet (a move just made):
		// ask again once it has, as a write follows a moved leader.
		t := time.NewTimer(moveRetryWait)
		select {
		case <-t.C:
		case <-x.ctx.Done():
			t.Stop()
			return kerr.RequestTimedOut.Code, fmt.Sprintf("%s: the client went away while the move to broker %d waited for the leadership to settle", where, st.Preferred)
		}
		_, err = s.c.MoveLeader(topicName, int(partition), st.Preferred)
	}
	if err != nil {
		x.fault("topic", topicName, "partition", partition, "broker", st.Preferred, "err", err)
		var div *cluster.ReplicaDivergenceError
		switch {
		case errors.As(err, &div), errors.Is(err, cluster.ErrReplicaInactive), errors.Is(err, cluster.ErrBrokerUnavailable):
			return kerr.PreferredLeaderNotAvailable.Code, fmt.Sprintf("%s: broker %d cannot take the leadership now; the server log says why", where, st.Preferred)
		}
		if errors.Is(err, cluster.ErrNotLeader) {
			return kerr.NotLeaderForPartition.Code, fmt.Sprintf("%s: the leadership is moving; ask again", where)
		}
		return errorCode(err), fmt.Sprintf("%s: the move to broker %d failed; the server log says why", where, st.Preferred)
	}
	return 0, ""
}

// moveRetries and moveRetryWait bound how long a preferred election
// waits for the nodes to agree on a partition's current leader.
const (
	moveRetries   = 20
	moveRetryWait = 50 * time.Millisecond
)

// statusMessage is a partition's status error in a client's words.
func statusMessage(err error) string {
	if errorCode(err) == kerr.UnknownTopicOrPartition.Code {
		return "no such topic or partition"
	}
	return "its status cannot be read now"
}

// failElectLeaders answers every partition named with code (and, from v1,
// the whole request): Kafka's answer to a principal without ALTER on the
// cluster.
func failElectLeaders(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	resp.ErrorCode = code
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
