package replication

import "context"

// The authenticated peer. With mutual TLS on the internal port
// (server/clustertls) every connection's peer is a node id, proved by its
// certificate; the node's http.Server puts it in each request's context
// (WithPeer, from its ConnContext). A request that acts for a node — a
// replicate or cut naming its leader, a heartbeat naming its broker, a
// registration naming its node — is refused with CodeForbidden unless
// that node is the peer: a member cannot pass for another. On a port
// with mutual TLS every request must carry its peer: a connection marked
// so (RequirePeer, from the same ConnContext) whose request has none is
// refused with CodeForbidden too, never let through. Without TLS there
// is no peer and nothing is checked. Authenticated is the one function
// that decides.

// CodeForbidden: the authenticated peer asked to act for another node.
const CodeForbidden = "forbidden"

type (
	peerKey     struct{}
	requiredKey struct{}
)

// RequirePeer returns ctx marked as a request of a port with mutual TLS:
// one without an authenticated peer (WithPeer) is refused.
func RequirePeer(ctx context.Context) context.Context {
	return context.WithValue(ctx, requiredKey{}, true)
}

// WithPeer returns ctx carrying the authenticated peer's node id.
func WithPeer(ctx context.Context, id int) context.Context {
	return context.WithValue(ctx, peerKey{}, id)
}

// PeerOf returns the authenticated peer's node id, if ctx carries one.
func PeerOf(ctx context.Context) (int, bool) {
	id, ok := ctx.Value(peerKey{}).(int)
	return id, ok
}

// Authenticated decides whether a request may be served at all: it
// returns the authenticated peer and true when ctx carries one; 0 and
// false without TLS (no peer, nothing to check); and a CodeForbidden
// refusal when the port requires a peer (RequirePeer) and ctx has none.
func Authenticated(ctx context.Context) (int, bool, error) {
	if peer, ok := PeerOf(ctx); ok {
		return peer, true, nil
	}
	if required, _ := ctx.Value(requiredKey{}).(bool); required {
		return 0, false, Errorf(CodeForbidden, "the port requires mutual TLS and the request has no authenticated peer")
	}
	return 0, false, nil
}

// ActsFor refuses, with CodeForbidden, a request that acts for node when
// ctx's authenticated peer is another node, or when it has none on a port
// that requires one (Authenticated); what says what it tried.
func ActsFor(ctx context.Context, node int, what string) error {
	peer, ok, err := Authenticated(ctx)
	if err != nil {
		return err
	}
	if ok && peer != node {
		return Errorf(CodeForbidden, "node %d cannot %s for node %d: a node acts only for itself", peer, what, node)
	}
	return nil
}
