// Package netmux shares one internal TCP port between two protocols: Raft
// and the HTTP/2 (h2c) replication API of a PyStream cluster node.
//
// # The first byte
//
// A node has one internal address (for example 127.0.0.1:7001). Every
// connection to it is told apart by its first byte:
//
//   - A dialer that wants a protocol of its own writes one kind byte before
//     anything else (Dial does this; Dialer binds it to one kind). KindRaft ('R') is the byte for Raft.
//     The Mux hands such a connection to the listener registered for that
//     kind (Mux.Listener) with the byte already consumed, so the protocol
//     sees exactly the bytes its peer wrote after it.
//   - Every other connection goes to the default listener (Mux.Default)
//     with its first byte replayed, untouched. An HTTP/2 client starts with
//     the preface "PRI * HTTP/2.0", an HTTP/1 client with a method name,
//     a TLS client with 0x16: none starts with 'R', so an http.Server
//     serving the default listener needs to know nothing of the Mux.
//
// # TLS
//
// With Config.TLS the Mux speaks TLS on every connection, beneath the kind
// byte: it runs the server handshake first, and the first byte is the
// first byte of the decrypted stream. A dialer dials, completes its TLS
// handshake, then writes the kind byte (WriteKind). A connection whose
// handshake fails — a plain one, a certificate the configuration's
// VerifyConnection refuses — is closed before any listener sees it, and
// Config.Refused is told once, with the peer's address and why.
// TLSConn reaches the *tls.Conn of an accepted connection through the
// Mux's own wrapping, so that a protocol can read the peer's certificate
// (an http.Server's ConnContext, for one). The default listener's
// connections are never *tls.Conn values themselves: an http.Server takes
// them for plain ones and serves h2c over the TLS stream.
//
// # Lifetime
//
// Register every listener (Listener, Default) before Serve, so that no
// connection of a kind is taken for the default one because its listener
// did not exist yet. Serve accepts until the base listener is closed; it
// returns nil after Close and the accept error otherwise. A connection
// whose kind has no listener, or whose listener is closed, is closed.
//
// Closing a sub-listener stops only that kind, until Listener is called for
// the kind again and returns a new one; closing the Mux closes the
// base listener, every sub-listener and every connection whose first byte
// has not arrived yet. Accept on a closed listener returns net.ErrClosed,
// so both http.Server.Serve and Raft's network transport stop cleanly.
//
// # Silent connections
//
// The first byte is read in a goroutine of its own per connection, so a
// slow client never delays the accepts of others. A connection that sends
// nothing within Config.FirstByteTimeout (DefaultFirstByteTimeout, 10 s)
// is closed: an idle or bogus connection cannot pin a goroutine forever.
// With TLS the timeout covers the handshake and the first byte; it covers
// nothing after the first byte; after it the protocol sets its
// own deadlines. Nothing bounds how many connections may wait for their
// first byte at once; the port is internal, reached by cluster peers only.
//
// # Concurrency
//
// A Mux and its listeners are safe for concurrent use.
package netmux
