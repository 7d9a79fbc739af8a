package clusternode

import (
	"bytes"
	"context"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/replication"
)

// FuzzCheckProposer checks the decoder of a forwarded proposal's
// registration (security.go, checkProposer) on arbitrary commands from an
// authenticated peer (peer > 0; none, as without TLS, otherwise): it never
// panics and leaves the command as it was; without a peer it refuses
// nothing; with one it refuses, with a typed CodeForbidden refusal,
// exactly the commands that Raft's state machine would read as the
// registration of another node (cluster.ParseMetaCommand), and lets the
// rest through to the state machine, which refuses what does not parse.
// Seeds: testdata/fuzz/FuzzCheckProposer.
func FuzzCheckProposer(f *testing.F) {
	f.Fuzz(func(t *testing.T, peer int, cmd []byte) {
		orig := bytes.Clone(cmd)
		ctx := context.Background()
		if peer > 0 {
			ctx = replication.WithPeer(replication.RequirePeer(ctx), peer)
		}
		err := checkProposer(ctx, cmd)
		if !bytes.Equal(cmd, orig) {
			t.Fatalf("checkProposer changed the command")
		}
		if peer <= 0 {
			if err != nil {
				t.Fatalf("no authenticated peer, refused: %v", err)
			}
			return
		}
		c, perr := cluster.ParseMetaCommand(cmd)
		other := perr == nil && c.Op == cluster.OpRegisterNode && c.Node != nil && c.Node.ID != peer
		if other != (err != nil) {
			t.Fatalf("node %d proposing %q: refused %v, want refused %v", peer, cmd, err, other)
		}
		if err != nil && replication.CodeOf(err) != replication.CodeForbidden {
			t.Fatalf("refused with %v, not %s", err, replication.CodeForbidden)
		}
	})
}
