package cluster

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// Failover, recovery and catch-up wait for the batch in flight, but must
// not wait for the queue behind it: a steady stream of sends (clients
// retrying against a dead leader, say) would otherwise keep the writer slot
// busy for ever and the operation an operator is waiting on would never
// run. Here a catch-up arrives while one batch is in flight and another
// send is queued; once the batch in flight ends, the catch-up's copy is
// the next write any replica sees, and the queued send follows it.
func TestExclusiveOpsNotStarvedByQueuedSends(t *testing.T) {
	root := t.TempDir()
	c, err := Open(root)
	require.NoError(t, err)
	defer c.Close()
	events := make(chan string, 16)
	release := make(chan struct{})
	var first sync.Once
	f2, f3 := logtest.NewFaultFS(nil), logtest.NewFaultFS(nil)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	for id, f := range map[int]*logtest.FaultFS{2: f2, 3: f3} {
		b, err := OpenBrokerWithOptions(id, root, BrokerOptions{FS: f})
		require.NoError(t, err)
		require.NoError(t, c.RegisterBroker(b))
	}
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "k", 1)
	// Broker 3 misses one record and comes back lagging (still active).
	require.NoError(t, c.StopBroker(3))
	_, err = prod.Send(nil, []byte("missed by 3"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	b3, err := OpenBrokerWithOptions(3, root, BrokerOptions{FS: f3})
	require.NoError(t, err)
	require.NoError(t, c.RegisterBroker(b3))

	f2.SetFault(func(op logtest.Op, _ string) error {
		if op == logtest.OpWrite {
			events <- "broker 2"
			first.Do(func() { <-release })
		}
		return nil
	})
	f3.SetFault(func(op logtest.Op, _ string) error {
		if op == logtest.OpWrite {
			events <- "broker 3"
		}
		return nil
	})
	p, err := c.partition("orders", 0)
	require.NoError(t, err)

	var wg sync.WaitGroup
	var inFlightErr, queuedErr, catchUpErr error
	wg.Go(func() { _, inFlightErr = prod.Send(nil, []byte("in flight")) })
	require.Equal(t, "broker 2", <-events, "the first batch reaches broker 2 and blocks there")
	wg.Go(func() { _, queuedErr = prod.Send(nil, []byte("queued")) })
	waitFor(p, func() bool { return len(p.queue) == 1 })
	wg.Go(func() { _, catchUpErr = c.CatchUp("orders", 0, 3) })
	waitFor(p, func() bool { return p.exclusive == 1 })

	close(release)
	require.Equal(t, "broker 3", <-events, "catch-up copies to broker 3 before the queued batch is written")
	wg.Wait()
	require.ErrorIs(t, inFlightErr, ErrReplicationFailed, "broker 3 still lagged during the first batch")
	require.NoError(t, catchUpErr)
	require.NoError(t, queuedErr, "the queued send runs after catch-up, on a healthy partition")
	st := mustStatus(t, c)
	require.Equal(t, uint64(4), st.HighWatermark)
}

// waitFor spins until cond, checked under p.mu, holds.
func waitFor(p *partition, cond func() bool) {
	for {
		p.mu.Lock()
		ok := cond()
		p.mu.Unlock()
		if ok {
			return
		}
		runtime.Gosched()
	}
}
