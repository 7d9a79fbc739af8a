package clusternode_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/server/clustertls"
)

// mtlsOptions runs clustertest's nodes with mutual TLS on their internal
// ports, Raft included (over the Mux on the in-memory network, not the
// in-memory Raft transport): each node presents its certificate from one
// CA, made inside the bubble so that its validity follows the fake clock.
func mtlsOptions(t *testing.T) clustertest.Options {
	t.Helper()
	ca, err := clustertls.NewCA(time.Now())
	require.NoError(t, err)
	return clustertest.Options{Configure: func(cfg *clusternode.Config) {
		ident, err := ca.Identity(cfg.ID, time.Now())
		require.NoError(t, err)
		cfg.TLS, cfg.RaftTransport = ident, nil
	}}
}

// TestMTLSClusterElectsReplicatesFailsOver: three nodes whose every
// internal connection is mutual TLS elect a controller, replicate a write
// to every replica, and fail a stopped leader's partition over to a
// follower with every acknowledged record kept
// (docs/security.md § The internal port).
func TestMTLSClusterElectsReplicatesFailsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "ledger"
		c := start(t, 3, mtlsOptions(t))
		require.NoError(t, c.Via(c.Controller()).CreateTopic(name, 1, 3))
		var acked []log.Record
		for _, via := range c.IDs() {
			recs, _ := send(t, c, via, name, 0, fmt.Sprintf("through %d", via))
			acked = append(acked, recs...)
		}
		awaitEvery(c, "every replica settled", c.IDs(), name, 0, settled)
		for _, id := range c.IDs() {
			sameRecords(t, acked, replicaRecords(t, c, id, name, 0), "node %d's replica", id)
		}

		victim := statusVia(t, c, 1, name, 0).Leader
		survivors := others(c, victim)
		c.Stop(victim)
		awaitEvery(c, "a new leader", survivors, name, 0, func(st cluster.PartitionStatus) error {
			if st.Leader == victim || slices.Contains(st.Active, victim) {
				return fmt.Errorf("leader %d active %v", st.Leader, st.Active)
			}
			return nil
		})
		recs, _ := send(t, c, survivors[0], name, 0, "after")
		acked = append(acked, recs...)
		sameRecords(t, acked, readAll(t, c, survivors[1], name, 0))
	})
}
