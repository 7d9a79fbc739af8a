// Package replication is the wire between the broker processes of a
// cluster-mode PyStream cluster (docs/phase-7-processes.md): how a
// partition leader sends its records to its followers, how a follower
// reads a leader's log to recover, and how a broker reaches the Raft
// leader (proposals, heartbeats) or a partition's leader (forwarded
// produce requests, controller catch-ups).
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
//	POST /v1/replicate?topic=&partition=&epoch=&leader=&hw=   frames -> {"end":N}
//	GET  /v1/records?topic=&partition=&from=&max_bytes=&committed=  -> frames, X-Pystream-Log-Start, X-Pystream-Log-End, X-Pystream-High-Watermark
//	GET  /v1/offset-for-time?topic=&partition=&ts=              -> {"offset":N,"found":bool}
//	POST /v1/produce?topic=&partition=                          frames (payloads) -> {"records":[{offset,timestamp}]}
//	POST /v1/propose                                            a cluster.MetaCommand -> a cluster.MetaResult
//	POST /v1/heartbeat                                          a Heartbeat
//	POST /v1/catch-up?topic=&partition=&follower=               -> {"end":N}
//	POST /v1/membership                                         {"op":"add"|"remove","id":N,"addr":...}
//
// Every refusal is an *Error with a Code a caller acts on (CodeStaleEpoch
// fences a deposed leader, CodeBehind asks the leader for older records
// first, CodeNotLeader names where to go, CodeOffsetOutOfRange carries the
// range a committed read below the log start can use) and a message in PyStream's
// terms.
//
// Every replicate request carries the leader's epoch; a replica refuses
// one from an older epoch, so a leader that was replaced while it was
// stopped or cut off cannot have a write acknowledged.
package replication
