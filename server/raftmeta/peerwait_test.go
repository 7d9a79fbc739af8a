package raftmeta

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// flakyTransport fails every AppendEntries until up is set.
type flakyTransport struct {
	raft.Transport
	up    atomic.Bool
	calls atomic.Int64
}

var errDown = errors.New("failed to connect to peer")

func (f *flakyTransport) AppendEntries(raft.ServerID, raft.ServerAddress, *raft.AppendEntriesRequest, *raft.AppendEntriesResponse) error {
	f.calls.Add(1)
	if !f.up.Load() {
		return errDown
	}
	return nil
}

// TestRaftmetaPeerWaitRetriesWhileLeading: an append to a peer that does
// not answer is tried again every PeerRetryEvery inside the call while the
// node leads in the request's term, and returns within one interval of the
// peer answering — Raft's own growing pause never starts. Not leading in
// that term, the peer's removal from the group, or closing hands the
// failure to Raft within an interval.
func TestRaftmetaPeerWaitRetriesWhileLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &flakyTransport{}
		w := newPeerWaitTransport(inner, slog.New(slog.DiscardHandler))
		req := &raft.AppendEntriesRequest{Term: 7}
		var resp raft.AppendEntriesResponse

		require.ErrorIs(t, w.AppendEntries("2", "node-2", req, &resp), errDown, "before Raft is built, nothing is retried")

		var term atomic.Uint64
		term.Store(7)
		var member atomic.Bool
		member.Store(true)
		w.setLeading(func(t uint64, peer raft.ServerID) bool { return t == term.Load() && peer == "2" && member.Load() })
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- w.AppendEntries("2", "node-2", req, &resp) }()
		time.Sleep(20 * time.Second)
		synctest.Wait()
		require.Empty(t, done, "still trying while the peer is away")
		require.InDelta(t, 20*time.Second/PeerRetryEvery, inner.calls.Load(), 3, "one try per PeerRetryEvery")
		inner.up.Store(true)
		require.NoError(t, <-done)
		require.LessOrEqual(t, time.Since(start), 20*time.Second+PeerRetryEvery, "answered within one interval of the peer's return")

		inner.up.Store(false)
		go func() { done <- w.AppendEntries("2", "node-2", req, &resp) }()
		time.Sleep(time.Second)
		term.Store(8) // a new term: this node no longer leads in 7
		require.ErrorIs(t, <-done, errDown)

		go func() { done <- w.AppendEntries("2", "node-2", &raft.AppendEntriesRequest{Term: 8}, &resp) }()
		time.Sleep(time.Second)
		member.Store(false) // removed from the group
		require.ErrorIs(t, <-done, errDown, "a peer no longer in the configuration is not waited for")

		member.Store(true)
		go func() { done <- w.AppendEntries("2", "node-2", &raft.AppendEntriesRequest{Term: 8}, &resp) }()
		time.Sleep(time.Second)
		w.stopWaiting()
		require.ErrorIs(t, <-done, errDown, "closing ends the wait")
	})
}

// refusingTransport answers every AppendEntries with a refusal of its
// own making until up is set, then with success.
type refusingTransport struct {
	raft.Transport
	up    atomic.Bool
	calls atomic.Int64
	// refusal fills a refusal's response.
	refusal func(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse)
}

func (f *refusingTransport) AppendEntries(_ raft.ServerID, _ raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	f.calls.Add(1)
	*resp = raft.AppendEntriesResponse{Term: args.Term, Success: f.up.Load()}
	if !resp.Success {
		f.refusal(args, resp)
	}
	return nil
}

// TestRaftmetaPeerWaitRetriesAFollowerThatCannotStore: a follower that
// refuses an append in the leader's term without a conflict — it could
// not write its log, its disk full — gets the same append again every
// PeerRetryEvery inside the call, and takes it within one interval of
// having room again; Raft never sees the refusal, so it neither pauses
// nor steps back an entry. A refusal that is about the logs (a gap or a
// conflict: NoRetryBackoff) or a newer term reaches Raft at once.
func TestRaftmetaPeerWaitRetriesAFollowerThatCannotStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := &refusingTransport{refusal: func(*raft.AppendEntriesRequest, *raft.AppendEntriesResponse) {}}
		w := newPeerWaitTransport(full, slog.New(slog.DiscardHandler))
		w.setLeading(func(term uint64, peer raft.ServerID) bool { return term == 7 && peer == "2" })
		req := &raft.AppendEntriesRequest{Term: 7, PrevLogEntry: 41, PrevLogTerm: 7, Entries: []*raft.Log{{Index: 42, Term: 7}}}
		var resp raft.AppendEntriesResponse
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- w.AppendEntries("2", "node-2", req, &resp) }()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Empty(t, done, "still trying while the follower cannot store")
		require.InDelta(t, 5*time.Second/PeerRetryEvery, full.calls.Load(), 3, "one try per PeerRetryEvery")
		full.up.Store(true)
		require.NoError(t, <-done)
		require.True(t, resp.Success, "the call returns the follower's success")
		require.LessOrEqual(t, time.Since(start), 5*time.Second+PeerRetryEvery, "taken within one interval of the follower having room")

		for name, refusal := range map[string]func(*raft.AppendEntriesRequest, *raft.AppendEntriesResponse){
			"conflict":   func(_ *raft.AppendEntriesRequest, r *raft.AppendEntriesResponse) { r.NoRetryBackoff = true },
			"newer term": func(a *raft.AppendEntriesRequest, r *raft.AppendEntriesResponse) { r.Term = a.Term + 1 },
			"a log past the previous entry": func(a *raft.AppendEntriesRequest, r *raft.AppendEntriesResponse) {
				r.LastLog = a.PrevLogEntry + 3 // a suffix it may have failed to replace
			},
		} {
			other := &refusingTransport{refusal: refusal}
			w := newPeerWaitTransport(other, slog.New(slog.DiscardHandler))
			w.setLeading(func(term uint64, peer raft.ServerID) bool { return term == 7 && peer == "2" })
			require.NoError(t, w.AppendEntries("2", "node-2", req, &resp), name)
			require.False(t, resp.Success, name)
			require.EqualValues(t, 1, other.calls.Load(), "%s: handed to Raft at once", name)
		}

		full.up.Store(false)
		go func() {
			done <- w.AppendEntries("2", "node-2", &raft.AppendEntriesRequest{Term: 8, Entries: req.Entries}, &resp)
		}()
		require.NoError(t, <-done, "not leading in the request's term: the refusal goes to Raft")
		require.False(t, resp.Success)
	})
}
