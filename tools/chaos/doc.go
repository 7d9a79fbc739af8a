// Package chaos is PyStream's chaos suite: it starts a real cluster (three
// pystream-server processes on loopback, or the embedded server), runs a
// bounded workload against it while faults drawn from a seeded random
// source strike one node at a time, heals, and then checks the recorded
// history against the guarantees the cluster makes (docs/chaos.md).
//
// The package is split by job:
//
//   - history.go: what a run records (every write attempt and its outcome,
//     every read, every group commit, every fault), JSON-serializable so
//     that the evidence of a run can be kept and checked again;
//   - checker.go: Check, a pure function over a History that lists every
//     violation (lost or moved acknowledgement, phantom value, gap,
//     divergent node, rewritten read, backward commit, commit above the
//     high watermark) and counts the duplicates left by retried writes;
//   - table.go: the table per fault kind (faults, acknowledged, unknown,
//     violations, failover p50/max);
//   - nodes.go, disk.go: the processes, the internal-route proxies
//     (server/faultnet) and the tmpfs a node's data directory sits on;
//   - workload.go: HTTP and Kafka producers, readers and a group consumer;
//   - faults.go: the fault loop (kill, pause, cut, hold, disk full,
//     restart), with failover times read from the controller's journal;
//   - run.go: Run, which ties them together and keeps the evidence.
//
// A run is replayed by its seed: the seed chooses every fault's kind, its
// victim and how long it lasts. The timing of the processes is not
// replayed, so a replay strikes the same way, not at the same records.
//
// Nothing here is a library for PyStream's users; it is a test program.
package chaos
