// Package nodebackend is a node of a cluster of processes
// (server/clusternode) as the backend its protocols serve
// (server/backend): Data, TopicAdmin, Operator and Membership over one
// *clusternode.Node, so that the HTTP API and the Kafka listener answer
// cluster mode exactly as they answer the embedded cluster, without asking
// which mode they serve.
//
// It owns two translations, and nothing else:
//
//   - the node's own errors into backend's terms (errors.go): a refused
//     operation of the embedded cluster (clusternode.ErrNotInClusterMode)
//     wraps backend.ErrNotInThisMode, an election under way
//     backend.ErrNoController, a forwarded request refused by its peer a
//     *backend.PeerError, and so on; every error keeps its text;
//   - the shapes that differ: the node's NodeView as backend's, its
//     search by time and retention pass under the backend's names, the
//     journal's end read from its entries (the replicated journal has no
//     end counter of its own), and the Kafka addresses its nodes
//     registered (kafka.Directory's KafkaAddrs).
//
// Operations cluster mode refuses stay refused, with the same errors:
// stopping and starting a broker by hand, failover, catch-up, recovery,
// leader moves and topic deletion.
package nodebackend
