package raftmeta

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// This file keeps a peer that comes back from being down or cut off from
// waiting on Raft's retry pauses. hashicorp/raft's leader replicates to
// each follower in a loop of its own that, after every failed append,
// pauses before the next try — twice as long each time, up to about 10 s —
// and resets the pause only when an append succeeds. After an absence of
// a minute the returning follower would then wait up to 10 s for its
// first append, answering not_ready all the while, and its replicas would
// stay out of their active sets as long.
//
// The same pause follows a follower that answers but cannot store what it
// is sent — its disk is full, or failing — and Raft also steps back one
// entry for every such refusal, although nothing conflicts. A follower
// whose disk filled for a few seconds then waited seconds more for its
// next append once it had room again; with another node down, that was
// seconds without a metadata quorum, and without failovers.
//
// peerWaitTransport hides an unreachable peer from that loop, and a peer
// that cannot store: an append (or a heartbeat, which is an empty append)
// that fails, or that the peer refuses in the request's own term without
// a conflict in its log (storeRefused), is tried again in the call, every
// PeerRetryEvery, for as long as this node leads in the request's term
// and is open. The failure never reaches Raft's counter; the append
// returns as soon as the peer answers or stores it, a retry interval at
// most after it can again. The wait ends when this node stops
// leading in that term, or the peer leaves the configuration (Raft's loop
// for the peer is then ending anyway, and gets the error), or the node
// closes. Votes, snapshots and leadership
// transfers are not retried: they fail to Raft as they are.

// PeerRetryEvery is how often a leader tries an append to a peer that did
// not answer again.
const PeerRetryEvery = 100 * time.Millisecond

// leadingIn reports whether the node leads the Raft group in term, with
// peer among its configuration's servers.
type leadingIn func(term uint64, peer raft.ServerID) bool

// peerWaitTransport is a raft.Transport that retries a failed
// AppendEntries while its node leads in the request's term. It is safe
// for concurrent use.
type peerWaitTransport struct {
	raft.Transport
	log *slog.Logger
	// leading is set once Raft is built; until then nothing is retried.
	leading atomic.Pointer[leadingIn]
	// stop is closed before Raft shuts down, to end every wait.
	stop     chan struct{}
	stopOnce sync.Once

	// mu guards down.
	mu sync.Mutex
	// down holds when each peer was first found unreachable, or unable
	// to store, until it takes an append again.
	down map[raft.ServerID]time.Time
}

var (
	_ raft.Transport   = (*peerWaitTransport)(nil)
	_ raft.WithClose   = (*peerWaitTransport)(nil)
	_ raft.WithPreVote = (*peerWaitTransport)(nil)
)

// errNoPreVote is what RequestPreVote answers over a transport that does
// not carry pre-votes.
var errNoPreVote = errors.New("raftmeta: the transport does not carry pre-vote requests")

func newPeerWaitTransport(inner raft.Transport, log *slog.Logger) *peerWaitTransport {
	return &peerWaitTransport{Transport: inner, log: log, stop: make(chan struct{}), down: map[raft.ServerID]time.Time{}}
}

// setLeading gives the transport the test of the node's leadership.
func (t *peerWaitTransport) setLeading(f leadingIn) { t.leading.Store(&f) }

// stopWaiting ends every wait, now and later: the node is closing.
func (t *peerWaitTransport) stopWaiting() { t.stopOnce.Do(func() { close(t.stop) }) }

// AppendEntries sends an append (or a heartbeat) to a peer, trying again
// every PeerRetryEvery while it fails or the peer cannot store it, and
// this node leads in args.Term with the peer in its configuration.
func (t *peerWaitTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	for {
		err := t.Transport.AppendEntries(id, target, args, resp)
		refused := err == nil && storeRefused(args, resp)
		if err == nil && !refused {
			t.answered(id)
			return nil
		}
		if !t.retry(args.Term, id) {
			return err // nil for a refusal: Raft reads it in resp
		}
		if refused {
			t.absent(id, "raftmeta: a peer cannot store appends (its disk may be full): they are tried again until it can", "addr", target)
		} else {
			t.absent(id, "raftmeta: a peer does not answer: appends to it are tried again until it does", "addr", target, "err", err)
		}
		select {
		case <-t.stop:
			return err
		case <-time.After(PeerRetryEvery):
		}
	}
}

// retry reports whether a failed append of term to peer is tried again.
func (t *peerWaitTransport) retry(term uint64, peer raft.ServerID) bool {
	f := t.leading.Load()
	select {
	case <-t.stop:
		return false
	default:
	}
	return f != nil && (*f)(term, peer)
}

// storeRefused reports whether resp is a follower's refusal of args
// that says nothing about their logs: the follower is in args's term,
// found no gap or conflict (those refusals set NoRetryBackoff), and holds
// nothing past args's previous entry, so what failed is its writing of the
// new entries. The same request is worth sending again as it is, once the
// follower's disk can take it. A follower whose log reaches past the
// previous entry may have failed midway through replacing a conflicting
// suffix — Raft then leaves its idea of its own log end stale, and the
// same request would fail for ever — so that refusal goes to Raft, which
// steps back.
func storeRefused(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) bool {
	return !resp.Success && !resp.NoRetryBackoff && resp.Term == args.Term && resp.LastLog <= args.PrevLogEntry
}

// absent notes that peer id did not take an append, and logs msg with
// args once per absence.
func (t *peerWaitTransport) absent(id raft.ServerID, msg string, args ...any) {
	t.mu.Lock()
	_, known := t.down[id]
	if !known {
		t.down[id] = time.Now()
	}
	t.mu.Unlock()
	if !known {
		t.log.Warn(msg, append([]any{"peer", id, "every", PeerRetryEvery}, args...)...)
	}
}

// answered notes that peer id took an append, and logs its return after
// an absence.
func (t *peerWaitTransport) answered(id raft.ServerID) {
	t.mu.Lock()
	since, was := t.down[id]
	delete(t.down, id)
	t.mu.Unlock()
	if was {
		t.log.Info("raftmeta: a peer answers again", "peer", id, "after", time.Since(since).Round(time.Millisecond))
	}
}

func (t *peerWaitTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if p, ok := t.Transport.(raft.WithPreVote); ok {
		return p.RequestPreVote(id, target, args, resp)
	}
	return errNoPreVote
}

// Close ends every wait and closes the transport it wraps, when that can
// be closed.
func (t *peerWaitTransport) Close() error {
	t.stopWaiting()
	if c, ok := t.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// CloseStreams closes the connections the wrapped network transport keeps
// open, when it keeps any (closeTransport).
func (t *peerWaitTransport) CloseStreams() {
	if s, ok := t.Transport.(interface{ CloseStreams() }); ok {
		s.CloseStreams()
	}
}
