package server

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
	CodeInternal             = apiclient.CodeInternal
)

// ErrorResponse is the JSON body of every error answer:
//
//	{"error": {"code": "not_found", "message": "no endpoint GET /nope"}}
//
// It is the client's type, so server and client cannot disagree on it.
type ErrorResponse = apiclient.ErrorResponse

// ErrorBody is the inside of an ErrorResponse: code, message and the extras
// some errors carry (broker_ids, committed, requested, records).
type ErrorBody = apiclient.ErrorBody

// writeJSON writes v as a JSON answer with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
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
