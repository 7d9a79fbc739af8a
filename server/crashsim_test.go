package server

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// TestCrashSimServerRestartAfterProcessCrash pins
// docs/design.md § Invariants, 1 for the data directory itself: a server
// started on a data directory whose parents do not exist yet
// (PYSTREAM_DATA_DIR=a/b/data) creates them, opens the cluster, creates a topic
// and produces, and is killed before each of its file-system operations in
// turn, leaving what it wrote in the page cache. A second server starts on the
// same directory and produces; then the power fails. The crashed copy must hold
// every record the second server served and acknowledged: every entry on the
// way to the data directory must be durable, not only those inside it.
func TestCrashSimServerRestartAfterProcessCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	const brokers = 3
	start := func(fsys durable.FS, dataDir string) (*Server, error) {
		cfg := Defaults()
		cfg.DataDir = dataDir
		cfg.Brokers = brokers
		return newServer(cfg, NewLogger(io.Discard, cfg), fsys)
	}
	firstLife := func(fsys durable.FS, dataDir string) {
		s, err := start(fsys, dataDir)
		if err != nil {
			return
		}
		defer func() { _ = s.Close() }() // the process is dead; its errors are moot
		if err := s.Cluster().CreateTopic("orders", 1, brokers); err != nil {
			return
		}
		_, _ = cluster.NewProducer(s.Cluster(), "orders").Send(nil, []byte("first"))
	}
	counter := logtest.NewFaultFS(nil)
	firstLife(counter, filepath.Join(t.TempDir(), "a", "b", "data"))
	steps := counter.Total()
	require.Greater(t, steps, 20)

	// The runs are independent (each in its own directories) and mostly
	// wait for fsyncs, so they run in parallel.
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprint("dies before step ", n), func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			dataDir := filepath.Join(base, "a", "b", "data")
			c, err := logtest.KillBefore(base, n, func(fsys durable.FS) { firstLife(fsys, dataDir) })
			require.NoError(t, err)

			s, err := start(c, dataDir)
			require.NoError(t, err, "the second server starts on what the first left")
			cl := s.Cluster()
			if _, ok := cl.Metadata().Topics["orders"]; !ok {
				require.NoError(t, cl.CreateTopic("orders", 1, brokers))
			}
			// The first server may have died between the leader's append
			// and its followers': catch them up, as an operator would.
			pm := cl.Metadata().Topics["orders"].Partitions[0]
			for _, id := range pm.Active {
				if id != pm.Leader {
					_, err := cl.CatchUp("orders", 0, id)
					require.NoError(t, err)
				}
			}
			res, err := cluster.NewProducer(cl, "orders").Send(nil, []byte("second"))
			require.NoError(t, err)
			acked := log.Record{Offset: res.Offset, Timestamp: res.Timestamp, Payload: []byte("second")}
			served, err := cl.ReadCommitted("orders", 0, 0, 10)
			require.NoError(t, err)
			require.Contains(t, served, acked)
			require.NoError(t, s.Close())

			dst := filepath.Join(t.TempDir(), "crashed")
			require.NoError(t, c.Crash(dst))
			crashed, err := cluster.Open(filepath.Join(dst, "a", "b", "data"))
			require.NoError(t, err)
			defer crashed.Close()
			for id := 1; id <= brokers; id++ {
				_, err := crashed.StartBroker(id)
				require.NoError(t, err)
			}
			require.Contains(t, crashed.Metadata().Topics, "orders", "the topic survived")
			after, err := crashed.ReadCommitted("orders", 0, 0, 10)
			require.NoError(t, err)
			require.Equal(t, served, after, "what the second server served and acknowledged survives the power loss")
		})
	}
}
