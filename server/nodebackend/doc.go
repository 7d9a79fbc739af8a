// Package nodebackend is a node of a cluster of processes
// (server/clusternode) as the backend its protocols serve
// (server/backend): Data, TopicAdmin, Operator and Membership over one
// *clusternode.Node, so that the HTTP API and the Kafka listener answer
// cluster mode exactly as they answer the embedded cluster, without asking
// which mode they serve.
//
// Its data, topic administration and operations are the node's
// cluster.Cluster's, the same as one process's (backend.Local): every
// operation is offered in both modes, and the node asked sends it to the
// process that runs it. It owns two translations, and nothing else:
//
//   - the node's own errors into backend's terms (errors.go): a broker's
//     stop or start, which in cluster mode is its process's
//     (cluster.ErrBrokerIsProcess), wraps backend.ErrNotInThisMode; an
//     election under way backend.ErrNoController; a forwarded request
//     refused by its peer a *backend.PeerError; and so on. Every error
//     keeps its text;
//   - the Kafka addresses its nodes registered (kafka.Directory's
//     KafkaAddrs).
package nodebackend
