package replication

import "context"

// The authenticated peer. With mutual TLS on the internal port
// (server/clustertls) every connection's peer is a node id, proved by its
// certificate; the node's http.Server puts it in each request's context
// (WithPeer, from its ConnContext). A request that acts for a node — a
// replicate or cut naming its leader, a heartbeat naming its broker, a
// registration naming its node — is refused with CodeForbidden unless
// that node is the peer: a member cannot pass for another. Without TLS
// there is no peer and nothing is checked.

// CodeForbidden: the authenticated peer asked to act for another node.
const CodeForbidden = "forbidden"

type peerKey struct{}

// WithPeer returns ctx carrying the authenticated peer's node id.
func WithPeer(ctx context.Context, id int) context.Context {
	return context.WithValue(ctx, peerKey{}, id)
}

// PeerOf returns the authenticated peer's node id, if ctx carries one.
func PeerOf(ctx context.Context) (int, bool) {
	id, ok := ctx.Value(peerKey{}).(int)
	return id, ok
}

// ActsFor refuses, with CodeForbidden, a request that acts for node when
// ctx's authenticated peer is another node; what says what it tried.
func ActsFor(ctx context.Context, node int, what string) error {
	if peer, ok := PeerOf(ctx); ok && peer != node {
		return Errorf(CodeForbidden, "node %d cannot %s for node %d: a node acts only for itself", peer, what, node)
	}
	return nil
}
