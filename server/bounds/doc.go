// Package bounds holds what every port of a PyStream server shares to stay
// bounded whatever its clients send: the accept loop that survives running
// out of file descriptors (Listener), the rate-limited log of refused
// connections (Refusals), the budget of request bytes held in
// memory at once (Inflight), the records one produce request may carry
// (DefaultMaxRequestRecords), and the partitions one topic creation may
// ask for (MaxTopicPartitions, MaxCreatePartitions), the same over HTTP and
// the Kafka protocol.
//
// It lies beneath the protocol packages (httpapi, kafka, replication) and
// imports none of them, so that each port answers a bound with one rule
// rather than a copy of it. docs/security.md § Bounds lists every bound of
// the server, its setting and its default.
//
// # Accepting without descriptors
//
// An accept that fails because the process (EMFILE) or the system (ENFILE)
// has no file descriptor left is not the end of a listener: connections
// close, descriptors come free, and accepting resumes. Listener retries
// such failures with the backoff net/http uses — 5 ms, doubling up to 1 s —
// logs one line when an episode starts and one when it ends (with how many
// accepts failed), and counts every failure in
// pystream_accept_errors_total{listener=...}. Any other accept error ends
// the loop as before.
//
// # Refused connections
//
// A port that refuses a connection (a failed TLS handshake, a peer that
// is no member, a failed SASL authentication) says so in its log, but a
// stranger that connects in a loop must not fill the log: Refusals logs
// the first refusal of a remote IP for a reason, then at most one summary
// line per RefusalLogInterval with how many more there were, remembering
// at most MaxRefusalSources IPs and reasons. Every refusal is counted in
// pystream_refused_connections_total{port=...,reason=...}.
//
// Everything here is safe for concurrent use.
package bounds
