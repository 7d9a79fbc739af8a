package bounds

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// failingListener fails its first fails accepts with err, then accepts a
// pipe.
type failingListener struct {
	fails int
	err   error
	calls []time.Time
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.calls = append(l.calls, time.Now())
	if len(l.calls) <= l.fails {
		return nil, l.err
	}
	c, _ := net.Pipe()
	return c, nil
}
func (l *failingListener) Close() error { return nil }
func (l *failingListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9092}
}

// emfile is accept's error when the process has no descriptor left.
var emfile = &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}

// TestAcceptBacksOffAndResumes pins the accept loop's episode: the waits
// double from 5 ms to 1 s (net/http's), one line starts the episode and
// one ends it with the count, and every failure is counted.
func TestAcceptBacksOffAndResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		reg := prometheus.NewRegistry()
		failures, err := AcceptErrors(reg, "kafka")
		require.NoError(t, err)
		base := &failingListener{fails: 12, err: emfile}
		l := Guard(base, "kafka", slog.New(slog.NewTextHandler(&logs, nil)), failures)
		c, err := l.Accept()
		require.NoError(t, err)
		c.Close()
		require.Len(t, base.calls, 13)
		var waits []time.Duration
		for i := 1; i < len(base.calls); i++ {
			waits = append(waits, base.calls[i].Sub(base.calls[i-1]))
		}
		ms := time.Millisecond
		require.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second, time.Second, time.Second}, waits)
		require.Equal(t, 12.0, testutil.ToFloat64(failures))
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		require.Len(t, lines, 2, "one line starts the episode, one ends it")
		require.Contains(t, lines[0], "accept failing")
		require.Contains(t, lines[0], "listener=kafka")
		require.Contains(t, lines[1], "accepting connections again")
		require.Contains(t, lines[1], "failed_accepts=12")

		// A second registration shares the family.
		again, err := AcceptErrors(reg, "http")
		require.NoError(t, err)
		again.Inc()
		require.Equal(t, 2, testutil.CollectAndCount(reg, acceptErrorsName))
	})
}

// TestAcceptCloseEndsBackoff: a listener closed while it waits returns
// net.ErrClosed at once.
func TestAcceptCloseEndsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &failingListener{fails: 1 << 30, err: emfile}
		l := Guard(base, "internal", nil, nil)
		done := make(chan error, 1)
		go func() {
			_, err := l.Accept()
			done <- err
		}()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		require.NoError(t, l.Close())
		err := <-done
		require.ErrorIs(t, err, net.ErrClosed)
	})
}

// TestAcceptOtherErrorEnds: an error that is not temporary is returned.
func TestAcceptOtherErrorEnds(t *testing.T) {
	boom := errors.New("boom")
	l := Guard(&failingListener{fails: 1, err: boom}, "http", nil, nil)
	_, err := l.Accept()
	require.ErrorIs(t, err, boom)
	require.True(t, Temporary(emfile))
	require.True(t, Temporary(os.NewSyscallError("accept4", syscall.ENFILE)))
	require.False(t, Temporary(net.ErrClosed))
}

func TestInflightBudget(t *testing.T) {
	f := NewInflight(10)
	require.True(t, f.Acquire(6))
	require.False(t, f.Acquire(5), "past the limit")
	require.False(t, f.Acquire(-1))
	require.True(t, f.Acquire(4))
	f.Release(6)
	require.Equal(t, int64(4), f.Reserved())
	require.Equal(t, int64(10), f.Limit())
}
