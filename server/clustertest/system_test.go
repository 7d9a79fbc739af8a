package clustertest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/controller"
)

// This file is the harness of the behaviour suite (behaviour_test.go):
// one PyStream cluster of three brokers, in either of its two bodies, as
// the tests see it. The tests are written once and run against both.

// failoverAfter is every system's failover delay.
const failoverAfter = time.Second

// system is a cluster of brokers 1, 2 and 3 as a behaviour test drives
// it.
type system interface {
	// Via is the cluster.Cluster to act through: in cluster mode that of
	// broker id's process (another running one when it does not run); in
	// one process the one Cluster, whatever id.
	Via(id int) *cluster.Cluster
	// Down stops broker id: a stopped logical broker, or a stopped
	// process. Up starts it again on its data.
	Down(id int)
	Up(id int)
	// RestartAll stops every broker and starts them again on their data:
	// the process of one, or every process of cluster mode.
	RestartAll()
	// BrokerRoot is the directory that holds broker id's directory.
	BrokerRoot(id int) string
	// Retention runs one retention pass wherever partitions are led.
	Retention() ([]cluster.RetentionResult, error)
	// Await waits for cond, looking again at every change of the
	// metadata and every tick of fake time.
	Await(what string, cond func() (bool, string))
}

// eachMode runs fn against one process of logical brokers and against
// three processes of cluster mode, each in a synctest bubble of its own.
func eachMode(t *testing.T, fn func(t *testing.T, s system)) {
	t.Run("embedded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { fn(t, openEmbedded(t)) })
	})
	t.Run("cluster", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { fn(t, openProcesses(t)) })
	})
}

// embedded is one process of three logical brokers with its controller
// loop, as the server runs it.
type embedded struct {
	t    *testing.T
	root string
	c    *cluster.Cluster
	stop func()
}

func openEmbedded(t *testing.T) system {
	e := &embedded{t: t, root: t.TempDir()}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *embedded) open() {
	c, err := cluster.Open(e.root)
	require.NoError(e.t, err)
	for id := 1; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(e.t, err)
	}
	ctl, err := controller.New(c, controller.Config{FailoverAfter: failoverAfter})
	require.NoError(e.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ctl.Run(ctx) }()
	e.c, e.stop = c, func() { cancel(); <-done }
}

func (e *embedded) close() {
	if e.c == nil {
		return
	}
	e.stop()
	require.NoError(e.t, e.c.Close())
	e.c = nil
}

func (e *embedded) Via(int) *cluster.Cluster { return e.c }

func (e *embedded) Down(id int) { require.NoError(e.t, e.c.StopBroker(id)) }

func (e *embedded) Up(id int) {
	_, err := e.c.StartBroker(id)
	require.NoError(e.t, err)
}

func (e *embedded) RestartAll() {
	e.close()
	e.open()
}

func (e *embedded) BrokerRoot(int) string { return e.root }

func (e *embedded) Retention() ([]cluster.RetentionResult, error) { return e.c.EnforceRetention() }

func (e *embedded) Await(what string, cond func() (bool, string)) {
	e.t.Helper()
	await(e.t, what, func() []<-chan struct{} { return []<-chan struct{}{e.c.MetadataChanged()} }, cond)
}

// processes is three processes of cluster mode (clustertest.Cluster).
type processes struct {
	t *testing.T
	c *clustertest.Cluster
}

func openProcesses(t *testing.T) system {
	return &processes{t: t, c: clustertest.Start(t, 3, clustertest.Options{FailoverAfter: failoverAfter})}
}

func (p *processes) Via(id int) *cluster.Cluster {
	for _, r := range p.c.Running() {
		if r == id {
			return p.c.Via(id)
		}
	}
	return p.c.Via(p.c.Running()[0])
}

func (p *processes) Down(id int) { p.c.Stop(id) }

func (p *processes) Up(id int) { p.c.Restart(id) }

func (p *processes) RestartAll() {
	p.c.Close()
	for _, id := range p.c.IDs() {
		p.c.Restart(id)
	}
	p.c.AwaitReady()
}

func (p *processes) BrokerRoot(id int) string { return p.c.Dir(id) }

func (p *processes) Retention() ([]cluster.RetentionResult, error) {
	var all []cluster.RetentionResult
	for _, id := range p.c.Running() {
		res, err := p.c.Via(id).EnforceRetention()
		if err != nil {
			return all, err
		}
		all = append(all, res...)
	}
	return all, nil
}

func (p *processes) Await(what string, cond func() (bool, string)) {
	p.t.Helper()
	p.c.Await(what, cond)
}

// await waits for cond, looking again whenever one of chans() is closed
// and at least every 10 ms of fake time, for at most a minute of it.
func await(t *testing.T, what string, chans func() []<-chan struct{}, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(clustertest.AwaitTimeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %s", what, clustertest.AwaitTimeout, why)
		}
		clustertest.AwaitAny(chans(), 10*time.Millisecond)
	}
}

// status is a partition's status through every broker: they must agree
// on its leadership; the one of broker 1's handle (or the first running
// one) is returned.
func status(t *testing.T, s system, topicName string, partition int) cluster.PartitionStatus {
	t.Helper()
	st, err := s.Via(1).Status(topicName, partition)
	require.NoError(t, err)
	return st
}

// settled reports whether every handle reports the partition settled:
// the leadership wanted, every assigned replica available, active, at the
// same log end with lag 0, and the high watermark there.
func settled(s system, topicName string, partition int, want func(st cluster.PartitionStatus) error) (bool, string) {
	for id := 1; id <= 3; id++ {
		st, err := s.Via(id).Status(topicName, partition)
		if err != nil {
			return false, fmt.Sprintf("through %d: %v", id, err)
		}
		if want != nil {
			if err := want(st); err != nil {
				return false, fmt.Sprintf("through %d: %v", id, err)
			}
		}
		if len(st.Active) != len(st.Assigned) {
			return false, fmt.Sprintf("through %d: active %v of %v", id, st.Active, st.Assigned)
		}
		for _, r := range st.Replicas {
			if !r.Available || r.LogEnd == nil || r.Lag == nil || *r.Lag != 0 || *r.LogEnd != st.HighWatermark {
				return false, fmt.Sprintf("through %d: replica %+v, high watermark %d", id, r, st.HighWatermark)
			}
		}
	}
	return true, ""
}

// appendBehind appends records straight into broker id's replica log of
// topic/partition 0 while its broker is down: what a leader that appended
// but never replicated leaves behind.
func appendBehind(t *testing.T, s system, id int, topicName string, payloads ...string) {
	t.Helper()
	dir := cluster.ReplicaDir(s.BrokerRoot(id), id, topicName, 0)
	l, err := segment.Open(dir, segment.Options{MustExist: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	var recs []log.Record
	for i, p := range payloads {
		recs = append(recs, log.Record{Offset: l.NextOffset() + uint64(i), Timestamp: time.Now().UnixNano(), Payload: []byte(p)})
	}
	require.NoError(t, l.AppendRecords(recs))
}

// quarantineFiles lists the quarantine files beside broker id's replica.
func quarantineFiles(t *testing.T, s system, id int, topicName string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cluster.ReplicaDir(s.BrokerRoot(id), id, topicName, 0), "quarantine-*.bin"))
	require.NoError(t, err)
	return files
}
