package netmux

// KindRaft is the first byte of a Raft connection. No HTTP method, the
// HTTP/2 preface or a TLS record starts with it, so HTTP needs no byte of
// its own: it is every connection that is not of a registered kind.
const KindRaft byte = 'R'
