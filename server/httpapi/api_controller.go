package httpapi

import (
	"net/http"

	"github.com/pystream/pystream/server/apiclient"
)

// MaxReasonBytes bounds the reason PUT /api/controller journals.
const MaxReasonBytes = 500

// controllerStatus is the controller's mode as the API shows it. In
// cluster mode it is the switch as this node's copy of the metadata has
// it, with this node's failover delay.
func (a *API) controllerStatus() apiclient.ControllerStatus {
	on, d, switchable := a.ops.AutomaticHealing()
	return apiclient.ControllerStatus{Automatic: on, FailoverAfterMS: d.Milliseconds(), Switchable: switchable}
}

// handleController answers GET /api/controller.
func (a *API) handleController(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.controllerStatus())
}

// handleSetController answers PUT /api/controller with {"automatic":
// bool, "reason": "..."}: automatic healing off (the controller changes
// no metadata, as with PYSTREAM_FAILOVER_AFTER=0) or on again, after
// PYSTREAM_FAILOVER_AFTER — or, when that is 0, after its default. The
// change is journaled (event healing, by the operator, with the reason).
// The embedded cluster keeps it until the server stops
// (backend.Local.SetAutomaticHealing). In cluster mode the switch is a
// fact of the cluster's metadata: the set-healing metadata command,
// proposed through Raft from whichever node is asked — on a node that
// does not lead the metadata group, forwarded to the one that does, as
// every metadata change is — journaled where it is applied, and kept
// across leader changes and restarts. Every node's controller follows
// it; only the leader's runs. Asked for what it is already, it changes
// and journals nothing; in cluster mode it is proposed all the same, so
// that a metadata group with no leader is 503, not a 200 from a copy that
// may be behind.
func (a *API) handleSetController(w http.ResponseWriter, r *http.Request) {
	var req apiclient.ControllerRequest
	if ae := a.readJSON(w, r, &req); ae != nil {
		writeAPIError(w, ae)
		return
	}
	if req.Automatic == nil {
		writeAPIError(w, badRequest("automatic is required: true or false"))
		return
	}
	if len(req.Reason) > MaxReasonBytes {
		writeAPIError(w, badRequest("reason is %d bytes; at most %d", len(req.Reason), MaxReasonBytes))
		return
	}
	changed, err := a.ops.SetAutomaticHealing(r.Context(), *req.Automatic, req.Reason)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	if changed {
		on, d, _ := a.ops.AutomaticHealing()
		a.logger.Info("automatic healing switched", "automatic", on, "failover_after", d, "reason", req.Reason)
	}
	writeJSON(w, http.StatusOK, a.controllerStatus())
}
