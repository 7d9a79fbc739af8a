package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Timeouts of the HTTP server. They bound how long a slow or stalled client
// can hold a connection; none of them limits a well-behaved request.
const (
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout = 30 * time.Second
	// WriteTimeout bounds the time from the end of the request headers to
	// the end of the answer.
	WriteTimeout = 30 * time.Second
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout = 120 * time.Second
	// ShutdownTimeout bounds how long a shutdown waits for in-flight
	// requests to finish.
	ShutdownTimeout = 10 * time.Second
)

// Server is PyStream's HTTP server: the routes of routes.go behind request
// logging and JSON 404/405 answers. It is safe for concurrent use; handlers
// run concurrently, one goroutine per request, and only read the Server.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	routes  []route
	openapi []byte // the encoded OpenAPI document, built once
	handler http.Handler
}

// New builds a server for cfg that logs to logger.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	s := &Server{cfg: cfg, logger: logger}
	s.routes = s.routeTable()
	doc := buildOpenAPI(apiInfo(), apiTags(), s.routes)
	var err error
	if s.openapi, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return nil, fmt.Errorf("server: encode OpenAPI document: %w", err)
	}
	mux := http.NewServeMux()
	for _, r := range s.routes {
		mux.Handle(r.Method+" "+r.Path, r.Handler)
	}
	s.handler = observe(logger, jsonFallbacks(mux))
	return s, nil
}

// Handler returns the server's HTTP handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// ListenAndServe listens on the configured address and serves until ctx is
// done, then shuts down gracefully (see Serve). When the address cannot be
// bound the error wraps the system error, so
// errors.Is(err, syscall.EADDRINUSE) tells an address in use.
func (s *Server) ListenAndServe(ctx context.Context) error {
	var lc net.ListenConfig
	// Listening is quick; a ctx already done still gets a clean start and
	// an immediate graceful stop from Serve.
	ln, err := lc.Listen(context.WithoutCancel(ctx), "tcp", s.cfg.Addr())
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", s.cfg.Addr(), err)
	}
	return s.Serve(ctx, ln)
}

// Serve answers requests on ln until ctx is done. It logs one start-up line
// with the address. When ctx is done it stops accepting connections, waits
// up to ShutdownTimeout for in-flight requests to finish, and returns nil on
// a clean shutdown. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), LevelWarning),
	}
	addr := ln.Addr().String()
	s.logger.Info("pystream-server listening",
		"addr", addr,
		"health", "http://"+addr+"/api/health",
		"docs", "http://"+addr+"/docs",
	)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		// Serve returns only on a listener failure before any shutdown.
		return fmt.Errorf("server: serve on %s: %w", addr, err)
	case <-ctx.Done():
	}

	s.logger.Info("shutting down: finishing in-flight requests", "timeout", ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: serve on %s: %w", addr, err)
	}
	s.logger.Info("stopped")
	return nil
}
