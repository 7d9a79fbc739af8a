package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/httpapi"
)

// healingEntries are the journal's healing entries as node r serves them.
func healingEntriesOf(t *testing.T, r *running) []apiclient.JournalEntry {
	t.Helper()
	j, err := r.client.Journal(t.Context(), 0, 0)
	require.NoError(t, err)
	var out []apiclient.JournalEntry
	for _, e := range j.Entries {
		if e.Event == "healing" {
			out = append(out, e)
		}
	}
	return out
}

// docs/explorer.md § Automatic healing at run time: in cluster mode
// PUT /api/controller switches automatic healing for the whole cluster
// through its metadata. Any node takes it — a follower of the metadata
// group forwards it to the leader, as every metadata change — and answers
// once its copy has applied it; GET /api/controller on every node answers
// switchable and the replicated switch; the change is journaled once as
// the operator's healing entry with the reason, and asking for what it is
// already changes and journals nothing. Bad input is 400 and changes
// nothing. (The controller following it across leader changes and
// restarts is clusternode's TestHealingSwitchReplicated.)
func TestControllerClusterModeSwitch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 3)
		for id := 1; id <= 3; id++ {
			c.start(id, nil, false)
		}
		nodes := c.nodes
		res := c.awaitNodes(nodes[1], "a controller and three registered brokers", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 3
		})
		leader := nodes[res.Controller]
		var followers []*running
		for id, r := range nodes {
			if id != res.Controller {
				followers = append(followers, r)
			}
		}
		configured := apiclient.ControllerStatus{Automatic: true, FailoverAfterMS: DefaultFailoverAfter.Milliseconds(), Switchable: true}
		for id, r := range nodes {
			st, err := r.client.Controller(ctx)
			require.NoError(t, err)
			require.Equal(t, configured, *st, "node %d: as configured, and switchable", id)
		}

		for _, body := range []string{`{}`, `{"automatic":"no"}`, `{"automatic":false,"reason":"` + strings.Repeat("x", httpapi.MaxReasonBytes+1) + `"}`} {
			status, answer := followers[0].raw(t, http.MethodPut, "/api/controller", body)
			require.Equal(t, http.StatusBadRequest, status, answer)
		}
		// Refused, they changed nothing.
		st, err := followers[0].client.Controller(ctx)
		require.NoError(t, err)
		require.Equal(t, configured, *st)
		require.Empty(t, healingEntriesOf(t, leader))

		off := apiclient.ControllerStatus{Automatic: false, FailoverAfterMS: 0, Switchable: true}
		st, err = followers[0].client.SetAutomatic(ctx, false, "maintenance window")
		require.NoError(t, err, "a follower takes it")
		require.Equal(t, off, *st)
		for id, r := range nodes {
			c.await(fmt.Sprintf("node %d reads the switch from its copy of the metadata", id), func() (bool, string) {
				st, err := r.client.Controller(ctx)
				if err != nil {
					return false, err.Error()
				}
				return *st == off, fmt.Sprintf("%+v", *st)
			})
		}
		hs := healingEntriesOf(t, leader)
		require.Len(t, hs, 1)
		require.Equal(t, "operator", hs[0].By)
		require.Equal(t, "maintenance window", hs[0].Reason)

		st, err = leader.client.SetAutomatic(ctx, false, "again")
		require.NoError(t, err)
		require.Equal(t, off, *st)
		require.Len(t, healingEntriesOf(t, leader), 1, "already off: nothing journaled")

		st, err = leader.client.SetAutomatic(ctx, true, "maintenance over")
		require.NoError(t, err)
		require.Equal(t, configured, *st)
		c.await("the follower's copy has it too", func() (bool, string) {
			hs = healingEntriesOf(t, followers[1])
			return len(hs) == 2 && hs[1].Reason == "maintenance over", fmt.Sprintf("%+v", hs)
		})
	})
}
