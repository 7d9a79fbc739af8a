package clustertls_test

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pystream/pystream/server/clustertls"
)

// A CA and two nodes' certificates written to a directory, then loaded by
// the nodes, which complete a mutual TLS handshake: each end learns the
// other's node id.
func Example() {
	dir, err := os.MkdirTemp("", "certs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if _, err := clustertls.WriteDir(dir, 2, time.Now()); err != nil {
		panic(err)
	}
	load := func(id int) *clustertls.Identity {
		ident, err := clustertls.Load(filepath.Join(dir, clustertls.NodeCertFile(id)),
			filepath.Join(dir, clustertls.NodeKeyFile(id)), filepath.Join(dir, clustertls.FileCACert))
		if err != nil {
			panic(err)
		}
		return ident
	}
	node1, node2 := load(1), load(2)

	a, b := net.Pipe()
	member := func(peer int) error { // node 2's accepting end: nodes 1 and 2 are the cluster
		if peer != 1 && peer != 2 {
			return clustertls.ErrNotMember
		}
		return nil
	}
	server := tls.Server(b, node2.Config(member))
	done := make(chan int)
	go func() {
		_ = server.Handshake()
		id, _ := clustertls.PeerID(server.ConnectionState())
		done <- id
	}()
	client := tls.Client(a, node1.Config(clustertls.WantNode(2))) // node 1 dials node 2
	if err := client.Handshake(); err != nil {
		panic(err)
	}
	reached, _ := clustertls.PeerID(client.ConnectionState())
	fmt.Println("node 1 reached node", reached)
	fmt.Println("node 2 accepted node", <-done)
	// Output:
	// node 1 reached node 2
	// node 2 accepted node 1
}
