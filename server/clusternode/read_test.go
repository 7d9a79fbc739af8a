package clusternode_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clustertest"
)

// TestNodeBoundsAndOffsetForTime pins doc.go's "Any node answers" for the
// readable range and the search by time (cluster/read.go): a node that
// does not lead a partition asks its leader, so every node gives the
// leader's log start and high watermark — not its own replica's, whose
// high watermark trails the leader's by a write and whose log holds a
// record the leader appended but no one acknowledged — and the leader's
// answer to a search by time: the first committed record at or after the
// time, the log start for a time before it, the high watermark (not
// found) for a time past the last committed record. A committed read below
// the log start is the embedded cluster's *client.OffsetOutOfRangeError,
// with every field, through every node.
func TestNodeBoundsAndOffsetForTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "events"
		// Manual mode: a stopped follower stays in the active set.
		c := start(t, 3, clustertest.Options{FailoverAfter: -1})
		require.NoError(t, c.Via(1).CreateTopicWithConfig(name, 1, 3,
			map[string]string{"segment.bytes": "1024", "retention.bytes": "1024", "retention.ms": "-1"}))
		leader := statusVia(t, c, 1, name, 0).Leader
		var acked []log.Record
		for i := range 40 {
			recs, _ := send(t, c, others(c, leader)[i%2], name, 0, fmt.Sprintf("%03d %s", i, strings.Repeat("x", 100)))
			acked = append(acked, recs...)
			time.Sleep(time.Millisecond) // a timestamp of its own for every record
		}
		res, err := c.Via(leader).EnforceRetention()
		require.NoError(t, err)
		require.Len(t, res, 1)
		start := res[0].To
		require.Positive(t, start)

		// A follower's own high watermark trails its leader's by the last
		// write (it learns the leader's with the next one): through every
		// node, the last record is committed, as its leader says.
		last := acked[len(acked)-1]
		for _, id := range c.IDs() {
			ls, hw, err := c.Via(id).Bounds(name, 0)
			require.NoError(t, err, "node %d", id)
			require.Equal(t, [2]uint64{start, 40}, [2]uint64{ls, hw}, "node %d: the leader's log start and high watermark", id)
			off, found, err := c.Via(id).OffsetForTime(name, 0, last.Timestamp)
			require.NoError(t, err, "node %d", id)
			require.Equal(t, uint64(39), off, "node %d", id)
			require.True(t, found, "node %d: the last acknowledged record is committed", id)
		}

		// A follower stops; the leader appends a record that is never
		// acknowledged, and the follower still running holds it too.
		f, stopped := others(c, leader)[0], others(c, leader)[1]
		c.Stop(stopped)
		time.Sleep(time.Millisecond)
		_, err = cluster.NewProducer(c.Via(f), name).SendBatchTo(0, msgs("never acknowledged"))
		var re *cluster.ReplicationError
		require.ErrorAs(t, err, &re)
		require.Equal(t, []int{stopped}, re.BrokerIDs)
		unacked := replicaRecords(t, c, leader, name, 0)
		require.Equal(t, "never acknowledged", string(unacked[len(unacked)-1].Payload))
		require.Equal(t, uint64(41), replicaRecords(t, c, f, name, 0)[len(replicaRecords(t, c, f, name, 0))-1].Offset+1,
			"the running follower holds the unacknowledged record")

		for _, id := range c.Running() {
			ls, hw, err := c.Via(id).Bounds(name, 0)
			require.NoError(t, err, "node %d", id)
			require.Equal(t, [2]uint64{start, 40}, [2]uint64{ls, hw}, "node %d: the leader's log start and high watermark", id)

			i := int(start) + 2 // a record retention kept
			require.Less(t, i, 39)
			for _, q := range []struct {
				what  string
				ts    int64
				off   uint64
				found bool
			}{
				{"a committed record's time", acked[i].Timestamp, uint64(i), true},
				{"just after a committed record", acked[i].Timestamp + 1, uint64(i + 1), true},
				{"before every record still held", 0, start, true},
				{"the unacknowledged record's time", unacked[len(unacked)-1].Timestamp, 40, false},
				{"after every record", math.MaxInt64, 40, false},
			} {
				off, found, err := c.Via(id).OffsetForTime(name, 0, q.ts)
				require.NoError(t, err, "node %d: %s", id, q.what)
				require.Equal(t, q.off, off, "node %d: %s", id, q.what)
				require.Equal(t, q.found, found, "node %d: %s", id, q.what)
			}

			_, err = c.Via(id).ReadCommitted(name, 0, start-1, 10)
			var oor *client.OffsetOutOfRangeError
			require.ErrorAs(t, err, &oor, "node %d", id)
			require.Equal(t, client.OffsetOutOfRangeError{Topic: name, Partition: 0, Offset: start - 1, LogStart: start, HighWatermark: 40}, *oor, "node %d", id)
			require.ErrorIs(t, err, client.ErrOffsetOutOfRange, "node %d", id)
			sameRecords(t, acked[start:], readFrom(t, c, id, name, 0, start), "node %d: the committed records from the log start", id)
		}
	})
}
