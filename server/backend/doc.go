// Package backend is what PyStream's protocols serve, beneath all of them:
// the HTTP API (server/httpapi) and the Kafka listener (server/kafka) both
// take its interfaces, and neither knows which mode of the cluster stands
// behind them.
//
// # Two modes, chosen once
//
// The embedded cluster (phases 4 and 5: one process, logical brokers in
// directories) and a cluster of processes (phase 7: one broker per
// process, its metadata replicated through Raft) offer the same
// operations to a client. The wiring (package server) opens one of them
// and hands its implementation to every protocol: Local, here, for the
// embedded cluster; server/nodebackend for a node of a cluster of
// processes. What differs between the modes is decided by which
// implementation is passed, never asked by a handler:
//
//   - Data: brokers and topics, records (send, read, bounds, search by
//     time), the consumers' committed Offsets and Kafka's Transactions
//     (the coordinator's requests, the read_committed read). Every mode
//     offers all of it.
//   - TopicAdmin: create, configure, delete topics.
//   - Operator: the journal, stopping and starting brokers, phase 5's
//     repairs (failover, catch-up, recovery, leader moves), retention, and
//     the Controller loop (wake it, readiness, automatic healing). A mode
//     that does not offer an operation answers an error wrapping
//     ErrNotInThisMode, whose text says what to do instead.
//   - Membership: the voters of a cluster of processes' metadata group.
//     The embedded cluster has none, and passes none.
//   - GroupHome: which node coordinates consumer groups, the one rule
//     both protocols follow.
//
// # Errors in PyStream's terms
//
// The cluster's errors (cluster.ErrUnknownTopic and the rest) pass
// through both modes unchanged. A cluster of processes has a few more of
// its own — no controller during an election, a leadership that moved, a
// peer that refused a forwarded request — which its implementation marks
// with this package's sentinels (Mark, PeerError), keeping their text.
// The protocols map the sentinels to their answers (an HTTP status, a
// Kafka error code) without importing the implementation.
//
// # The partition advanced event
//
// A Hub is the one event of a partition's high watermark rising. The
// wiring feeds it from the cluster's callback (cluster.Options.Advanced,
// clusternode.Config.Advanced), which fires for every write whatever
// protocol carried it; a Kafka fetch waiting for records and the
// explorer's events stream watch it. Advanced never blocks: it runs under
// the partition's lock.
package backend
