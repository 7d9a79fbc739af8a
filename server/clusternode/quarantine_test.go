package clusternode

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// TestQuarantineDivergedFollower pins doc.go's "Writes" for a returning
// follower: before it takes anything from the leader of an epoch it proves
// its log a prefix of the leader's and cuts what differs — records no
// leader acknowledged — into a quarantine file beside its log, never
// destroying them (cluster.QuarantinePath); then it catches up and the
// controller lets it rejoin the active set, and the journal names the
// file.
func TestQuarantineDivergedFollower(t *testing.T) {
	c := newTestCluster(t, 3)
	const name = "audit"
	p := 0
	c.createTopic(c.node(1), name, 1, 3)
	for i := range 3 {
		_, err := c.node(i+1).Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "acknowledged #%d", i)}})
		require.NoError(t, err)
	}

	// A follower of the partition, preferably not the metadata leader (no
	// election to wait for).
	pm := partitionOf(t, c.node(1), name, p)
	var victim int
	for _, id := range pm.Replicas {
		if id != pm.Leader && (victim == 0 || id != c.controller()) {
			victim = id
		}
	}
	c.stop(victim)
	waitFor(t, testFailoverAfter+failoverMargin, fmt.Sprintf("broker %d out of the active set", victim), func() (bool, string) {
		for _, n := range c.running() {
			if pm := partitionOf(t, n, name, p); slices.Contains(pm.Active, victim) {
				return false, fmt.Sprintf("node %d: %+v", n.ID(), pm)
			}
		}
		return true, ""
	})
	// The leader goes on: offsets 3 and 4.
	for i := 3; i < 5; i++ {
		res, err := c.running()[0].Send(name, &p, []topic.Message{{Payload: fmt.Appendf(nil, "acknowledged #%d", i)}})
		require.NoError(t, err)
		require.Equal(t, uint64(i), res[0].Offset)
	}

	// Meanwhile the stopped follower's log gets records no leader
	// acknowledged at offsets 3, 4 and 5.
	path := cluster.ReplicaDir(c.nodes[victim].dir, victim, name, p)
	l, err := segment.Open(path, segment.Options{MustExist: true})
	require.NoError(t, err)
	require.Equal(t, uint64(3), l.NextOffset())
	junk, err := l.AppendBatch([][]byte{[]byte("never acknowledged 3"), []byte("never acknowledged 4"), []byte("never acknowledged 5")})
	require.NoError(t, err)
	require.NoError(t, l.Close())

	c.restart(victim)
	waitFor(t, waitLong, fmt.Sprintf("broker %d active again", victim), func() (bool, string) {
		for _, n := range c.running() {
			st, err := n.Status(name, p)
			if err != nil || !slices.Contains(st.Active, victim) {
				return false, fmt.Sprintf("node %d: %+v %v", n.ID(), st, err)
			}
		}
		return true, ""
	})

	// The quarantine file, among the log's segments, holds exactly the cut records.
	found, err := filepath.Glob(filepath.Join(path, "quarantine-*"))
	require.NoError(t, err)
	require.Len(t, found, 1, "one quarantine file beside %s", path)
	from, to, _, ok := cluster.ParseQuarantineName(filepath.Base(found[0]))
	require.True(t, ok, "%s is a quarantine file's name", found[0])
	require.Equal(t, [2]uint64{3, 6}, [2]uint64{from, to})
	var cut []log.Record
	require.NoError(t, log.ScanFileFrom(found[0], from, log.Options{}, func(_ int64, rec log.Record) error {
		cut = append(cut, rec)
		return nil
	}))
	sameRecords(t, junk, cut, "the quarantine file keeps the cut records as they were")
	entries, err := c.node(victim).Journal(0, 0)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(entries, func(e cluster.JournalEntry) bool {
		return e.Event == cluster.EventRecover && e.Phase == cluster.PhaseDone && e.Broker == victim &&
			e.Cut != nil && *e.Cut == cluster.JournalCut{From: 3, To: 6} && e.Quarantine != ""
	}), "the journal names the range the follower cut: %v", entries)

	// Its log now equals the leader's, and every acknowledged record is
	// readable.
	leader := partitionOf(t, c.node(victim), name, p).Leader
	want := c.replicaLog(leader, name, p)
	require.Len(t, want, 5)
	sameRecords(t, want, c.replicaLog(victim, name, p), "broker %d's log equals its leader's", victim)
	sameRecords(t, want, readAll(t, c.node(victim), name, p))

	// The journal names the file, relative to the broker's data directory.
	waitFor(t, waitLong, "a journal entry naming the quarantine file", func() (bool, string) {
		entries, err := c.node(victim).Journal(0, 0)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range entries {
			if e.Quarantine != "" && filepath.Join(c.nodes[victim].dir, e.Quarantine) == found[0] {
				require.Equal(t, name, e.Topic)
				require.Equal(t, victim, e.Broker)
				return true, ""
			}
		}
		return false, fmt.Sprintf("%v", entries)
	})
}
