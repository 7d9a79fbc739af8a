package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"syscall"

	"github.com/pystream/pystream/server/datalock"
)

// Exit statuses of the pystream-server binary.
const (
	// ExitOK: served and shut down cleanly, or printed help.
	ExitOK = 0
	// ExitFailure: could not serve, e.g. the address is in use.
	ExitFailure = 1
	// ExitUsage: invalid configuration or command line.
	ExitUsage = 2
)

// DotEnvFile is the file Main reads configuration from, in the working
// directory, when it exists.
const DotEnvFile = ".env"

// Version is the PyStream version the binary was built from, printed by
// pystream-server --version and in its start-up line. make run and make
// install set it from git (`git describe`):
//
//	go build -ldflags "-X github.com/pystream/pystream/server.Version=v0.1.0" ./cmd/pystream-server
var Version = "dev"

// Main runs the pystream-server command: it reads the configuration from
// environ and ./.env, sets up logging on stderr, binds its address, opens
// the data directory, serves until ctx is done (the binary cancels ctx on
// SIGINT or SIGTERM), and returns the exit status. args are the
// command-line arguments after the program name: -h, or --version (printed
// on stdout).
func Main(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("pystream-server", flag.ContinueOnError)
	flags.SetOutput(stderr)
	version := flags.Bool("version", false, "print the version and exit")
	flags.Usage = func() {
		fmt.Fprintf(stderr, "Usage: pystream-server\n\nServes the PyStream HTTP API until SIGINT or SIGTERM.\n\n")
		_ = Usage(stderr) // writing help to stderr; nothing to do if it fails
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if *version {
		fmt.Fprintf(stdout, "pystream-server %s (%s %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return ExitOK
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "pystream-server: unexpected argument %q\n\n", flags.Arg(0))
		flags.Usage()
		return ExitUsage
	}

	cfg, unknown, err := Load(environ, DotEnvFile)
	if err == nil {
		// The TLS files are read now, before the address is bound: a bad
		// one is a configuration error (exit 2) that creates nothing.
		_, err = TLSConfig(cfg)
	}
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			fmt.Fprintf(stderr, "pystream-server: invalid configuration: %s=%q is not allowed; allowed: %s\n\n", ce.Var, ce.Value, ce.Allowed)
		} else {
			fmt.Fprintf(stderr, "pystream-server: %v\n\n", err)
		}
		_ = Usage(stderr) // already failing; the message above says why
		return ExitUsage
	}

	logger := NewLogger(stderr, cfg)
	for _, u := range unknown {
		attrs := []any{"variable", u.Name, "source", u.Source}
		if u.Suggestion != "" {
			attrs = append(attrs, "did_you_mean", u.Suggestion)
		}
		logger.Warn("unknown configuration variable is ignored", attrs...)
	}
	logger.Debug("configuration",
		"app_name", cfg.AppName, "host", cfg.Host, "port", int(cfg.Port),
		"log_level", cfg.LogLevel.String(), "log_format", string(cfg.LogFormat),
		"data_dir", cfg.DataDir, "brokers", int(cfg.Brokers), "max_request_bytes", int64(cfg.MaxRequestBytes),
		"max_open_logs", int(cfg.MaxOpenLogs))

	// Refuse an exposed address without authentication, and a malformed
	// auth file, as a configuration error: before binding anything.
	if err := checkSecurity(cfg); err != nil {
		fmt.Fprintf(stderr, "pystream-server: cannot start: %v\n", err)
		return ExitUsage
	}

	// Bind first: a server that cannot have its address must not have
	// created a data directory (or taken its lock) on the way.
	ln, err := Listen(cfg)
	if err != nil {
		logListenError(logger, cfg, err)
		return ExitFailure
	}
	srv, err := New(cfg, logger)
	if err != nil {
		if cerr := ln.Close(); cerr != nil {
			logger.Warn("closing the listener failed", "err", cerr)
		}
		var locked *datalock.LockedError
		if errors.As(err, &locked) {
			logger.Error("cannot start: the data directory is in use by another server; stop it or set PYSTREAM_DATA_DIR to another directory",
				"data_dir", cfg.DataDir, "lock_file", locked.Path, "pid", locked.PID)
		} else {
			logger.Error("cannot start", "data_dir", cfg.DataDir, "err", err)
		}
		return ExitFailure
	}
	code := ExitOK
	if err := srv.Serve(ctx, ln); err != nil {
		logger.Error("server failed", "err", err)
		code = ExitFailure
	}
	// In-flight requests are finished (or the listener never opened):
	// now the cluster's logs can be closed and the lock released — within
	// a bound in cluster mode, where a peer that is paused or cut off
	// could otherwise hold the stop
	// (docs/phase-7-processes.md § Faults and deadlines).
	if err := srv.CloseWithin(srv.StopDeadline()); err != nil {
		var timeout *StopTimeoutError
		if errors.As(err, &timeout) {
			logger.Error("closing did not finish within its deadline: exiting anyway (every acknowledged record is on disk); the stacks say what held it",
				"deadline", timeout.Deadline, "stacks", timeout.Stacks)
		} else {
			logger.Error("closing the cluster failed", "err", err)
		}
		code = ExitFailure
	}
	return code
}

// logListenError says why the address could not be had, and what to do.
func logListenError(logger *slog.Logger, cfg Config, err error) {
	if errors.Is(err, syscall.EADDRINUSE) {
		logger.Error("cannot listen: address already in use; stop the other process or set PYSTREAM_PORT to a free port",
			"addr", cfg.Addr())
		return
	}
	logger.Error("cannot listen", "addr", cfg.Addr(), "err", err)
}
