// Package replication is the wire between the broker processes of a
// cluster-mode PyStream cluster (docs/phase-7-processes.md). The
// replication core in package cluster — the leader's write path, the
// follower's side, catch-up, recovery, leader moves, failover — is written
// once over a replica transport (cluster.Transport); in one process its
// requests are function calls, and between processes they travel here,
// as the same cluster types: how a partition leader sends its records to
// its followers, how a broker reads or compares another's replica, how a
// leader truncates a follower that holds records never acknowledged, and
// how a broker reaches a partition's leader (forwarded produce requests
// and reads by time, operations that must run there) or the Raft leader
// (proposals, heartbeats, membership). A heartbeat's answer is the
// controller's Observation of every broker, from which every node tells
// the same (docs/phase-7-processes.md § One truth from every node).
//
// # Transport
//
// HTTP/2 without TLS (h2c) from the standard library, on each node's one
// internal address (server/netmux hands it every connection that is not
// Raft's). HTTP/2 keeps one persistent connection per pair of nodes and
// multiplexes every request on it, so a leader's writes to one follower
// for many partitions travel side by side, each with its own flow
// control, and a slow partition does not block the others. That is what
// gRPC would give, without generated code or a second codec: records
// travel in phase 1's own frame format (log.AppendFrame, read back by
// log.DecodeFrame, the one parser of it), and the small control messages
// as JSON.
//
// # Requests
//
//	POST /v1/replicate?topic=&partition=&epoch=&leader=&hw=&log_start=[&log_start_only=1][&reset=1][&reopen=1]
//	     frames (consecutive offsets; none is a probe) -> a cluster.ReplicateResponse {"end":N,"log_start":N,...}
//	GET  /v1/records?topic=&partition=&from=&max_bytes=[&max_records=][&committed=1]
//	     -> frames, X-Pystream-Log-Start, X-Pystream-Log-End, X-Pystream-High-Watermark
//	GET  /v1/digests?topic=&partition=&from=&to=&chunk=
//	     -> {"digests":["<64 hex digits>",...]}, one cluster.Digest per chunk of [from, to), at most 4096
//	POST /v1/cut          a cluster.CutRequest -> a cluster.CutResponse
//	POST /v1/produce?topic=&partition=
//	     frames (payloads) -> {"records":[{"offset":N,"timestamp":N}],"brokers":[...],"leader":N}
//	GET  /v1/offset-for-time?topic=&partition=&ts=   (nanoseconds) -> {"offset":N,"found":bool}
//	POST /v1/operate      a cluster.OperateRequest (catch-up, recover, move-leader, failover, ...) -> {"result":...}
//	POST /v1/propose      a cluster.MetaCommand -> a cluster.MetaResult
//	POST /v1/heartbeat    a Heartbeat -> an Observation
//	POST /v1/membership   {"op":"add"|"remove","id":N,"addr":...}
//
// Numbers in a query are whole decimal numbers; a request that is
// malformed in any way (a missing or bad parameter, a torn frame, records
// out of order, a body over MaxBodyBytes, JSON that does not decode) is
// refused with CodeBadRequest and never reaches the node's Peer.
//
// # Refusals
//
// Every refusal travels as an *Error: a Code a caller acts on (CodeStaleEpoch
// fences a deposed leader, CodeBehind asks the leader for older records
// first, CodeNotLeader names where to go, CodeOffsetOutOfRange carries the
// range a committed read below the log start can use), answered with an
// HTTP status that says the same to anything that reads only statuses,
// and the refusing node's message in PyStream's terms. PyStream's own
// errors keep their identity across the network (EncodeError,
// DecodeError): a typed error (a *cluster.NotLeaderError, a
// *cluster.StaleEpochError, a *cluster.EpochAheadError, a
// *cluster.BehindError, a *cluster.ReplicationError, a
// *client.OffsetOutOfRangeError, ...) travels with its fields and comes
// back as the same type, and a sentinel (cluster.ErrUnknownTopic,
// topic.ErrInvalidName, ...) travels by name and comes back as an error
// that wraps it with the refusing node's text. So errors.Is and errors.As
// answer on the calling node as they would on the refusing one, and a
// node that forwards a request reports a refusal as the node that refused
// it would. Any other error travels as CodeUnavailable with its text. A
// node that cannot be reached at all is an error wrapping
// cluster.ErrBrokerUnavailable, which the replication core treats as a
// stopped broker.
//
// Every replicate and cut request carries the leader's epoch; a replica
// refuses one from an older epoch, so a leader that was replaced while it
// was stopped or cut off cannot have a write acknowledged, nor cut a
// follower's log.
package replication
