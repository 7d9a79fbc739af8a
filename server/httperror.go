package server

import (
	"encoding/json"
	"net/http"
)

// Error codes carried in ErrorBody.Code. Clients branch on the code, never on
// the message, which is for people.
const (
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInternal         = "internal"
)

// ErrorResponse is the JSON body of every error answer:
//
//	{"error": {"code": "not_found", "message": "no endpoint GET /nope"}}
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inside of an ErrorResponse.
type ErrorBody struct {
	// Code is a stable, machine-readable code such as CodeNotFound.
	Code string `json:"code"`
	// Message explains the error to a person.
	Message string `json:"message"`
}

// writeJSON writes v as a JSON answer with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only values of this package are written; a failure here is a
		// programming error, reported as a plain 500.
		http.Error(w, `{"error":{"code":"internal","message":"cannot encode response"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n')) // the client going away is not our error
}

// writeError writes the standard JSON error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, ErrorResponse{Error: ErrorBody{Code: code, Message: message}})
}
