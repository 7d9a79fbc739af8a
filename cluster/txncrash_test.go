package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// txnSummaries is every id's state in words, as a crash test compares
// them: nonces are drawn anew in every life, and left out.
func txnSummaries(t *testing.T, c *Cluster) []string {
	t.Helper()
	all, err := c.Transactions()
	require.NoError(t, err, "transactions.state is whole after a crash")
	out := make([]string, len(all))
	for i, x := range all {
		out[i] = fmt.Sprintf("%s: producer %d epoch %d %s version %d groups %v", x.ID, x.ProducerID, x.Epoch, x.State, x.Version, x.Groups)
	}
	return out
}

// TestCrashSimTransactions: a transactional id's state is durable in
// transactions.state before the coordinator answers. A process killed
// before any step of a life of five requests — and a power loss right
// after it — opens again with every id's state as the last acknowledged
// request left it, or as the request in flight would have.
func TestCrashSimTransactions(t *testing.T) {
	prepared := filepath.Join(t.TempDir(), "cluster")
	c, err := Open(prepared)
	require.NoError(t, err)
	_, _, err = c.InitTransactions(context.Background(), "a", time.Minute, -1, -1)
	require.NoError(t, err)
	require.NoError(t, c.Close())

	clock := func() time.Time { return metaT0 }
	current := func(c *Cluster, id string) Transaction {
		t, _, _ := c.store.Transaction(id)
		return t
	}
	ctx := context.Background()
	ops := []func(c *Cluster) error{
		func(c *Cluster) error {
			_, _, err := c.InitTransactions(ctx, "a", time.Minute, -1, -1)
			return err
		},
		func(c *Cluster) error {
			a := current(c, "a")
			return c.AddOffsetsToTxn(ctx, "a", a.ProducerID, a.Epoch, "billing")
		},
		func(c *Cluster) error {
			a := current(c, "a")
			return c.EndTxn(ctx, "a", a.ProducerID, a.Epoch, true)
		},
		func(c *Cluster) error {
			_, _, err := c.InitTransactions(ctx, "b", time.Minute, -1, -1)
			return err
		},
		func(c *Cluster) error {
			_, _, err := c.InitTransactions(ctx, "a", time.Minute, -1, -1)
			return err
		},
	}
	const endOp = 2 // ops[endOp] is the EndTxn
	var acked int
	var states [][]string // the states after each acknowledged request, in the whole life
	counting := false
	life := func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys, Broker: BrokerOptions{Now: clock}})
		if err != nil {
			return
		}
		defer cl.Close()
		if counting {
			states = append(states, txnSummaries(t, cl))
		}
		for _, op := range ops {
			if op(cl) != nil {
				return
			}
			acked++
			if counting {
				states = append(states, txnSummaries(t, cl))
			}
		}
	}
	counting = true
	steps := countSteps(t, prepared, life)
	counting = false
	require.Len(t, states, len(ops)+1, "a whole life answers every request")

	check := func(got []string, what string) {
		t.Helper()
		allowed := [][]string{states[acked]}
		if acked+1 < len(states) {
			allowed = append(allowed, states[acked+1])
		}
		if acked == endOp || acked == endOp+1 {
			// The end in flight may have made its decision durable
			// (PrepareCommit) and not its completion; and an end is
			// answered once its decision is durable, its completion
			// left to the next tick if it cannot be written.
			prepared := slices.Clone(states[endOp])
			prepared[0] = strings.Replace(prepared[0], "ongoing version 3", "prepare-commit version 4", 1)
			allowed = append(allowed, prepared)
		}
		require.True(t, slices.ContainsFunc(allowed, func(s []string) bool { return slices.Equal(s, got) }),
			"%s, %d request(s) acknowledged: %v, want one of %v", what, acked, got, allowed)
	}
	for n := 1; n <= steps+1; n++ {
		acked = 0
		root, crash := killDuring(t, prepared, n, life)

		lost := filepath.Join(crashInto(t, crash), "cluster")
		cl, err := OpenWithOptions(lost, Options{Broker: BrokerOptions{Now: clock}})
		require.NoError(t, err, "dies before step %d, then power loss", n)
		check(txnSummaries(t, cl), fmt.Sprintf("dies before step %d, then power loss", n))
		require.NoError(t, cl.Close())

		cl, err = OpenWithOptions(root, Options{FS: crash, Broker: BrokerOptions{Now: clock}})
		require.NoError(t, err, "dies before step %d", n)
		check(txnSummaries(t, cl), fmt.Sprintf("dies before step %d", n))
		require.NoError(t, cl.TickTransactions(ctx, metaT0), "dies before step %d: an end decided is finished", n)
		for _, x := range txnSummaries(t, cl) {
			require.NotContains(t, x, "prepare", "dies before step %d", n)
		}
		_, _, err = cl.InitTransactions(ctx, "a", time.Minute, -1, -1)
		require.NoError(t, err, "dies before step %d: the coordinator goes on", n)
		require.NoError(t, cl.Close())
	}
}
