package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/pystream/pystream/server/apiclient"
)

// Error codes carried in ErrorBody.Code. Clients branch on the code, never on
// the message, which is for people. They are the API contract's codes, shared
// with the Go client (package apiclient).
const (
	CodeInvalidArgument      = apiclient.CodeInvalidArgument
	CodeNotFound             = apiclient.CodeNotFound
	CodeMethodNotAllowed     = apiclient.CodeMethodNotAllowed
	CodeConflict             = apiclient.CodeConflict
	CodePayloadTooLarge      = apiclient.CodePayloadTooLarge
	CodeUnsupportedMediaType = apiclient.CodeUnsupportedMediaType
	CodeUnavailable          = apiclient.CodeUnavailable
	CodeNotReady             = apiclient.CodeNotReady
	CodeInternal             = apiclient.CodeInternal
	CodeInsufficientStorage  = apiclient.CodeInsufficientStorage
	CodeOffsetOutOfRange     = apiclient.CodeOffsetOutOfRange
	CodeFencedMemberEpoch    = apiclient.CodeFencedMemberEpoch
	CodeUnknownMemberID      = apiclient.CodeUnknownMemberID
	CodeNotCoordinator       = apiclient.CodeNotCoordinator
	CodeOutOfOrderSequence   = apiclient.CodeOutOfOrderSequence
	CodeInvalidProducerEpoch = apiclient.CodeInvalidProducerEpoch
	CodeUnknownProducer      = apiclient.CodeUnknownProducer
	CodeDuplicateSequence    = apiclient.CodeDuplicateSequence
	CodeInvalidProducerBatch = apiclient.CodeInvalidProducerBatch
)

// ErrorResponse is the JSON body of every error answer:
//
//	{"error": {"code": "not_found", "message": "topic \"nope\": unknown topic",
//	           "request_id": "4f1c9a0e2b7d3865"}}
//
// It is the client's type, so server and client cannot disagree on it.
type ErrorResponse = apiclient.ErrorResponse

// ErrorBody is the inside of an ErrorResponse: code, message, request id
// and the extras some errors carry (broker_ids, committed, requested,
// log_start, high_watermark, records, reasons).
type ErrorBody = apiclient.ErrorBody

// writeJSON writes v as a JSON answer with the given status. An error body
// is finished first (finishError), however a handler built it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if er, ok := v.(ErrorResponse); ok {
		er.Error = finishError(w, er.Error, nil)
		v = er
	}
	body, err := json.Marshal(v)
	if err != nil {
		// Only values of this package are written; a failure here is a
		// programming error, reported as a plain 500.
		http.Error(w, `{"error":{"code":"internal","message":"cannot encode response"}}`, http.StatusInternalServerError)
		return
	}
	writeJSONBytes(w, status, append(body, '\n'))
}

// writeJSONBytes writes an already encoded JSON answer.
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client going away is not our error
}

// Header values shared by every JSON answer; set directly as slices so that
// answering does not allocate them again.
var (
	jsonContentType = []string{"application/json"}
	nosniff         = []string{"nosniff"}
)

// writeError writes the standard JSON error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, ErrorResponse{Error: ErrorBody{Code: code, Message: message}})
}

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 that
// sets none of its own: a leader or node that cannot serve now (cut off,
// paused, failing over) is replaced, or back, within about the failover
// delay, so a client asks again shortly — of this node, which names the
// partition's new leader once it knows it.
const unavailableRetryAfter = "1"

// writeAPIError sends e, and hands its cause to the middleware, which logs
// it with the request id. A 503 says when to retry (Retry-After).
func writeAPIError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", unavailableRetryAfter)
	}
	body := finishError(w, e.body, e.cause)
	writeJSON(w, e.status, ErrorResponse{Error: body})
}

// finishError is the last step of every error body, whoever built it: the
// request's id goes in, and every path of the data directory left in a
// message is replaced by the name of what it is (scrubPaths), so that no
// answer carries one. The body and the cause are noted for the request's
// log lines. Outside the middleware (a handler called directly) the body
// is returned as it is.
func finishError(w http.ResponseWriter, body ErrorBody, cause error) ErrorBody {
	ex := recorderOf(w)
	if ex == nil {
		return body
	}
	if body.RequestID == ex.id {
		return body // finished already (writeAPIError, then writeJSON)
	}
	body.RequestID = ex.id
	body.Message = scrubPaths(body.Message, ex.root)
	if len(body.Reasons) > 0 {
		reasons := make([]string, len(body.Reasons))
		for i, r := range body.Reasons {
			reasons[i] = scrubPaths(r, ex.root)
		}
		body.Reasons = reasons
	}
	for i, rec := range body.Records {
		if rec.Error != nil {
			re := *rec.Error
			re.Message = scrubPaths(re.Message, ex.root)
			body.Records[i].Error = &re
		}
	}
	ex.failure, ex.cause = body, cause
	ex.failed = true
	return body
}
