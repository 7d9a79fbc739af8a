package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/phase-0-foundation.md § Logging: levels DEBUG, INFO, WARNING, ERROR,
// CRITICAL in any case; WARN is accepted too.
func TestLoggingParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want slog.Level
		ok   bool
	}{
		{"DEBUG", LevelDebug, true},
		{"debug", LevelDebug, true},
		{"INFO", LevelInfo, true},
		{"Info", LevelInfo, true},
		{"WARNING", LevelWarning, true},
		{"warning", LevelWarning, true},
		{"WARN", LevelWarning, true},
		{"warn", LevelWarning, true},
		{"ERROR", LevelError, true},
		{"error", LevelError, true},
		{"CRITICAL", LevelCritical, true},
		{"critical", LevelCritical, true},
		{"", 0, false},
		{"FATAL", 0, false},
		{"INFO ", 0, false},
		{"ERROR+4", 0, false},
		{"0", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseLevel(tt.in)
			require.Equal(t, tt.ok, ok)
			if tt.ok {
				require.Equal(t, tt.want, got)
			}
		})
	}
}

func TestLoggingLevelNames(t *testing.T) {
	tests := []struct {
		level slog.Level
		want  string
	}{
		{LevelDebug, "DEBUG"},
		{LevelInfo, "INFO"},
		{LevelWarning, "WARNING"},
		{LevelError, "ERROR"},
		{LevelCritical, "CRITICAL"},
		{LevelInfo + 2, "INFO+2"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, levelName(tt.level))
		if n, ok := parseLevel(tt.want); ok {
			require.Equal(t, tt.level, n, "names round-trip")
		}
	}
	require.Greater(t, LevelCritical, LevelError)
}

// logLines runs fn against a logger configured by cfg and returns the
// output lines.
func logLines(t *testing.T, cfg Config, fn func(*slog.Logger)) []string {
	t.Helper()
	var buf bytes.Buffer
	fn(NewLogger(&buf, cfg))
	out := strings.TrimSpace(buf.String())
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// docs/phase-0-foundation.md § Logging: CRITICAL is printed as CRITICAL, text
// by default.
func TestLoggingTextFormat(t *testing.T) {
	lines := logLines(t, Defaults(), func(l *slog.Logger) {
		l.Log(t.Context(), LevelCritical, "disk gone")
		l.Warn("careful")
	})
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], "level=CRITICAL")
	require.Contains(t, lines[0], `msg="disk gone"`)
	require.Contains(t, lines[1], "level=WARNING")
}

func TestLoggingJSONFormat(t *testing.T) {
	cfg := withDefaults(func(c *Config) { c.LogFormat = FormatJSON })
	lines := logLines(t, cfg, func(l *slog.Logger) {
		l.Log(t.Context(), LevelCritical, "disk gone", "path", "/data")
	})
	require.Len(t, lines, 1)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	require.Equal(t, "CRITICAL", rec["level"])
	require.Equal(t, "disk gone", rec["msg"])
	require.Equal(t, "/data", rec["path"])
}

// The configured level is the threshold.
func TestLoggingThreshold(t *testing.T) {
	tests := []struct {
		level string
		want  []string // messages that pass
	}{
		{"DEBUG", []string{"d", "i", "w", "e", "c"}},
		{"INFO", []string{"i", "w", "e", "c"}},
		{"warning", []string{"w", "e", "c"}},
		{"ERROR", []string{"e", "c"}},
		{"critical", []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			cfg, _, err := Load([]string{"PYSTREAM_LOG_LEVEL=" + tt.level, "PYSTREAM_LOG_FORMAT=json"}, "")
			require.NoError(t, err)
			lines := logLines(t, cfg, func(l *slog.Logger) {
				l.Debug("d")
				l.Info("i")
				l.Warn("w")
				l.Error("e")
				l.Log(t.Context(), LevelCritical, "c")
			})
			var got []string
			for _, line := range lines {
				var rec struct{ Msg string }
				require.NoError(t, json.Unmarshal([]byte(line), &rec))
				got = append(got, rec.Msg)
			}
			require.Equal(t, tt.want, got)
		})
	}
}
