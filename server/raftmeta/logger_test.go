package raftmeta

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
)

// TestRaftmetaLoggerLevels: Raft's Info goes to Debug, Warn and Error
// stay; names become the "component" attribute and With arguments stay
// across Named.
func TestRaftmetaLoggerLevels(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := newHclog(base, "raft")

	l.Info("entering follower state", "term", 3)
	l.Named("snapshot").With("id", "x").Warn("slow")
	l.Trace("dropped below debug")

	var records []map[string]any
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var r map[string]any
		require.NoError(t, dec.Decode(&r))
		records = append(records, r)
	}
	require.Len(t, records, 2)
	require.Equal(t, "DEBUG", records[0]["level"])
	require.Equal(t, "raft", records[0]["component"])
	require.EqualValues(t, 3, records[0]["term"])
	require.Equal(t, "WARN", records[1]["level"])
	require.Equal(t, "raft.snapshot", records[1]["component"])
	require.Equal(t, "x", records[1]["id"])

	require.True(t, l.IsDebug())
	require.True(t, l.IsInfo())
	require.False(t, l.IsTrace())
	require.Equal(t, hclog.Debug, l.GetLevel())
	require.Equal(t, []any{"id", "x"}, l.With("id", "x").ImpliedArgs())
	require.Equal(t, "raft.transport", l.Named("transport").Name())
	require.Equal(t, "other", l.Named("transport").ResetNamed("other").Name())

	l.StandardLogger(nil).Print("from the standard logger")
	require.Contains(t, buf.String(), "from the standard logger")
}
