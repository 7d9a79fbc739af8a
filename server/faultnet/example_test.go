package faultnet_test

import (
	"fmt"
	"net"

	"github.com/pystream/pystream/server/faultnet"
)

// A Link between a node and its peer: held, it forwards nothing and closes
// nothing; cut, it closes; open, it forwards again.
func ExampleLink() {
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peer.Close()
	link, err := faultnet.Listen(peer.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer link.Close()
	// A node reaches the peer through link.Addr(), e.g. with
	// PYSTREAM_INTERNAL_ROUTES=<peer address>=<link address>.
	for _, s := range []faultnet.State{faultnet.Held, faultnet.Cut, faultnet.Open} {
		link.Set(s)
		fmt.Println(link.State())
	}
	// Output:
	// held
	// cut
	// open
}
