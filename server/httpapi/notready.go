package httpapi

import (
	"net/http"
	"strings"
)

// This file is the rule "nothing answered before it is known": a node of
// cluster mode that has just started replays its copy of the cluster's
// metadata from Raft, and until that copy is current
// (backend.Data.MetadataCurrent) an answer built from it could say that a
// topic does not exist, or that a consumer has no offsets, when both do.
// Every route that answers from the metadata then answers 503 not_ready
// with Retry-After instead, and the client asks again.

// notReadyRetryAfter is the Retry-After of a not_ready answer, in seconds.
const notReadyRetryAfter = "1"

// needsMetadata reports whether route r answers from the cluster's
// metadata: every route under /api/ but the health and readiness checks
// and the metadata group's membership, which an operator needs to bring a
// node's metadata back in the first place.
func needsMetadata(r route) bool {
	if !strings.HasPrefix(r.Path, "/api/") {
		return false
	}
	switch r.Path {
	case "/api/health", "/api/ready", "/api/cluster/nodes", "/api/cluster/nodes/{id}":
		return false
	}
	return true
}

// whenCurrent answers 503 not_ready, with Retry-After, while the metadata
// is not known to be current, and serves h once it is.
func (a *API) whenCurrent(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.data.MetadataCurrent() {
			w.Header().Set("Retry-After", notReadyRetryAfter)
			writeError(w, http.StatusServiceUnavailable, CodeNotReady, notReadyMessage)
			return
		}
		h(w, r)
	}
}

// notReadyMessage is what a not_ready answer says.
const notReadyMessage = "this node is replaying the cluster's metadata after its start and cannot answer yet; retry shortly"

// notReadyResponse is the OpenAPI description of a not_ready answer.
func notReadyResponse() response {
	return errorResponse("This node is still replaying the cluster's metadata after a start (cluster mode); retry after Retry-After seconds.",
		CodeNotReady, notReadyMessage)
}
