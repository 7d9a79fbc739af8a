package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator's key types: a consumer group (0) and a transactional
// id (1), both coordinated by the same node; share groups (2) are not
// served.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
)

// findCoordinator answers FindCoordinator (key 10) v0-v4 for consumer
// groups and transactional ids alike, by one rule (coordinatorCode's):
// in the embedded cluster every broker's listener shares the server's one
// group coordinator and the cluster's one transaction coordinator, so any
// broker coordinates any group and any transactional id: the answer is
// the broker the request reached, alive since it answers. In a cluster
// of processes group membership and transactions live on one node, the
// Directory's GroupCoordinator (the metadata group's leader), and every
// node names it; COORDINATOR_NOT_AVAILABLE while none is known, which
// clients retry. Another key type (share groups) is INVALID_REQUEST,
// final, since no broker would ever answer otherwise.
func (s *Server) findCoordinator(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	id := x.broker
	if s.dir != nil {
		id, _ = s.dir.GroupCoordinator()
	}
	host, port, ok := s.advertisedNow(id)
	answer := func(key string) kmsg.FindCoordinatorResponseCoordinator {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port = key, -1, "", -1
		if req.CoordinatorType != coordinatorGroup && req.CoordinatorType != coordinatorTransaction {
			c.ErrorCode = x.code(kerr.InvalidRequest.Code)
			c.ErrorMessage = kmsg.StringPtr("PyStream coordinates consumer groups (key type 0) and transactional ids (1) only: no share groups")
			return c
		}
		if id <= 0 || !ok {
			c.ErrorCode = x.code(kerr.CoordinatorNotAvailable.Code)
			c.ErrorMessage = kmsg.StringPtr("no node is known to coordinate groups and transactions yet (the metadata group has no leader, or its Kafka address is not registered)")
			return c
		}
		c.NodeID, c.Host, c.Port = int32(id), host, port
		return c
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, answer(key))
		}
		return resp
	}
	c := answer(req.CoordinatorKey)
	resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
	resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
	return resp
}

func failFindCoordinator(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
	for _, key := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.ErrorCode, c.NodeID, c.Port = key, code, -1, -1
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp
}
