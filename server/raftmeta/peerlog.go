package raftmeta

import (
	"fmt"
	"sync"
	"time"
)

// This file keeps hashicorp/raft's complaints about a peer it cannot reach
// in proportion. A peer that is down, cut off or restarting is an expected
// absence — the controller fails its partitions over and the Raft group
// carries on with a majority — yet Raft logs every failed heartbeat,
// append and vote request to it at ERROR, several a second for as long as
// the absence lasts. The adapter logs those at WARN, and of each kind for
// each peer only the first line, then at most one per PeerLogEvery, which
// says how many like it were left out since the last one.

// PeerLogEvery is the least time between two lines of the same kind about
// the same unreachable peer (peerNotices).
const PeerLogEvery = 30 * time.Second

// peerNotices maps each hashicorp/raft message about a failed exchange
// with one peer to the argument that names the peer ("" for a message
// about the node's own isolation, which names none). Raft logs these at
// ERROR (and "failed to contact" at WARN); they are logged at WARN and
// rate-limited. Every other message keeps its level, once per call.
var peerNotices = map[string]string{
	"failed to appendEntries to":              "peer",
	"failed to heartbeat to":                  "peer",
	"failed to pipeline appendEntries":        "peer",
	"failed to start pipeline replication to": "peer",
	"failed to send snapshot to":              "peer",
	"failed to make requestVote RPC":          "target",
	"failed to contact":                       "server-id",
	// A node cut off from the others stands for election again every
	// election timeout, a second or two, as long as the cut lasts.
	"Election timeout reached, restarting election": "",
}

// peerLimiter decides which peer notices are logged. It is shared by an
// adapter and every logger derived from it (With, Named), and safe for
// concurrent use.
type peerLimiter struct {
	every time.Duration
	now   func() time.Time

	// mu guards seen.
	mu sync.Mutex
	// seen holds, per message and peer, when a line was last logged and
	// how many were left out since.
	seen map[peerNoticeKey]*peerNoticeState
}

type peerNoticeKey struct {
	msg  string
	peer string
}

type peerNoticeState struct {
	logged     time.Time
	suppressed int
}

func newPeerLimiter(every time.Duration, now func() time.Time) *peerLimiter {
	return &peerLimiter{every: every, now: now, seen: map[peerNoticeKey]*peerNoticeState{}}
}

// admit reports whether msg, logged with args, is a peer notice
// (peerNotices), and if it is whether to log it now, with how many lines
// like it were left out since the last one logged.
func (l *peerLimiter) admit(msg string, args []any) (notice, log bool, suppressed int) {
	name, ok := peerNotices[msg]
	if !ok {
		return false, true, 0
	}
	key := peerNoticeKey{msg: msg, peer: argValue(args, name)}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.seen[key]
	if !ok {
		l.seen[key] = &peerNoticeState{logged: now}
		return true, true, 0
	}
	if now.Sub(st.logged) < l.every {
		st.suppressed++
		return true, false, 0
	}
	suppressed = st.suppressed
	st.logged, st.suppressed = now, 0
	return true, true, suppressed
}

// argValue is the value of key among hclog's alternating key-value args,
// rendered as text; empty when absent.
func argValue(args []any, key string) string {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}
