package raftmeta

import (
	"context"
	"io"
	"log"
	"log/slog"
	"time"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter is the hclog.Logger that hashicorp/raft, its transport and
// its snapshot store write to; it forwards to a *slog.Logger. Raft's Info
// messages (elections, heartbeats resumed, snapshots) go to Debug, so a
// healthy cluster is quiet at Info; Warn and Error stay as they are,
// except Raft's lines about a peer it cannot reach, which are logged at
// Warn and rate-limited (peerlog.go).
// It is safe for concurrent use, as the slog.Logger is.
type hclogAdapter struct {
	base  *slog.Logger // the logger given, without name or arguments
	name  string
	args  []any        // the With arguments, for ImpliedArgs
	l     *slog.Logger // base with the name as "component" and args
	peers *peerLimiter // shared with every logger derived from this one
}

var _ hclog.Logger = (*hclogAdapter)(nil)

// newHclog returns the adapter of base, named name, that rate-limits peer
// notices to one per PeerLogEvery on the wall clock.
func newHclog(base *slog.Logger, name string, args ...any) *hclogAdapter {
	return newHclogLimited(base, newPeerLimiter(PeerLogEvery, time.Now), name, args...)
}

func newHclogLimited(base *slog.Logger, peers *peerLimiter, name string, args ...any) *hclogAdapter {
	return &hclogAdapter{base: base, name: name, args: args, l: base.With("component", name).With(args...), peers: peers}
}

// slogLevel maps an hclog level to the slog level it is logged at.
func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug, hclog.Info, hclog.NoLevel, hclog.DefaultLevel:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	notice, log, suppressed := false, true, 0
	if level >= hclog.Warn {
		notice, log, suppressed = a.peers.admit(msg, args)
	}
	switch {
	case !log:
		return
	case notice:
		level = min(level, hclog.Warn) // an expected absence, not an error
		if suppressed > 0 {
			args = append(args[:len(args):len(args)], "suppressed", suppressed)
		}
	}
	a.l.Log(context.Background(), slogLevel(level), msg, args...)
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(level hclog.Level) bool {
	return a.l.Enabled(context.Background(), slogLevel(level))
}

func (a *hclogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.args }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	return newHclogLimited(a.base, a.peers, a.name, append(a.args[:len(a.args):len(a.args)], args...)...)
}

func (a *hclogAdapter) Name() string { return a.name }

// Named appends name to the logger's name ("raft.snapshot").
func (a *hclogAdapter) Named(name string) hclog.Logger {
	if a.name != "" {
		name = a.name + "." + name
	}
	return a.ResetNamed(name)
}

// ResetNamed replaces the logger's name, logged as the "component"
// attribute.
func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	return newHclogLimited(a.base, a.peers, name, a.args...)
}

// SetLevel does nothing: the slog handler decides what is logged.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

// GetLevel returns the lowest hclog level the slog handler logs.
func (a *hclogAdapter) GetLevel() hclog.Level {
	for _, level := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Warn, hclog.Error} {
		if a.enabled(level) {
			return level
		}
	}
	return hclog.Off
}

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	level := slog.LevelDebug
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = slogLevel(opts.ForceLevel)
	}
	return slog.NewLogLogger(a.l.Handler(), level)
}

func (a *hclogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return a.StandardLogger(opts).Writer()
}
