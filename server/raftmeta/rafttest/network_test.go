package rafttest

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// TestRafttestRoutes: every node up reaches every other, except across a
// cut pair or from and to an isolated node; no node routes to itself.
func TestRafttestRoutes(t *testing.T) {
	all := func(pairs ...[2]int) map[route]bool {
		out := make(map[route]bool)
		for _, p := range pairs {
			out[route{p[0], p[1]}] = true
			out[route{p[1], p[0]}] = true
		}
		return out
	}
	cases := []struct {
		name     string
		up       []int
		cuts     map[pair]bool
		isolated map[int]bool
		want     map[route]bool
	}{
		{"none up", nil, nil, nil, all()},
		{"one up", []int{1}, nil, nil, all()},
		{"three up", []int{1, 2, 3}, nil, nil, all([2]int{1, 2}, [2]int{1, 3}, [2]int{2, 3})},
		{"a cut pair", []int{1, 2, 3}, map[pair]bool{pairOf(2, 1): true}, nil, all([2]int{1, 3}, [2]int{2, 3})},
		{"an isolated node", []int{1, 2, 3}, nil, map[int]bool{2: true}, all([2]int{1, 3})},
		{"a cut with a node down", []int{1, 3}, map[pair]bool{pairOf(1, 2): true}, nil, all([2]int{1, 3})},
		{"isolated and down", []int{1, 3}, nil, map[int]bool{2: true}, all([2]int{1, 3})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, routes(tc.up, tc.cuts, tc.isolated))
		})
	}
	require.Equal(t, pair{1, 2}, pairOf(2, 1))
	require.Equal(t, "node-7:7001", Addr(7))
}

// TestRafttestCutIsolateHeal: a message over a link Cut or Isolate broke
// fails at once, and arrives again after Heal. Time is synctest's.
func TestRafttestCutIsolateHeal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork()
		ts := startNodes(t, n, 1, 2, 3)
		require.NoError(t, vote(ts[1], 2))

		n.Cut(1, 2)
		start := time.Now()
		require.Error(t, vote(ts[1], 2))
		require.Error(t, vote(ts[2], 1))
		require.Zero(t, time.Since(start), "a broken link fails at once")
		require.NoError(t, vote(ts[1], 3))
		require.NoError(t, vote(ts[2], 3))

		n.Isolate(3)
		require.Error(t, vote(ts[1], 3))
		require.Error(t, vote(ts[3], 2))
		require.False(t, n.Reachable(2, 3))

		n.Heal()
		for _, a := range []int{1, 2, 3} {
			for _, b := range []int{1, 2, 3} {
				if a != b {
					require.NoError(t, vote(ts[a], b), "%d to %d", a, b)
					require.True(t, n.Reachable(a, b))
				}
			}
		}
	})
}

// TestRafttestCloseAndRestart: a closed transport leaves the network, so
// messages to its node fail at once; a fresh transport for the same id
// has the same address and is reached again, partitions included.
func TestRafttestCloseAndRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork()
		ts := startNodes(t, n, 1, 2, 3)
		n.Cut(1, 3)
		require.NoError(t, ts[2].Close())
		require.NoError(t, ts[2].Close(), "Close may be called twice")
		start := time.Now()
		require.Error(t, vote(ts[1], 2))
		require.Zero(t, time.Since(start))
		require.False(t, n.Reachable(1, 2))

		again := startNodes(t, n, 2)[2]
		require.Equal(t, raft.ServerAddress("node-2:7001"), again.LocalAddr())
		require.NoError(t, vote(ts[1], 2))
		require.NoError(t, vote(again, 3))
		require.Error(t, vote(ts[1], 3), "the cut outlives the restart")
	})
}

// TestRafttestReplaceOpenTransport: a fresh transport for a node whose
// transport is still open cuts the old one off for good.
func TestRafttestReplaceOpenTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork()
		ts := startNodes(t, n, 1, 2)
		old := ts[2]
		fresh := startNodes(t, n, 2)[2]
		require.Error(t, vote(old, 1))
		require.NoError(t, vote(fresh, 1))
		require.NoError(t, vote(ts[1], 2))
		require.NoError(t, old.Close())
		require.True(t, n.Reachable(1, 2), "closing the old transport leaves the fresh one on")
	})
}

// TestRafttestPipelineClosedByCut: an AppendEntries pipeline over a link
// that is cut is shut down, so Raft falls back to single messages, which
// fail; its goroutine ends (synctest.Test checks).
func TestRafttestPipelineClosedByCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork()
		ts := startNodes(t, n, 1, 2)
		p, err := ts[1].AppendEntriesPipeline("2", raft.ServerAddress(Addr(2)))
		require.NoError(t, err)
		f, err := p.AppendEntries(&raft.AppendEntriesRequest{Term: 1}, &raft.AppendEntriesResponse{})
		require.NoError(t, err)
		require.NoError(t, f.Error())
		require.Equal(t, uint64(1), f.Response().Term)

		n.Cut(1, 2)
		_, err = p.AppendEntries(&raft.AppendEntriesRequest{Term: 1}, &raft.AppendEntriesResponse{})
		require.ErrorIs(t, err, raft.ErrPipelineShutdown)
		_, err = ts[1].AppendEntriesPipeline("2", raft.ServerAddress(Addr(2)))
		require.Error(t, err)
	})
}

// TestRafttestUnansweredTimeout: a reachable node that takes no message
// fails its sender after RPCTimeout of the bubble's clock, not at once.
func TestRafttestUnansweredTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork()
		a, b := n.Transport(1), n.Transport(2)
		defer a.(raft.WithClose).Close()
		defer b.(raft.WithClose).Close()
		start := time.Now()
		require.Error(t, vote(a, 2))
		require.Equal(t, RPCTimeout, time.Since(start))
	})
}

// closer is a transport the tests close.
type closer interface {
	raft.Transport
	raft.WithClose
}

// startNodes gives each of ids a transport on n and a goroutine that
// answers every message it receives, as a Raft would (the answer's Term
// is the request's), until the test ends. It returns the transports by
// id; each is closed at the end of the test.
func startNodes(t *testing.T, n *Network, ids ...int) map[int]closer {
	out := make(map[int]closer)
	for _, id := range ids {
		tr := n.Transport(id).(closer)
		out[id] = tr
		done := make(chan struct{})
		go answer(tr, done)
		t.Cleanup(func() {
			close(done)
			tr.Close()
		})
	}
	return out
}

// answer answers each message tr receives until done is closed.
func answer(tr raft.Transport, done <-chan struct{}) {
	for {
		select {
		case rpc := <-tr.Consumer():
			switch req := rpc.Command.(type) {
			case *raft.RequestVoteRequest:
				rpc.Respond(&raft.RequestVoteResponse{Term: req.Term, Granted: true}, nil)
			case *raft.AppendEntriesRequest:
				rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, Success: true}, nil)
			default:
				rpc.Respond(nil, nil)
			}
		case <-done:
			return
		}
	}
}

// vote sends a RequestVote from tr to node to and returns the error.
func vote(tr raft.Transport, to int) error {
	var resp raft.RequestVoteResponse
	return tr.RequestVote(raft.ServerID("x"), raft.ServerAddress(Addr(to)), &raft.RequestVoteRequest{Term: 1}, &resp)
}
