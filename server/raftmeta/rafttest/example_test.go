package rafttest_test

import (
	"fmt"

	"github.com/pystream/pystream/server/raftmeta/rafttest"
)

// Example shows which nodes reach which as a network is partitioned,
// restarted and healed. In a test, each transport is given to a node as
// raftmeta's Config.Transport.
func Example() {
	net := rafttest.NewNetwork()
	for id := 1; id <= 3; id++ {
		net.Transport(id)
	}
	show := func(when string) {
		fmt.Printf("%-22s 1-2 %-5v 1-3 %-5v 2-3 %v\n", when,
			net.Reachable(1, 2), net.Reachable(1, 3), net.Reachable(2, 3))
	}
	show("connected:")
	net.Cut(1, 2)
	show("cut 1 from 2:")
	net.Isolate(3)
	show("and isolate 3:")
	net.Transport(3) // node 3 restarts, still cut off
	show("3 restarted:")
	net.Heal()
	show("healed:")
	fmt.Println(net.Peers(1, 2)[2])
	// Output:
	// connected:             1-2 true  1-3 true  2-3 true
	// cut 1 from 2:          1-2 false 1-3 true  2-3 true
	// and isolate 3:         1-2 false 1-3 false 2-3 false
	// 3 restarted:           1-2 false 1-3 false 2-3 false
	// healed:                1-2 true  1-3 true  2-3 true
	// node-2:7001
}
