package raftmeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
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

// TestRaftmetaLoggerPeerNotices: Raft's lines about a peer it cannot
// reach are logged at WARN, not ERROR — a node that is down is an
// expected absence — and of each kind, for each peer, the first is
// logged, then at most one per PeerLogEvery, counting the ones left out.
// Other peers, other kinds and real errors are not held back.
func TestRaftmetaLoggerPeerNotices(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newHclogLimited(base, newPeerLimiter(PeerLogEvery, func() time.Time { return now }), "raft")
	peer1 := raft.Server{Suffrage: raft.Voter, ID: "1", Address: "node-1:7001"}
	peer2 := raft.Server{Suffrage: raft.Voter, ID: "2", Address: "node-2:7001"}
	unreachable := errors.New("failed to connect to peer: node-1:7001")

	for range 5 { // a burst of failed appends: one line
		l.Error("failed to appendEntries to", "peer", peer1, "error", unreachable)
		now = now.Add(time.Second)
	}
	l.Error("failed to appendEntries to", "peer", peer2, "error", unreachable) // another peer
	l.Named("x").Error("failed to heartbeat to", "peer", peer1.Address, "error", unreachable)
	l.Error("failed to make requestVote RPC", "target", peer1, "error", unreachable, "term", 3)
	l.Warn("failed to contact", "server-id", raft.ServerID("1"), "time", time.Second)
	l.Warn("failed to contact", "server-id", raft.ServerID("1"), "time", 2*time.Second)
	l.Warn("Election timeout reached, restarting election")
	l.Warn("Election timeout reached, restarting election")
	l.Error("failed to persist vote", "error", "disk full")
	l.Error("failed to persist vote", "error", "disk full")
	now = now.Add(PeerLogEvery) // the window has passed: one more, with the count
	l.Error("failed to appendEntries to", "peer", peer1, "error", unreachable)
	l.Error("failed to appendEntries to", "peer", peer1, "error", unreachable)

	type line struct{ level, msg, peer string }
	var got []line
	var suppressed []any
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var r map[string]any
		require.NoError(t, dec.Decode(&r))
		got = append(got, line{r["level"].(string), r["msg"].(string), peerOf(r)})
		suppressed = append(suppressed, r["suppressed"])
	}
	require.Equal(t, []line{
		{"WARN", "failed to appendEntries to", "node-1:7001"},
		{"WARN", "failed to appendEntries to", "node-2:7001"},
		{"WARN", "failed to heartbeat to", "node-1:7001"},
		{"WARN", "failed to make requestVote RPC", "node-1:7001"},
		{"WARN", "failed to contact", "1"},
		{"WARN", "Election timeout reached, restarting election", ""},
		{"ERROR", "failed to persist vote", ""},
		{"ERROR", "failed to persist vote", ""},
		{"WARN", "failed to appendEntries to", "node-1:7001"},
	}, got)
	require.Equal(t, []any{nil, nil, nil, nil, nil, nil, nil, nil, float64(4)}, suppressed,
		"the line after the window counts the four of the burst left out; the one right after it is left out in turn")
}

// peerOf is the peer a logged line names: the address of its "peer" or
// "target" server, or its "server-id"; empty when it names none.
func peerOf(r map[string]any) string {
	for _, key := range []string{"peer", "target", "server-id"} {
		switch v := r[key].(type) {
		case string:
			return v
		case map[string]any:
			return fmt.Sprint(v["Address"])
		}
	}
	return ""
}
