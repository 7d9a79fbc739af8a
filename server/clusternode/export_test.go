package clusternode

import "time"

// ControllerFailoverAfter is the failover delay node n's controller acts
// after now — zero while it changes no metadata — as followHealing
// (healing.go) last set it from the replicated switch. For the tests of
// package clusternode_test, which run nodes on clustertest.
func ControllerFailoverAfter(n *Node) time.Duration { return n.ctrl.FailoverAfter() }
