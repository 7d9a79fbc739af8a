package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/server/apitest"
)

// BenchmarkHTTPHealth measures one GET /api/health through the whole
// handler chain (request log to io.Discard, JSON fallbacks, mux, handler).
func BenchmarkHTTPHealth(b *testing.B) {
	benchGet(b, "/api/health", http.StatusOK)
}

// BenchmarkHTTPNotFound measures the JSON 404 path, which asks the mux
// twice.
func BenchmarkHTTPNotFound(b *testing.B) {
	benchGet(b, "/nope", http.StatusNotFound)
}

// benchGet serves GET path through a default server's handler, in process,
// and requires the status want.
func benchGet(b *testing.B, path string, want int) {
	cfg := Defaults()
	cfg.DataDir = b.TempDir()
	cfg.KafkaPort = 0 // no fixed ports in tests
	s, err := New(cfg, NewLogger(io.Discard, cfg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	req := apitest.LocalRequest(http.MethodGet, path, nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("status %d, want %d", rec.Code, want)
		}
	}
}

// BenchmarkHTTPProduceRaw measures durable produce over a loopback
// listener: one record per request (application/octet-stream), 64
// concurrent clients, a topic of one partition with replication factor 1 —
// the shape tools/peerbench compares with NATS JetStream. Every request
// returns only after its record is fsync-ed.
func BenchmarkHTTPProduceRaw(b *testing.B) {
	s := benchServer(b, durable.OS)
	benchProduce(b, s.Handler())
	reportFsyncs(b, s)
}

// BenchmarkHTTPProduceCost splits what one produce request costs, with the
// same load as BenchmarkHTTPProduceRaw:
//
//	go test -run '^$' -bench BenchmarkHTTPProduceCost -benchtime 3s
//
// It runs three times. "durable" is PyStream as it runs. "no-fsync" is
// PyStream on logtest.NoSyncFS, every fsync skipped: nothing is durable, and
// the run exists only to show what fsync costs. "no-work" is a handler that
// reads the body and answers a fixed JSON object: what Go's HTTP stack and
// the client cost alone.
func BenchmarkHTTPProduceCost(b *testing.B) {
	b.Run("durable", func(b *testing.B) { benchProduce(b, benchServer(b, durable.OS).Handler()) })
	b.Run("no-fsync", func(b *testing.B) {
		benchProduce(b, benchServer(b, logtest.NoSyncFS{FS: durable.OS}).Handler())
	})
	b.Run("no-work", func(b *testing.B) {
		benchProduce(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"topic":"bench","records":[{"partition":0,"offset":0,"timestamp":0}]}`))
		}))
	})
}

// benchServer is a server with one broker on fsys and a topic "bench" of
// one partition, replication factor 1.
func benchServer(b *testing.B, fsys durable.FS) *Server {
	b.Helper()
	cfg := Defaults()
	cfg.DataDir = b.TempDir()
	cfg.Brokers = 1
	s, err := newServer(cfg, NewLogger(io.Discard, cfg), fsys)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if err := s.Cluster().CreateTopic("bench", 1, 1); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchProduce posts one 100-byte record per request to h over a loopback
// listener from 64 concurrent clients and reports records/s.
func benchProduce(b *testing.B, h http.Handler) {
	b.Helper()
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	transport := &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}
	b.Cleanup(transport.CloseIdleConnections)
	hc := &http.Client{Transport: transport}
	url := srv.URL + "/api/topics/bench/records"
	payload := bytes.Repeat([]byte("x"), 100)
	b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !benchPost(b, hc, url, payload) {
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// reportFsyncs adds the batch size reached (records per data fsync) and
// the mean fsync latency, read from the server's own histogram.
func reportFsyncs(b *testing.B, s *Server) {
	b.Helper()
	fams, err := s.metrics.registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "pystream_fsync_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() != "file" {
				continue
			}
			h := m.GetHistogram()
			if n := h.GetSampleCount(); n > 0 {
				b.ReportMetric(float64(b.N)/float64(n), "records/fsync")
				b.ReportMetric(h.GetSampleSum()/float64(n)*1e3, "ms/fsync")
			}
		}
	}
}

// benchPost produces payload as one record with a POST to url and reports
// whether it was acknowledged (a failure is the benchmark's error).
func benchPost(b *testing.B, hc *http.Client, url string, payload []byte) bool {
	resp, err := hc.Post(url, "application/octet-stream", bytes.NewReader(payload))
	if err != nil {
		b.Error(err)
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("status %d", resp.StatusCode)
		return false
	}
	return true
}

// serveBench serves s on a free loopback port until the benchmark ends
// (then closes it) and returns its base URL.
func serveBench(b *testing.B, s *Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		<-served
		_ = s.Close()
	})
	return "http://" + ln.Addr().String()
}
