package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// serveNoopFlag is the hidden first argument that makes peerbench serve the
// ceiling's do-nothing HTTP server instead of measuring. peerbench passes it
// to a copy of itself, so that the server of the ceiling row runs in a
// process of its own, as PyStream's server does.
const serveNoopFlag = "-serve-noop"

// Timeouts of the do-nothing server: the same values as PyStream's HTTP
// server, so that both pay for the same per-connection deadlines.
const (
	noopReadHeaderTimeout = 5 * time.Second
	noopReadTimeout       = 30 * time.Second
	noopWriteTimeout      = 30 * time.Second
	noopIdleTimeout       = 120 * time.Second
	noopShutdownTimeout   = 5 * time.Second
	// noopMaxBody bounds the body the server reads; a larger body gets
	// 413, as PyStream answers a record above its maximum size.
	noopMaxBody = 1 << 20
)

// Header values of every answer of the do-nothing server, set as slices like
// PyStream sets them so that answering does not allocate them.
var (
	noopJSONType = []string{"application/json"}
	noopNosniff  = []string{"nosniff"}
)

// noopArgs reports whether peerbench was started as the ceiling's server,
// and with which address.
func noopArgs(args []string) (addr string, ok bool) {
	if len(args) == 3 && args[1] == serveNoopFlag {
		return args[2], true
	}
	return "", false
}

// benchCeiling measures the HTTP ceiling of this machine: the chosen load
// generators, exactly as they load PyStream, against a server that reads
// each body and answers a produce-like JSON object without any other work.
// Its rows are the most a Go net/http server can answer here with these
// clients.
func benchCeiling(cfg config) ([]result, error) {
	addr, stop, err := startNoop()
	if err != nil {
		return nil, err
	}
	defer stop()
	rs, err := benchHTTP(cfg, addr, func(load string) string { return "http-ceiling " + load })
	for i := range rs {
		rs[i].kind = kindCeiling
	}
	return rs, err
}

// startNoop starts this binary again as the do-nothing server on a free port
// of 127.0.0.1 and waits until it answers. stop interrupts it, and kills it
// if it has not exited within noopShutdownTimeout.
func startNoop() (addr string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("find peerbench's own binary: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return "", nil, fmt.Errorf("find a free port: %w", err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, exe, serveNoopFlag, addr)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = noopShutdownTimeout
	cmd.Stderr = os.Stderr
	// The server reads its stdin and exits at end of file, so it cannot
	// outlive peerbench even when peerbench is killed.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return "", nil, fmt.Errorf("connect to the do-nothing server's stdin: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return "", nil, fmt.Errorf("start the do-nothing server: %w", err)
	}
	stop = func() {
		cancel()
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	client := &http.Client{Timeout: 5 * time.Second}
	if err := waitHealthy(client, "http://"+addr, 15*time.Second); err != nil {
		stop()
		return "", nil, fmt.Errorf("do-nothing server: %w", err)
	}
	return addr, stop, nil
}

// serveNoop runs the do-nothing server on addr, which must be a loopback
// address, until it is interrupted or its stdin reaches end of file.
func serveNoop(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", serveNoopFlag, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s %q: the host must be a loopback address such as 127.0.0.1", serveNoopFlag, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	srv := &http.Server{
		Handler:           noopHandler(),
		ReadHeaderTimeout: noopReadHeaderTimeout,
		ReadTimeout:       noopReadTimeout,
		WriteTimeout:      noopWriteTimeout,
		IdleTimeout:       noopIdleTimeout,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), noopShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down the server on %s: %w", addr, err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", addr, err)
	}
	return nil
}

// noopHandler answers GET /api/health, and POST /api/topics/{topic}/records
// like PyStream answers a one-record produce: it reads the whole body and
// answers 200 with
//
//	{"records":[{"partition":0,"offset":N,"timestamp":T,"leader":1,"brokers":[1]}]}
//
// where N counts the requests and T is the time in nanoseconds. Nothing is
// stored.
func noopHandler() http.Handler {
	var offset atomic.Uint64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) {
		writeNoopJSON(w, http.StatusOK, []byte(`{"status":"ok","service":"peerbench-noop"}`+"\n"))
	})
	mux.HandleFunc("POST /api/topics/{topic}/records", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, io.LimitReader(r.Body, noopMaxBody+1))
		switch {
		case err != nil:
			writeNoopJSON(w, http.StatusBadRequest, []byte(`{"error":{"code":"bad_request","message":"the body could not be read"}}`+"\n"))
			return
		case n > noopMaxBody:
			writeNoopJSON(w, http.StatusRequestEntityTooLarge, []byte(`{"error":{"code":"payload_too_large","message":"the body is larger than 1 MiB"}}`+"\n"))
			return
		}
		writeNoopJSON(w, http.StatusOK, produceAnswer(offset.Add(1)-1, time.Now().UnixNano()))
	})
	return mux
}

// produceAnswer encodes the answer to a one-record produce the way PyStream
// does, by appending to one buffer.
func produceAnswer(offset uint64, timestamp int64) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"records":[{"partition":0,"offset":`...)
	b = strconv.AppendUint(b, offset, 10)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, timestamp, 10)
	return append(b, `,"leader":1,"brokers":[1]}]}`+"\n"...)
}

// writeNoopJSON writes one JSON answer with the headers PyStream sets on its
// own JSON answers.
func writeNoopJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = noopJSONType
	h["X-Content-Type-Options"] = noopNosniff
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client going away is not the server's error
}
