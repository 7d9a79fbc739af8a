// Package controller is the loop that keeps a PyStream cluster serving
// without a person at the console: it looks at every broker and partition,
// asks cluster.Plan what the rules call for
// (docs/design.md § The controller's rules), and carries the actions out
// through the cluster's own operations — catch-up, shrinking the active set, failover, recovery, and
// moving leadership back to the preferred replica. The decisions live in
// cluster.Plan, a pure function; this package adds only what a pure
// function cannot have: a clock, memory between passes, and a goroutine.
//
// A Controller runs one pass (Step) at start, then one every
// Config.Interval. A pass reads every partition's status, eight at a
// time, so that partitions whose leader answers nothing (paused, cut off)
// cost it one status's wait, not one each; it carries out different
// partitions' actions eight at a time as well (one partition's in the
// plan's order), so that a broker that led many partitions is replaced
// in about one failover's time. The first pass opens every replica log (reading a
// partition's status opens its logs) and catches up every follower a crash
// left behind; Ready reports 200-worthy readiness only after it. Between
// passes the controller remembers when it first saw each broker
// unavailable, so that PYSTREAM_FAILOVER_AFTER counts from there, which
// followers a catch-up found diverged, and when it last decided about each
// replica: it acts on a replica only on a report that reached it after that
// decision, or after the replica's metadata last changed
// (cluster.PlanReplica.Stale). In one process every replica is read as it
// is now; in cluster mode a follower is known by its last heartbeat, and
// one from before the decision tells of the replica as it was.
//
// A follower that is found diverged again soon after its recovery
// (within FlapWindow) is not flipped out of and into the active set on
// every pass: its next recovery waits RecoveryBackoff — max(FailoverAfter,
// 1 s), doubling with each flap up to MaxRecoveryBackoff — and the hold is
// journaled once per episode as the recovery's refusal
// (*RecoveryHeldError), saying why.
//
// With Config.FailoverAfter zero (PYSTREAM_FAILOVER_AFTER=0) the
// controller changes no metadata: failover, recovery, shrinking the active
// set and leader moves are left to the operator, as in phase 5. It still
// catches up followers a crash left behind, which changes no metadata.
// SetFailoverAfter switches between the two at run time (the server's
// PUT /api/controller), for as long as the process lives; in cluster mode
// the node calls it whenever the switch replicated in the cluster's
// metadata changes.
//
// The package imports cluster and Prometheus, never the HTTP server: the
// server builds a Controller and asks it whether the cluster is ready.
package controller
