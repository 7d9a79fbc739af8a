package faultnet

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoServer answers every line with itself until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func newLink(t *testing.T) *Link {
	t.Helper()
	l, err := Listen(echoServer(t))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// roundTrip writes line and reads it back within d: ok false when nothing
// came back in time (the connection is left with a passed deadline).
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string, d time.Duration) (string, error) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(d)))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// An open link forwards; a held one forwards nothing and closes nothing,
// then delivers what it held once open again.
func TestHeldLinkHoldsThenDelivers(t *testing.T) {
	l := newLink(t)
	c, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	got, err := roundTrip(t, c, r, "one", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "one\n", got)

	l.Set(Held)
	require.Equal(t, Held, l.State())
	_, err = roundTrip(t, c, r, "two", 200*time.Millisecond)
	require.True(t, isTimeout(err), "a held link answers and closes nothing: only the deadline ends the read (%v)", err)

	l.Set(Open)
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	got, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "two\n", got, "what was held arrives once open")
}

// A held link accepts new connections and holds them too: a dial
// succeeds, its first read waits.
func TestHeldLinkHoldsNewConnections(t *testing.T) {
	l := newLink(t)
	l.Set(Held)
	c, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	_, err = roundTrip(t, c, r, "x", 200*time.Millisecond)
	require.True(t, isTimeout(err), "%v", err)
	l.Set(Open)
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	got, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "x\n", got)
}

// A cut closes what the link carries at once and refuses new
// connections; healed, it carries new ones.
func TestCutLinkClosesAndRefuses(t *testing.T) {
	l := newLink(t)
	c, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	_, err = roundTrip(t, c, r, "one", 5*time.Second)
	require.NoError(t, err)

	l.Set(Cut)
	_, err = roundTrip(t, c, r, "two", 5*time.Second)
	require.Error(t, err)
	require.False(t, isTimeout(err), "a cut is seen at once, not at the deadline: %v", err)

	c2, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err, "the listener still accepts")
	defer c2.Close()
	_, err = roundTrip(t, c2, bufio.NewReader(c2), "x", 5*time.Second)
	require.Error(t, err, "and closes at once")
	require.False(t, isTimeout(err), "%v", err)

	l.Set(Open)
	c3, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer c3.Close()
	got, err := roundTrip(t, c3, bufio.NewReader(c3), "three", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "three\n", got)
}

// A held link that is cut closes what it held.
func TestHeldThenCut(t *testing.T) {
	l := newLink(t)
	c, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer c.Close()
	l.Set(Held)
	_, err = io.WriteString(c, "held\n")
	require.NoError(t, err)
	l.Set(Cut)
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = bufio.NewReader(c).ReadString('\n')
	require.Error(t, err)
	require.False(t, isTimeout(err), "%v", err)
}

// Close ends every connection and goroutine, held ones included.
func TestCloseEndsHeldConnections(t *testing.T) {
	l, err := Listen(echoServer(t))
	require.NoError(t, err)
	c, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer c.Close()
	l.Set(Held)
	_, err = io.WriteString(c, "held\n")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a held connection")
	}
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
