package clusternode_test

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/clusternode"
)

// A cluster of one node: it elects itself leader of the metadata group,
// registers as broker 1, and serves a topic on its own. A real cluster
// lists every node in Peers, each process with its own ID and data
// directory; the tests run several in one process on clustertest's
// in-memory networks instead.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "clusternode-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	node, err := clusternode.Open(clusternode.Config{
		ID:            1,
		Peers:         map[int]string{1: ln.Addr().String()},
		DataDir:       dir,
		FailoverAfter: time.Second,
		Listener:      ln,
	})
	if err != nil {
		panic(err)
	}
	defer node.Close()

	// Ready: the metadata group has a leader, and this node is registered
	// as a broker through it. Wait for each change of the metadata, and
	// for the controller's first pass.
	for deadline := time.Now().Add(30 * time.Second); ; {
		changed := node.Cluster().MetadataChanged()
		if ok, _ := node.Ready(); ok {
			break
		}
		if time.Now().After(deadline) {
			panic("the node did not become ready")
		}
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
		}
	}
	c := node.Cluster()
	if err := c.CreateTopic("orders", 1, 1); err != nil {
		panic(err)
	}
	res, err := cluster.NewProducer(c, "orders").Send([]byte("customer-7"), []byte("order #1"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("sent to orders/%d at offset %d, held by brokers %v\n", res.Partition, res.Offset, res.Brokers)
	recs, err := c.ReadCommitted("orders", 0, 0, 10)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("read offset %d: %s\n", r.Offset, r.Payload)
	}
	// Output:
	// sent to orders/0 at offset 0, held by brokers [1]
	// read offset 0: order #1
}
