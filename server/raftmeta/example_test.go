package raftmeta_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/pystream/pystream/server/netmux"
	"github.com/pystream/pystream/server/raftmeta"
)

// upper is a tiny state machine: it keeps the last command, upper-cased.
type upper struct{ last string }

func (u *upper) Apply(index uint64, cmd []byte) ([]byte, error) {
	u.last = strings.ToUpper(string(cmd))
	return []byte(u.last), nil
}
func (u *upper) Snapshot() ([]byte, error) { return []byte(u.last), nil }
func (u *upper) Restore(data []byte) error { u.last = string(data); return nil }

// Example starts a single-node cluster on a netmux port, waits for it to
// lead, and applies one command.
func Example() {
	dir, err := os.MkdirTemp("", "raftmeta-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	base, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	mux := netmux.New(base)
	raftL := mux.Listener(netmux.KindRaft)
	go mux.Serve()
	defer mux.Close()

	addr := base.Addr().String()
	node, err := raftmeta.Open(raftmeta.Config{
		ID:       1,
		Dir:      dir,
		Peers:    map[int]string{1: addr},
		Listener: raftL,
		Dial:     netmux.Dialer(netmux.KindRaft),
		FSM:      &upper{},
	})
	if err != nil {
		panic(err)
	}
	defer node.Close()

	select {
	case <-node.Leadership():
	case <-time.After(5 * time.Second):
		panic("no leader")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	result, err := node.Apply(ctx, []byte("create topic orders"))
	if err != nil {
		panic(err)
	}
	id, _ := node.Leader()
	fmt.Printf("leader: node %d\n", id)
	fmt.Printf("result: %s\n", result)
	// Output:
	// leader: node 1
	// result: CREATE TOPIC ORDERS
}
