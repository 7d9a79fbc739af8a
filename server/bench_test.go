package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHTTPHealth measures one GET /api/health through the whole
// handler chain (request log to io.Discard, JSON fallbacks, mux, handler).
func BenchmarkHTTPHealth(b *testing.B) {
	cfg := Defaults()
	cfg.DataDir = b.TempDir()
	s, err := New(cfg, NewLogger(io.Discard, cfg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	req := httptest.NewRequest(http.MethodGet, "/api/health", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkHTTPNotFound measures the JSON 404 path, which asks the mux
// twice.
func BenchmarkHTTPNotFound(b *testing.B) {
	cfg := Defaults()
	cfg.DataDir = b.TempDir()
	s, err := New(cfg, NewLogger(io.Discard, cfg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	req := httptest.NewRequest(http.MethodGet, "/nope", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
