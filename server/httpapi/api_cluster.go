package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
)

// Brokers is how the configuration names the brokers, which differs with
// the mode and which the wiring chooses: EmbeddedBrokers
// (PYSTREAM_BROKERS, logical brokers in this process) or ProcessBrokers
// (PYSTREAM_CLUSTER, one broker per process).
type Brokers interface {
	// Configured is how many brokers the configuration names.
	Configured() int
	// Status is broker id as GET /api/cluster shows it: available or
	// not, whether the configuration starts it, and why when that says
	// something an operator should know.
	Status(id int, available bool) apiclient.BrokerStatus
	// Complete reports whether the brokers this server lists are every
	// broker the cluster has, so that a replication factor above their
	// number can be refused here.
	Complete() bool
}

// EmbeddedBrokers is PYSTREAM_BROKERS, the logical brokers the embedded
// cluster starts: 1 to that number.
type EmbeddedBrokers int

// Configured is PYSTREAM_BROKERS.
func (n EmbeddedBrokers) Configured() int { return int(n) }

// Complete is true: the embedded cluster's brokers are all in this
// process.
func (EmbeddedBrokers) Complete() bool { return true }

// Status describes broker id: available or not, and whether
// PYSTREAM_BROKERS includes it, with the reason when it does not. A
// broker left out is not started at start-up; its replicas are
// unavailable replicas, and each partition keeps serving records below its
// high watermark, which the last clean shutdown recorded
// (docs/design.md § High watermark).
func (n EmbeddedBrokers) Status(id int, available bool) apiclient.BrokerStatus {
	st := apiclient.BrokerStatus{ID: id, Available: available, Configured: id <= int(n)}
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

// ProcessBrokers is the number of nodes of PYSTREAM_CLUSTER: each node's
// process is its broker, known to the cluster's metadata once it
// registered.
type ProcessBrokers int

// Configured is the number of nodes PYSTREAM_CLUSTER lists.
func (n ProcessBrokers) Configured() int { return int(n) }

// Complete is false: the brokers this node has applied may trail the
// metadata group's (a broker registered a moment ago), so the group's
// leader checks a replication factor's upper bound, and its refusal is
// the same 400.
func (ProcessBrokers) Complete() bool { return false }

// Status says why an unavailable broker is: its process has stopped
// sending heartbeats.
func (ProcessBrokers) Status(id int, available bool) apiclient.BrokerStatus {
	st := apiclient.BrokerStatus{ID: id, Available: available, Configured: true}
	if !available {
		st.Reason = "no heartbeat: its process is stopped, or cut off from the controller"
	}
	return st
}

// handleCluster answers GET /api/cluster: the configured broker count,
// every broker the cluster knows with its availability and whether the
// configuration starts it, and every topic.
func (a *API) handleCluster(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, apiclient.ClusterResponse{ConfiguredBrokers: a.brokers.Configured(),
		Brokers: a.brokerStatuses(), Topics: a.topicSummaries()})
}

func (a *API) brokerStatuses() []apiclient.BrokerStatus {
	infos := a.data.Brokers()
	out := make([]apiclient.BrokerStatus, len(infos))
	for i, b := range infos {
		out[i] = a.brokers.Status(b.ID, b.Available)
	}
	return out
}

// knownBroker looks id up among the brokers cluster.meta lists.
func (a *API) knownBroker(id int) (cluster.BrokerInfo, bool) {
	for _, b := range a.data.Brokers() {
		if b.ID == id {
			return b, true
		}
	}
	return cluster.BrokerInfo{}, false
}

// handleStopBroker answers POST /api/brokers/{id}/stop: the broker's
// instance is closed, as if its machine had failed. Stopping a stopped
// broker is a no-op.
func (a *API) handleStopBroker(w http.ResponseWriter, r *http.Request) {
	id, ae := a.brokerRequest(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	if err := a.ops.StopBroker(id); err != nil {
		writeAPIError(w, classify(err))
		return
	}
	a.ops.Wake()
	a.logger.Info("broker stopped", "broker", id)
	writeJSON(w, http.StatusOK, a.brokers.Status(id, false))
}

// handleStartBroker answers POST /api/brokers/{id}/start: a new instance of
// the broker is opened and registered. Its replicas are not trusted back
// on their own: followers may need catch-up, inactive replicas recovery —
// which the controller does unless PYSTREAM_FAILOVER_AFTER is 0.
// Starting a running broker is a no-op.
func (a *API) handleStartBroker(w http.ResponseWriter, r *http.Request) {
	id, ae := a.brokerRequest(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	if err := a.ops.StartBroker(id); err != nil && !errors.Is(err, cluster.ErrBrokerRegistered) {
		writeAPIError(w, classify(err))
		return
	}
	a.ops.Wake()
	a.logger.Info("broker started", "broker", id)
	writeJSON(w, http.StatusOK, a.brokers.Status(id, true))
}

// handleReopenBroker answers POST /api/brokers/{id}/reopen: once space
// has returned after a full disk, the broker's failed replica logs (and a
// failed journal) are opened again from disk, without stopping the broker
// or anything failing over; reopened followers lag until the controller's
// catch-up (docs/design.md § Sticky failure).
func (a *API) handleReopenBroker(w http.ResponseWriter, r *http.Request) {
	id, ae := a.brokerRequest(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	res, err := a.ops.ReopenBroker(id)
	if err != nil {
		writeAPIError(w, a.opError("reopen broker", err))
		return
	}
	a.ops.Wake()
	out := apiclient.ReopenResponse{BrokerID: res.BrokerID, Journal: res.Journal, Reopened: []apiclient.ReplicaRef{}}
	for _, rr := range res.Reopened {
		out.Reopened = append(out.Reopened, apiclient.ReplicaRef{Topic: rr.Topic, Partition: rr.Partition})
	}
	a.logger.Info("broker reopened", "broker", id, "replicas", len(out.Reopened), "journal", res.Journal)
	writeJSON(w, http.StatusOK, out)
}

// brokerRequest validates the {id} of a broker operation: no body, a
// broker cluster.meta knows (an unknown id would otherwise create a
// broker directory from a URL).
func (a *API) brokerRequest(w http.ResponseWriter, r *http.Request) (int, *apiError) {
	id, ae := brokerParam(r, "id")
	if ae != nil {
		return 0, ae
	}
	if ae := a.noBody(w, r); ae != nil {
		return 0, ae
	}
	if _, ok := a.knownBroker(id); !ok {
		return 0, notFound("no broker %d", id)
	}
	return id, nil
}
