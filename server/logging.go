package server

import (
	"io"
	"log/slog"
	"strings"
)

// The log levels PyStream uses. slog has no level above Error, so CRITICAL
// is Error+4, and NewLogger prints it by name instead of as "ERROR+4".
const (
	LevelDebug    = slog.LevelDebug
	LevelInfo     = slog.LevelInfo
	LevelWarning  = slog.LevelWarn
	LevelError    = slog.LevelError
	LevelCritical = slog.LevelError + 4
)

// parseLevel maps a configuration name, in any case, to its level. WARN is
// accepted as well as WARNING.
func parseLevel(s string) (slog.Level, bool) {
	switch strings.ToUpper(s) {
	case "DEBUG":
		return LevelDebug, true
	case "INFO":
		return LevelInfo, true
	case "WARNING", "WARN":
		return LevelWarning, true
	case "ERROR":
		return LevelError, true
	case "CRITICAL":
		return LevelCritical, true
	}
	return 0, false
}

// levelName is the name printed in log lines: the configuration names
// DEBUG, INFO, WARNING, ERROR and CRITICAL, so that what a user sets is what
// they see. Levels between them keep slog's "INFO+2" style.
func levelName(l slog.Level) string {
	switch l {
	case LevelWarning:
		return "WARNING"
	case LevelCritical:
		return "CRITICAL"
	}
	return l.String()
}

// NewLogger is the one place where PyStream's logger is set up: level and
// format come from cfg, lines go to w (stderr in the binary). Library
// modules never log; only the server does.
func NewLogger(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{
		Level: cfg.LogLevel,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.LevelKey {
				if l, ok := a.Value.Any().(slog.Level); ok {
					a.Value = slog.StringValue(levelName(l))
				}
			}
			return a
		},
	}
	var h slog.Handler
	if cfg.LogFormat == FormatJSON {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h)
}
