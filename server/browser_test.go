package server

import (
	"io"
	"net/http"
	"net/http/httptest"
)

// localRequest is httptest.NewRequest with the Host a client of a
// loopback server sends (httptest's default, example.com, is a foreign
// Host the server refuses: TestBrowserForeignHost).
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8000"
	return r
}
