package httpapi

import (
	"net/http"
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
)

// opTarget validates the {topic} and {p} of an operation and its absent
// body.
func (a *API) opTarget(w http.ResponseWriter, r *http.Request) (string, int, *apiError) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		return "", 0, ae
	}
	p, ae := partitionParam(r)
	if ae != nil {
		return "", 0, ae
	}
	if ae := a.noBody(w, r); ae != nil {
		return "", 0, ae
	}
	return name, p, nil
}

// replicaTarget is opTarget plus the {broker} of a replica operation.
func (a *API) replicaTarget(w http.ResponseWriter, r *http.Request) (string, int, int, *apiError) {
	name, p, ae := a.opTarget(w, r)
	if ae != nil {
		return "", 0, 0, ae
	}
	id, ae := brokerParam(r, "broker")
	if ae != nil {
		return "", 0, 0, ae
	}
	return name, p, id, nil
}

// operated is called after a manual operation returned: it wakes the
// controller when the operation took effect (also when only its journal
// entry failed), so that the next pass plans on the new state at once.
func (a *API) operated(err error) {
	if err == nil || tookEffect(err) {
		a.ops.Wake()
	}
}

// handleFailover answers POST /api/topics/{topic}/partitions/{p}/failover:
// the partition's failed leader is replaced by the active follower with the
// longest log (ties to the lowest id). Refused (409) while the leader is
// available; 503 when no follower can take over.
func (a *API) handleFailover(w http.ResponseWriter, r *http.Request) {
	name, p, ae := a.opTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := a.ops.Failover(name, p)
	a.operated(err)
	if err != nil {
		writeAPIError(w, a.opError("failover", err))
		return
	}
	a.logger.Info("failover", "topic", name, "partition", p, "old_leader", res.OldLeaderBrokerID,
		"new_leader", res.NewLeaderBrokerID, "leader_epoch", res.LeaderEpoch, "log_end_offset", res.LogEndOffset)
	writeJSON(w, http.StatusOK, apiclient.FailoverResponse{OldLeader: res.OldLeaderBrokerID, NewLeader: res.NewLeaderBrokerID,
		LeaderEpoch: res.LeaderEpoch, LogEndOffset: res.LogEndOffset})
}

// handleCatchUp answers POST
// /api/topics/{topic}/partitions/{p}/replicas/{broker}/catch-up: a lagging
// follower copies the leader's missing records after its own were proven a
// prefix of the leader's.
func (a *API) handleCatchUp(w http.ResponseWriter, r *http.Request) {
	name, p, id, ae := a.replicaTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := a.ops.CatchUp(name, p, id)
	a.operated(err)
	if err != nil {
		writeAPIError(w, a.opError("catch-up", err))
		return
	}
	a.logger.Info("catch-up", "topic", name, "partition", p, "broker", id, "copied", res.Copied)
	writeJSON(w, http.StatusOK, apiclient.CatchUpResponse{BrokerID: res.BrokerID, Copied: uint64(res.Copied)})
}

// handleRecover answers POST
// /api/topics/{topic}/partitions/{p}/replicas/{broker}/recover: an
// inactive replica (a returning former leader) is cut back to its common
// prefix with the leader, filled up, verified and only then made active.
// The records it cut are kept in a quarantine file, named in the answer
// relative to the data directory.
func (a *API) handleRecover(w http.ResponseWriter, r *http.Request) {
	name, p, id, ae := a.replicaTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := a.ops.RecoverReplica(name, p, id)
	a.operated(err)
	if err != nil {
		writeAPIError(w, a.opError("recover", err))
		return
	}
	a.logger.Info("recover", "topic", name, "partition", p, "broker", id, "common_prefix", res.CommonPrefix,
		"dropped", res.Dropped, "copied", res.Copied, "quarantine", res.Quarantine)
	out := apiclient.RecoverResponse{BrokerID: res.BrokerID, CommonPrefix: res.CommonPrefix, Dropped: uint64(res.Dropped), Copied: uint64(res.Copied)}
	if res.Dropped > 0 {
		from, to := res.DroppedFrom, res.DroppedTo
		out.DroppedFrom, out.DroppedTo = &from, &to
	}
	if res.Quarantine != "" {
		out.Quarantine = a.dataPath(res.Quarantine)
	}
	writeJSON(w, http.StatusOK, out)
}

// dataPath is path relative to the data directory, the way an operator
// names a file of it. A path outside it, which the cluster never gives, is
// reduced to its base name: an answer never carries an absolute path.
func (a *API) dataPath(path string) string {
	rel, err := filepath.Rel(a.root, path)
	if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		a.logger.Warn("path outside the data directory", "path", path)
		return filepath.Base(path)
	}
	return rel
}

// handleMoveLeader answers POST
// /api/topics/{topic}/partitions/{p}/replicas/{broker}/move-leader: the
// leadership passes, with nothing lost, to an active follower that holds
// exactly the leader's log (caught up first if it lags). The old leader
// stays an active follower; the leader epoch goes up by one.
func (a *API) handleMoveLeader(w http.ResponseWriter, r *http.Request) {
	name, p, id, ae := a.replicaTarget(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := a.ops.MoveLeader(name, p, id)
	a.operated(err)
	if err != nil {
		writeAPIError(w, a.opError("move-leader", err))
		return
	}
	a.logger.Info("move-leader", "topic", name, "partition", p, "old_leader", res.OldLeaderBrokerID,
		"new_leader", res.NewLeaderBrokerID, "leader_epoch", res.LeaderEpoch, "copied", res.Copied, "log_end_offset", res.LogEnd)
	writeJSON(w, http.StatusOK, apiclient.MoveLeaderResponse{OldLeader: res.OldLeaderBrokerID, NewLeader: res.NewLeaderBrokerID,
		LeaderEpoch: res.LeaderEpoch, LogEndOffset: res.LogEnd, Copied: uint64(res.Copied)})
}
