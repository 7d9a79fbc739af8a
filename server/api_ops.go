package server

import (
	"net/http"

	"github.com/pystream/pystream/server/apiclient"
)

// opTarget validates the {topic} and {p} of an operation and its absent
// body.
func (s *Server) opTarget(w http.ResponseWriter, r *http.Request) (string, int, *apiError) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		return "", 0, ae
	}
	p, ae := partitionParam(r)
	if ae != nil {
		return "", 0, ae
	}
	if ae := s.noBody(w, r); ae != nil {
		return "", 0, ae
	}
	return name, p, nil
}

// replicaTarget is opTarget plus the {broker} of a replica operation.
func (s *Server) replicaTarget(w http.ResponseWriter, r *http.Request) (string, int, int, *apiError) {
	name, p, ae := s.opTarget(w, r)
	if ae != nil {
		return "", 0, 0, ae
	}
	id, ae := brokerParam(r, "broker")
	if ae != nil {
		return "", 0, 0, ae
	}
	return name, p, id, nil
}

// handleFailover answers POST /api/topics/{topic}/partitions/{p}/failover:
// the partition's failed leader is replaced by the active follower with the
// longest log (ties to the lowest id). Refused (409) while the leader is
// available; 503 when no follower can take over.
func (s *Server) handleFailover(w http.ResponseWriter, r *http.Request) {
	name, p, ae := s.opTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := s.cluster.Failover(name, p)
	if err != nil {
		writeAPIError(w, s.withUnavailable(classify(err)))
		return
	}
	s.logger.Info("failover", "topic", name, "partition", p, "old_leader", res.OldLeaderBrokerID,
		"new_leader", res.NewLeaderBrokerID, "log_end_offset", res.LogEndOffset)
	writeJSON(w, http.StatusOK, apiclient.FailoverResponse{OldLeader: res.OldLeaderBrokerID, NewLeader: res.NewLeaderBrokerID, LogEndOffset: res.LogEndOffset})
}

// handleCatchUp answers POST
// /api/topics/{topic}/partitions/{p}/replicas/{broker}/catch-up: a lagging
// follower copies the leader's missing records after its own were proven a
// prefix of the leader's.
func (s *Server) handleCatchUp(w http.ResponseWriter, r *http.Request) {
	name, p, id, ae := s.replicaTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := s.cluster.CatchUp(name, p, id)
	if err != nil {
		writeAPIError(w, s.withUnavailable(classify(err)))
		return
	}
	s.logger.Info("catch-up", "topic", name, "partition", p, "broker", id, "copied", res.Copied)
	writeJSON(w, http.StatusOK, apiclient.CatchUpResponse{BrokerID: res.BrokerID, Copied: uint64(res.Copied)})
}

// handleRecover answers POST
// /api/topics/{topic}/partitions/{p}/replicas/{broker}/recover: an
// inactive replica (a returning former leader) is cut back to its common
// prefix with the leader, filled up, verified and only then made active.
func (s *Server) handleRecover(w http.ResponseWriter, r *http.Request) {
	name, p, id, ae := s.replicaTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := s.cluster.RecoverReplica(name, p, id)
	if err != nil {
		writeAPIError(w, s.withUnavailable(classify(err)))
		return
	}
	s.logger.Info("recover", "topic", name, "partition", p, "broker", id, "common_prefix", res.CommonPrefix,
		"dropped", res.Dropped, "copied", res.Copied)
	out := apiclient.RecoverResponse{BrokerID: res.BrokerID, CommonPrefix: res.CommonPrefix, Dropped: uint64(res.Dropped), Copied: uint64(res.Copied)}
	if res.Dropped > 0 {
		from, to := res.DroppedFrom, res.DroppedTo
		out.DroppedFrom, out.DroppedTo = &from, &to
	}
	writeJSON(w, http.StatusOK, out)
}
