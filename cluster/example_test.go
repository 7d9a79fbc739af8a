package cluster_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/pystream/pystream/cluster"
)

// Three brokers, one topic with three partitions and replication factor 2:
// the placement of docs/design.md § Placement, a replicated write, and a
// consumer reading it.
func Example() {
	root, _ := os.MkdirTemp("", "cluster-example")
	defer os.RemoveAll(root)

	c, _ := cluster.Open(root)
	defer c.Close()
	for id := 1; id <= 3; id++ {
		b, _ := cluster.OpenBroker(id, root)
		_ = c.RegisterBroker(b)
	}
	if err := c.CreateTopic("orders", 3, 2); err != nil {
		fmt.Println(err)
		return
	}
	for p := 0; p < 3; p++ {
		st, _ := c.Status("orders", p)
		fmt.Printf("partition %d -> leader broker %d, followers %v\n", p, st.Leader, st.Followers)
	}

	res, _ := cluster.NewProducer(c, "orders").Send([]byte("user-123"), []byte("payload"))
	fmt.Printf("sent to partition %d at offset %d via leader %d, held by %v\n", res.Partition, res.Offset, res.LeaderBrokerID, res.Brokers)

	cons, _ := c.NewConsumer("analytics", "orders", res.Partition)
	recs, _ := cons.Fetch(10)
	fmt.Printf("consumed %q\n", recs[0].Payload)
	// Output:
	// partition 0 -> leader broker 1, followers [2]
	// partition 1 -> leader broker 2, followers [3]
	// partition 2 -> leader broker 3, followers [1]
	// sent to partition 2 at offset 0 via leader 3, held by [1 3]
	// consumed "payload"
}

// The phase-5 story: the leader fails, a follower is promoted explicitly,
// and the old leader comes back as a follower after recovery drops the
// record that was never acknowledged.
func ExampleCluster_Failover() {
	root, _ := os.MkdirTemp("", "cluster-failover")
	defer os.RemoveAll(root)
	c, _ := cluster.Open(root)
	defer c.Close()
	for id := 1; id <= 3; id++ {
		_, _ = c.StartBroker(id)
	}
	_ = c.CreateTopic("orders", 1, 3)
	prod := cluster.NewProducer(c, "orders")
	for _, p := range []string{"r0", "r1", "r2"} {
		_, _ = prod.Send(nil, []byte(p))
	}

	// Both followers are down: offset 3 reaches the leader only.
	_ = c.StopBroker(2)
	_ = c.StopBroker(3)
	_, err := prod.Send(nil, []byte("never acknowledged"))
	var re *cluster.ReplicationError
	if errors.As(err, &re) {
		fmt.Printf("not acknowledged: brokers %v missed offset %d\n", re.BrokerIDs, re.Offset)
	}
	_, _ = c.StartBroker(2)
	_, _ = c.StartBroker(3)

	// Now the leader fails too. Nothing happens until we fail over.
	_ = c.StopBroker(1)
	fo, _ := c.Failover("orders", 0)
	fmt.Printf("leader %d -> %d, next offset %d\n", fo.OldLeaderBrokerID, fo.NewLeaderBrokerID, fo.LogEndOffset)
	res, _ := prod.Send(nil, []byte("r3"))
	fmt.Printf("next write reuses offset %d\n", res.Offset)

	_, _ = c.StartBroker(1)
	rr, _ := c.RecoverReplica("orders", 0, 1)
	fmt.Printf("recovered broker %d: dropped %d (offsets %d..%d), copied %d\n", rr.BrokerID, rr.Dropped, rr.DroppedFrom, rr.DroppedTo-1, rr.Copied)
	st, _ := c.Status("orders", 0)
	fmt.Printf("leader %d, active %v\n", st.Leader, st.Active)
	// Output:
	// not acknowledged: brokers [2 3] missed offset 3
	// leader 1 -> 2, next offset 3
	// next write reuses offset 3
	// recovered broker 1: dropped 1 (offsets 3..3), copied 1
	// leader 2, active [1 2 3]
}
