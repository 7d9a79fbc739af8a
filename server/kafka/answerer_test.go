package kafka

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// answererConn is a connection over net.Pipe whose answerer is under
// test; the bytes in flight start at zero, so that what the answerer
// releases is what it was given.
func answererConn(t *testing.T, s *Server) *conn {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	s.inflight = &budget{}
	return &conn{s: s, nc: a, ctx: t.Context(), log: s.cfg.Logger}
}

// heldBegin is a begin whose answer waits for hold, then fails with err
// when err is not nil, and appends nothing.
func heldBegin(hold chan struct{}, err error) func() func([]byte) ([]byte, error) {
	return func() func([]byte) ([]byte, error) {
		return func(dst []byte) ([]byte, error) {
			<-hold
			return dst, err
		}
	}
}

// TestAnswererBoundsBegun: with maxPipelined produce requests unanswered,
// the next one is not begun — its records not queued — until one of them
// is answered.
func TestAnswererBoundsBegun(t *testing.T) {
	s, err := New(nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		c := answererConn(t, s)
		a := c.answer()
		stop := sync.OnceFunc(a.close)
		hold := make(chan struct{})
		release := sync.OnceFunc(func() { close(hold) })
		pusherDone := make(chan struct{})
		defer func() { // a failed test's held answers and pusher end too
			release()
			<-pusherDone
			stop()
		}()
		for range maxPipelined {
			if !a.push(1, heldBegin(hold, nil)) {
				t.Fatal("push refused on a good connection")
			}
		}
		var begun atomic.Bool
		pushed := make(chan bool, 1)
		go func() {
			defer close(pusherDone)
			pushed <- a.push(1, func() func([]byte) ([]byte, error) {
				begun.Store(true)
				return heldBegin(hold, nil)()
			})
		}()
		synctest.Wait()
		if begun.Load() {
			t.Fatalf("a request begun with %d unanswered", maxPipelined)
		}
		release()
		if !<-pushed || !begun.Load() {
			t.Fatal("the request was not begun once the ones before it were answered")
		}
		if !a.drain() {
			t.Fatal("drain reports a good connection broken")
		}
		stop()
		if got := c.s.inflight.left; got != maxPipelined+1 {
			t.Fatalf("%d bytes given back, want %d", got, maxPipelined+1)
		}
	})
}

// TestAnswererBrokenWhilePushing: an answer that fails while the reader
// waits to push the next request breaks the connection: that request is
// not begun (push false, its bytes left to the caller), the ones queued
// behind the failed one are waited for and their bytes given back, and
// drain reports the connection broken.
func TestAnswererBrokenWhilePushing(t *testing.T) {
	s, err := New(nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		c := answererConn(t, s)
		a := c.answer()
		stop := sync.OnceFunc(a.close)
		hold := make(chan struct{})
		release := sync.OnceFunc(func() { close(hold) })
		pusherDone := make(chan struct{})
		defer func() { // a failed test's held answers and pusher end too
			release()
			<-pusherDone
			stop()
		}()
		a.push(1, heldBegin(hold, errors.New("bad request")))
		for range maxPipelined - 1 {
			a.push(1, heldBegin(hold, nil))
		}
		var begun atomic.Bool
		pushed := make(chan bool, 1)
		go func() {
			defer close(pusherDone)
			pushed <- a.push(1, func() func([]byte) ([]byte, error) {
				begun.Store(true)
				return heldBegin(hold, nil)()
			})
		}()
		synctest.Wait()
		release()
		if <-pushed || begun.Load() {
			t.Fatal("a request was begun on a broken connection")
		}
		if a.drain() {
			t.Fatal("drain reports a broken connection good")
		}
		stop()
		if got := c.s.inflight.left; got != maxPipelined {
			t.Fatalf("%d bytes given back, want %d", got, maxPipelined)
		}
	})
}
