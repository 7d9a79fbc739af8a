package clusternode_test

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/topic"
)

// A cluster of one node: it elects itself, registers as broker 1, and
// serves a topic on its own. A real cluster lists every node in Peers,
// each process with its own ID and data directory.
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

	// Wait until the node has registered itself as a broker.
	for deadline := time.Now().Add(30 * time.Second); len(node.Nodes()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			panic("the node did not register")
		}
	}
	if err := node.CreateTopic("orders", 1, 1); err != nil {
		panic(err)
	}
	res, err := node.Send("orders", nil, []topic.Message{{Key: []byte("customer-7"), Payload: []byte("order #1")}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("sent to orders/%d at offset %d, held by brokers %v\n", res[0].Partition, res[0].Offset, res[0].Brokers)
	recs, err := node.ReadCommitted("orders", 0, 0, 10)
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
