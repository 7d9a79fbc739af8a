package netmux_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/pystream/pystream/server/netmux"
)

// Example shares one loopback port between a Raft-kind listener and an
// h2c HTTP server.
func Example() {
	base, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	m := netmux.New(base)
	raftL := m.Listener(netmux.KindRaft)
	httpL := m.Default()
	go m.Serve()
	defer m.Close()

	// The Raft side: read one line.
	go func() {
		c, err := raftL.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		io.ReadFull(c, buf)
		fmt.Printf("raft got %q\n", buf)
		c.Write([]byte("ok"))
	}()

	// The HTTP side: h2c.
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &protocols, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	})}
	go srv.Serve(httpL)
	defer srv.Close()

	c, err := netmux.Dial(context.Background(), m.Addr().String(), netmux.KindRaft)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.Write([]byte("hello"))
	reply := make([]byte, 2)
	io.ReadFull(c, reply)

	tr := &http.Transport{Protocols: &protocols}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + m.Addr().String() + "/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("http got %s\n", body)
	// Output:
	// raft got "hello"
	// http got HTTP/2.0
}
