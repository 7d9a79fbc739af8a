package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
)

// handleCluster answers GET /api/cluster: the configured broker count,
// every broker cluster.meta knows with its availability and whether the
// configuration starts it, and every topic.
func (s *Server) handleCluster(w http.ResponseWriter, r *http.Request) {
	configured := int(s.cfg.Brokers)
	if s.node != nil {
		configured = len(s.cfg.Cluster)
	}
	writeJSON(w, http.StatusOK, apiclient.ClusterResponse{ConfiguredBrokers: configured,
		Brokers: s.brokerStatuses(), Topics: s.topicSummaries()})
}

func (s *Server) brokerStatuses() []apiclient.BrokerStatus {
	infos := s.cluster.Brokers()
	out := make([]apiclient.BrokerStatus, len(infos))
	for i, b := range infos {
		out[i] = s.brokerStatus(b.ID, b.Available)
	}
	return out
}

// brokerStatus describes broker id: available or not, and whether
// PYSTREAM_BROKERS includes it, with the reason when it does not. A broker
// left out is not started at start-up; its replicas are unavailable
// replicas, and each partition keeps serving records below its high
// watermark, which the last clean shutdown recorded
// (docs/design.md § High watermark).
func (s *Server) brokerStatus(id int, available bool) apiclient.BrokerStatus {
	if s.node != nil {
		st := apiclient.BrokerStatus{ID: id, Available: available, Configured: true}
		if !available {
			st.Reason = "no heartbeat: its process is stopped, or cut off from the controller"
		}
		return st
	}
	n := int(s.cfg.Brokers)
	st := apiclient.BrokerStatus{ID: id, Available: available, Configured: id <= n}
	switch {
	case st.Configured:
	case available:
		st.Reason = fmt.Sprintf("started through the API; PYSTREAM_BROKERS=%d leaves it out, so a restart will not start it", n)
	default:
		st.Reason = fmt.Sprintf("not started: PYSTREAM_BROKERS=%d leaves it out; its replicas are unavailable. "+
			"After a clean shutdown partitions serve what they had acknowledged at once; after a crash, "+
			"what every active replica holds, once it leaves the active sets it is in (the controller does that "+
			"after PYSTREAM_FAILOVER_AFTER)", n)
	}
	return st
}

// knownBroker looks id up among the brokers cluster.meta lists.
func (s *Server) knownBroker(id int) (cluster.BrokerInfo, bool) {
	for _, b := range s.cluster.Brokers() {
		if b.ID == id {
			return b, true
		}
	}
	return cluster.BrokerInfo{}, false
}

// handleStopBroker answers POST /api/brokers/{id}/stop: the broker's
// instance is closed, as if its machine had failed. Stopping a stopped
// broker is a no-op.
func (s *Server) handleStopBroker(w http.ResponseWriter, r *http.Request) {
	id, ae := s.brokerRequest(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	if err := s.cluster.StopBroker(id); err != nil {
		writeAPIError(w, classify(err))
		return
	}
	s.cluster.Wake()
	s.logger.Info("broker stopped", "broker", id)
	writeJSON(w, http.StatusOK, s.brokerStatus(id, false))
}

// handleStartBroker answers POST /api/brokers/{id}/start: a new instance of
// the broker is opened and registered. Its replicas are not trusted back
// on their own: followers may need catch-up, inactive replicas recovery —
// which the controller does unless PYSTREAM_FAILOVER_AFTER is 0.
// Starting a running broker is a no-op.
func (s *Server) handleStartBroker(w http.ResponseWriter, r *http.Request) {
	id, ae := s.brokerRequest(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	if err := s.cluster.StartBroker(id); err != nil && !errors.Is(err, cluster.ErrBrokerRegistered) {
		writeAPIError(w, classify(err))
		return
	}
	s.cluster.Wake()
	s.logger.Info("broker started", "broker", id)
	writeJSON(w, http.StatusOK, s.brokerStatus(id, true))
}

// handleReopenBroker answers POST /api/brokers/{id}/reopen: once space
// has returned after a full disk, the broker's failed replica logs (and a
// failed journal) are opened again from disk, without stopping the broker
// or anything failing over; reopened followers lag until the controller's
// catch-up (docs/design.md § Sticky failure).
func (s *Server) handleReopenBroker(w http.ResponseWriter, r *http.Request) {
	id, ae := s.brokerRequest(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := s.cluster.ReopenBroker(id)
	if err != nil {
		writeAPIError(w, s.opError("reopen broker", err))
		return
	}
	s.cluster.Wake()
	out := apiclient.ReopenResponse{BrokerID: res.BrokerID, Journal: res.Journal, Reopened: []apiclient.ReplicaRef{}}
	for _, rr := range res.Reopened {
		out.Reopened = append(out.Reopened, apiclient.ReplicaRef{Topic: rr.Topic, Partition: rr.Partition})
	}
	s.logger.Info("broker reopened", "broker", id, "replicas", len(out.Reopened), "journal", res.Journal)
	writeJSON(w, http.StatusOK, out)
}

// brokerRequest validates the {id} of a broker operation: no body, a
// broker cluster.meta knows (an unknown id would otherwise create a
// broker directory from a URL).
func (s *Server) brokerRequest(w http.ResponseWriter, r *http.Request) (int, *apiError) {
	id, ae := brokerParam(r, "id")
	if ae != nil {
		return 0, ae
	}
	if ae := s.noBody(w, r); ae != nil {
		return 0, ae
	}
	if _, ok := s.knownBroker(id); !ok {
		return 0, notFound("no broker %d", id)
	}
	return id, nil
}
