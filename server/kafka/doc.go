// Package kafka speaks Kafka's wire protocol for PyStream: real Kafka
// clients (franz-go, sarama, librdkafka and kcat, kafka-python) produce to
// and consume from PyStream's topics with no PyStream code of their own.
//
// # The listener
//
// Every logical broker of the cluster has its own TCP listener: broker i
// on Config.Port+i-1. A listener is open while its broker is available
// and closed, with its connections, when the broker stops (Serve matches
// them every Config.ReconcileEvery), so a client sees a stopped broker as
// a Kafka client sees a dead one, and after failover finds the new leader
// through Metadata. A request for a partition that reaches a broker not
// leading it is NOT_LEADER_OR_FOLLOWER, which sends the client back to
// Metadata.
//
// A node of a cluster of processes (Config.NodeID) serves its own broker
// alone, on Config.Port, for as long as its process runs, and Metadata
// lists every broker at the address the cluster's replicated metadata
// registered for it (Directory): the nodes' real addresses. A request is
// never forwarded to another node; the client goes to the leader's node.
//
// # The frame
//
// A request is a 4-byte big-endian size, then the request header (API
// key, version, correlation id, client id, and on flexible versions the
// tagged fields of KIP-482), then the body. The size is checked against
// Config.MaxRequestBytes before anything is read (above it the connection
// is closed and a line logged); the frame's bytes are reserved from a
// server-wide budget (Config.MaxInflightBytes) before they are read; the
// wait for a request and the arrival of a started one are bounded by
// deadlines (Config.IdleTimeout, Config.FrameTimeout). Requests on one
// connection are answered one at a time, in order. Bodies are decoded and
// answers encoded by github.com/twmb/franz-go/pkg/kmsg: this package
// writes no codec of its own beyond the header and the record batch's
// CRC.
//
// # The handler table
//
// handlers.go holds one row per API key: the versions served and the
// functions of the key's file (produce.go, fetch.go, listoffsets.go,
// metadata.go, apiversions.go, joingroup.go, ...). ApiVersions advertises exactly the
// table. A version outside a row's range that kmsg still decodes is
// answered UNSUPPORTED_VERSION; an ApiVersions newer than v3 gets the v0
// answer with error 35 and the key list, as brokers give; an unknown key
// or a version the codec does not know closes the connection.
//
// # Records
//
// Each Kafka record is stored as one PyStream record (one offset each),
// its payload the envelope of package topic/envelope: key, headers,
// create time and value. A produce's record batches are validated whole
// (magic 2, lengths, CRC-32C, record count, offset deltas, decompression
// with gzip, snappy, lz4 or zstd) before anything is written: a bad batch
// is CORRUPT_MESSAGE and writes nothing. Every produce is answered after
// every active replica fsynced its records, acks=1 included; acks=0
// writes the same and answers nothing. A fetch returns records below the
// high watermark as uncompressed batches, one per run of records of one
// producer identity (batch.go's appendBatches).
//
// # Transactions
//
// Kafka's transactions (KIP-98) are the cluster's transaction
// coordinator's (backend.Transactions): InitProducerID with a
// transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// TxnOffsetCommit, DescribeTransactions and ListTransactions decode,
// check, call it and map its refusals (txn.go and one file per API). They
// are served where groups are coordinated: FindCoordinator answers a
// transactional id (key type 1) as it answers a group. A transactional
// batch is stored with its records' envelopes marked Transactional; a
// transaction's marker, written by the coordinator through the
// partition's leader, goes out of a fetch as Kafka's control batch, and a
// read_committed fetch stops at the last stable offset with the aborted
// transactions among what it sends (fetch.go).
//
// # Consumer groups
//
// JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups and
// ListGroups (one file each, groups.go for what they share) are Kafka's
// classic group protocol over package server/group's ClassicCoordinator,
// which holds the state machine; this package decodes, checks that the
// listener coordinates groups (coordinatorCode: always in the embedded
// cluster, whose brokers share one coordinator; only on the metadata
// leader's node in a cluster of processes), and maps the coordinator's
// errors to Kafka's codes. A JoinGroup or a follower's SyncGroup waits
// for the rebalance on its connection. OffsetCommit asks the coordinator
// whether the committer may commit before it stores anything. ListGroups
// is answered by one broker (listsGroups), so that a client asking every
// broker lists each group once. DeleteGroups and OffsetDelete delete a
// group's committed offsets, the whole group's or some partitions', never
// what a member could still commit to (deletegroups.go, offsetdelete.go).
//
// # Authentication and authorization
//
// With Config.Auth (the auth file) a connection authenticates with SASL
// before anything but ApiVersions (sasl.go), and every request is then
// authorized by server/auth's rule, the HTTP API's, per API and per topic
// (authz.go). With Config.TLS every listener speaks TLS only.
//
// # Deliberately left out
//
// WriteTxnMarkers and AddPartitionsToTxn v4+ (a broker's requests: the
// coordinator writes markers itself), fetch sessions (answered with
// session id 0), Kafka's new consumer group protocol (KIP-848), Kafka ACLs
// and re-authentication.
package kafka
