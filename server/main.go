package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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

// Main runs the pystream-server command: it reads the configuration from
// environ and ./.env, sets up logging on stderr, serves until ctx is done
// (the binary cancels ctx on SIGINT or SIGTERM), and returns the exit
// status. args are the command-line arguments after the program name; the
// only one is -h.
func Main(ctx context.Context, args, environ []string, stderr io.Writer) int {
	flags := flag.NewFlagSet("pystream-server", flag.ContinueOnError)
	flags.SetOutput(stderr)
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
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "pystream-server: unexpected argument %q\n\n", flags.Arg(0))
		flags.Usage()
		return ExitUsage
	}

	cfg, unknown, err := Load(environ, DotEnvFile)
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
		"data_dir", cfg.DataDir, "brokers", int(cfg.Brokers), "max_request_bytes", int64(cfg.MaxRequestBytes))

	srv, err := New(cfg, logger)
	if err != nil {
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
	if err := srv.ListenAndServe(ctx); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			logger.Error("cannot listen: address already in use; stop the other process or set PYSTREAM_PORT to a free port",
				"addr", cfg.Addr())
		} else {
			logger.Error("server failed", "err", err)
		}
		code = ExitFailure
	}
	// In-flight requests are finished (or the listener never opened):
	// now the cluster's logs can be closed and the lock released.
	if err := srv.Close(); err != nil {
		logger.Error("closing the cluster failed", "err", err)
		code = ExitFailure
	}
	return code
}
