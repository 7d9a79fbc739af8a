package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// MaxReasonBytes bounds the reason PUT /api/controller journals.
const MaxReasonBytes = 500

// controllerStatus is the controller's mode as the API shows it. In
// cluster mode it is the switch as this node's copy of the metadata has
// it, with this node's failover delay.
func (s *Server) controllerStatus() apiclient.ControllerStatus {
	if s.node != nil {
		on, d := s.node.AutomaticHealing()
		return apiclient.ControllerStatus{Automatic: on, FailoverAfterMS: d.Milliseconds(), Switchable: true}
	}
	if s.ctl == nil {
		d := s.cfg.FailoverAfter.Duration()
		return apiclient.ControllerStatus{Automatic: d > 0, FailoverAfterMS: d.Milliseconds()}
	}
	d := s.ctl.FailoverAfter()
	return apiclient.ControllerStatus{Automatic: d > 0, FailoverAfterMS: d.Milliseconds(), Switchable: true}
}

// handleController answers GET /api/controller.
func (s *Server) handleController(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.controllerStatus())
}

// handleSetController answers PUT /api/controller with {"automatic":
// bool, "reason": "..."}: automatic healing off (the controller changes
// no metadata, as with PYSTREAM_FAILOVER_AFTER=0) or on again, after
// PYSTREAM_FAILOVER_AFTER — or, when that is 0, after its default. The
// change is journaled (event healing, by the operator, with the reason)
// and lasts until the server stops. In cluster mode the switch is a fact
// of the cluster's metadata, proposed through Raft from whichever node is
// asked (setClusterHealing) and kept across leader changes and restarts.
func (s *Server) handleSetController(w http.ResponseWriter, r *http.Request) {
	var req apiclient.ControllerRequest
	if ae := s.readJSON(w, r, &req); ae != nil {
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
	if s.node != nil {
		s.setClusterHealing(w, r, *req.Automatic, req.Reason)
		return
	}
	if s.ctl == nil || s.local == nil {
		writeAPIError(w, newAPIError(http.StatusConflict, CodeConflict, "this server runs no controller to switch"))
		return
	}
	delay, summary := time.Duration(0), "the controller changes no metadata (PYSTREAM_FAILOVER_AFTER's manual mode): "+
		"failover, shrinking the active set, recovery and leader moves are the operator's"
	if *req.Automatic {
		delay = s.cfg.FailoverAfter.Duration()
		if delay <= 0 {
			delay = DefaultFailoverAfter
		}
		summary = fmt.Sprintf("the controller fails over, shrinks active sets and recovers after %s", delay)
	}
	if s.ctl.FailoverAfter() == delay {
		writeJSON(w, http.StatusOK, s.controllerStatus()) // already so: nothing to journal
		return
	}
	// Journaled first: a change the journal cannot record is not made.
	if _, err := s.local.JournalHealing(*req.Automatic, summary, req.Reason); err != nil {
		writeAPIError(w, s.opError("journal the change of automatic healing", err))
		return
	}
	if err := s.ctl.SetFailoverAfter(delay); err != nil {
		writeAPIError(w, classify(err))
		return
	}
	s.logger.Info("automatic healing switched", "automatic", *req.Automatic, "failover_after", delay, "reason", req.Reason)
	writeJSON(w, http.StatusOK, s.controllerStatus())
}

// setClusterHealing switches automatic healing for a cluster-mode
// cluster: the set-healing metadata command, proposed through Raft — on
// a node that does not lead the metadata group, forwarded to the one that
// does, as every metadata change is — and journaled where it is applied
// (event healing, by the operator, with the reason). Every node's
// controller follows it; only the leader's runs. Asked for what it is
// already, it changes and journals nothing; it is proposed all the same,
// so that a metadata group with no leader is 503, not a 200 from a copy
// that may be behind.
func (s *Server) setClusterHealing(w http.ResponseWriter, r *http.Request, on bool, reason string) {
	changed, err := s.node.SetAutomaticHealing(r.Context(), on, reason)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	if changed {
		_, d := s.node.AutomaticHealing()
		s.logger.Info("automatic healing switched for the cluster", "automatic", on, "failover_after", d, "reason", reason)
	}
	writeJSON(w, http.StatusOK, s.controllerStatus())
}
