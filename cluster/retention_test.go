package cluster

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
)

// newRetentionCluster opens a 3-broker cluster on clk and creates topic t
// (1 partition, replication factor 3) with config.
func newRetentionCluster(t *testing.T, clk *logtest.Clock, config map[string]string) (*Cluster, string) {
	t.Helper()
	root := t.TempDir()
	c, err := OpenWithOptions(root, Options{Broker: BrokerOptions{Now: clk.Now}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 3; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopicWithConfig("t", 1, 3, config))
	return c, root
}

// sendSized writes n records of size bytes to t/0, one request each, so that
// the logs roll between them.
func sendSized(t *testing.T, c *Cluster, n, size int) {
	t.Helper()
	prod := NewProducer(c, "t")
	for i := range n {
		payload := []byte(fmt.Sprintf("%0*d", size, i))
		_, err := prod.SendBatchTo(0, []topic.Message{{Payload: payload}})
		require.NoError(t, err)
	}
}

func replicaOf(t *testing.T, c *Cluster, id int) *segment.Log {
	t.Helper()
	l, err := c.broker(id).replica("t", 0, false)
	require.NoError(t, err)
	return l
}

func totalSize(segs []segment.SegmentInfo) int64 {
	var n int64
	for _, s := range segs {
		n += s.Size
	}
	return n
}

// docs/phase-1-log.md § Segments and retention: retention.bytes keeps a
// replica within its limit plus one segment; whole sealed segments go,
// oldest first; every replica takes the leader's log start; the journal
// names what was removed; a read below the start is out of range.
func TestRetentionByBytes(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, _ := newRetentionCluster(t, clk, map[string]string{"segment.bytes": "1024", "retention.bytes": "2048", "retention.ms": "-1"})
	sendSized(t, c, 100, 100) // 124-byte frames: 8 to a segment
	leader := replicaOf(t, c, 1)
	require.Greater(t, len(leader.Segments()), 10)

	res, err := c.EnforceRetention()
	require.NoError(t, err)
	require.Len(t, res, 1)
	start := leader.LogStart()
	require.Greater(t, start, uint64(0))
	require.Equal(t, res[0].To, start)
	require.LessOrEqual(t, totalSize(leader.Segments()), int64(2048+1024), "retention + one segment")
	require.Equal(t, leader.Segments()[0].Base, start, "the leader deletes whole segments")
	for id := 2; id <= 3; id++ {
		f := replicaOf(t, c, id)
		require.Equal(t, start, f.LogStart(), "broker %d takes the leader's start", id)
		for _, s := range f.Segments() {
			require.Greater(t, s.Next, start, "broker %d keeps no segment wholly below the start", id)
		}
	}
	brokers := map[int]bool{}
	for _, r := range res[0].Removed {
		brokers[r.Broker] = true
		require.LessOrEqual(t, r.Next, start)
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true}, brokers)

	entries, err := c.Journal(0, 1000)
	require.NoError(t, err)
	var found, intent bool
	for _, e := range entries {
		if e.Event == EventRetention && e.Phase == PhaseIntent {
			intent = true
			require.False(t, found, "the intent comes before the deletion")
		}
		if e.Event == EventRetention && e.Phase == PhaseDone {
			found = true
			require.Equal(t, ByRetention, e.By)
			require.Equal(t, res[0].Removed, e.Removed)
			require.Contains(t, e.Summary, fmt.Sprintf("-> %d", start))
		}
	}
	require.True(t, intent, "the intent is journalled")
	require.True(t, found, "the deletion is journalled")

	_, err = c.ReadCommitted("t", 0, 0, 10)
	var oor *client.OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, start, oor.LogStart)
	require.Equal(t, uint64(100), oor.HighWatermark)
	require.ErrorIs(t, err, client.ErrOffsetOutOfRange)
	recs, err := c.ReadCommitted("t", 0, start, 1000)
	require.NoError(t, err)
	require.Equal(t, 100-int(start), len(recs))

	// A second pass finds nothing more to do.
	res, err = c.EnforceRetention()
	require.NoError(t, err)
	require.Empty(t, res)
}

// Retention by time deletes the sealed segments whose newest record is
// older than retention.ms (an injected clock), never the active one.
func TestRetentionByTime(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, _ := newRetentionCluster(t, clk, map[string]string{"segment.bytes": "1024", "retention.ms": "60000"})
	sendSized(t, c, 40, 100)
	clk.Advance(61 * time.Second)
	sendSized(t, c, 3, 100) // newer records, in segments that must stay
	leader := replicaOf(t, c, 1)
	before := leader.Segments()

	res, err := c.EnforceRetention()
	require.NoError(t, err)
	require.Len(t, res, 1)
	start := leader.LogStart()
	require.LessOrEqual(t, start, uint64(40), "no record younger than retention.ms is deleted")
	require.Greater(t, start, uint64(0))
	after := leader.Segments()
	require.Less(t, len(after), len(before))
	require.Equal(t, before[len(before)-1].Base, after[len(after)-1].Base, "the active segment stays")
	recs, err := c.ReadCommitted("t", 0, start, 100)
	require.NoError(t, err)
	require.Len(t, recs, 43-int(start))

	// With retention.ms -1 nothing goes, however old.
	_, err = c.AlterTopicConfig("t", map[string]string{"retention.ms": "-1"}, nil)
	require.NoError(t, err)
	clk.Advance(365 * 24 * time.Hour)
	sendSized(t, c, 20, 100)
	res, err = c.EnforceRetention()
	require.NoError(t, err)
	require.Empty(t, res)
}

// followerStoppedWhileRetentionRan is a cluster of 3 brokers whose topic
// "t" has small segments and retention by size: broker 3, a follower of
// partition 0, holds its first 5 records and was stopped and deactivated
// before 60 more were written and retention moved the leader's log start
// past 5. It returns the cluster and its root.
func followerStoppedWhileRetentionRan(t *testing.T) (*Cluster, string) {
	t.Helper()
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, root := newRetentionCluster(t, clk, map[string]string{"segment.bytes": "1024", "retention.bytes": "1024", "retention.ms": "-1"})
	sendSized(t, c, 5, 100)
	require.NoError(t, c.StopBroker(3))
	_, err := c.Deactivate("t", 0, 3)
	require.NoError(t, err)
	sendSized(t, c, 60, 100)
	_, err = c.EnforceRetention()
	require.NoError(t, err)
	return c, root
}

// A follower whose log ends below the leader's log start (stopped while
// retention ran) is reset to start, empty, at the leader's start by
// catch-up, journalled, and then holds exactly the leader's records.
func TestRetentionFollowerResetToLeaderStart(t *testing.T) {
	c, _ := followerStoppedWhileRetentionRan(t)
	var err error
	leader := replicaOf(t, c, 1)
	start := leader.LogStart()
	require.Greater(t, start, uint64(5))

	_, err = c.StartBroker(3)
	require.NoError(t, err)
	res, err := c.CatchUp("t", 0, 3)
	require.NoError(t, err)
	require.True(t, res.Reset)
	require.Equal(t, uint64(5), res.ResetFrom)
	require.Equal(t, start, res.LogStart)
	require.Equal(t, uint64(65), res.LogEnd)
	f := replicaOf(t, c, 3)
	require.Equal(t, start, f.LogStart())
	want, err := leader.Read(start, 1000)
	require.NoError(t, err)
	got, err := f.Read(start, 1000)
	require.NoError(t, err)
	require.Equal(t, want, got)
	_, err = f.Read(start-1, 1)
	require.True(t, errors.Is(err, segment.ErrBeforeLogStart), "%v", err)

	entries, err := c.Journal(0, 1000)
	require.NoError(t, err)
	last := entries[len(entries)-1]
	require.Equal(t, EventCatchUp, last.Event)
	require.Contains(t, last.Summary, "reset to start there")
}

// A retention pass a crash interrupts after its intent gets an outcome at
// the next open: failed, saying the next pass deletes what is left; and
// the next pass does.
func TestRetentionInterruptedIntentReconciled(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, root := newRetentionCluster(t, clk, map[string]string{"segment.bytes": "1024", "retention.bytes": "1024", "retention.ms": "-1"})
	sendSized(t, c, 40, 100)
	// What the pass writes before it deletes, then the process dies.
	off, err := c.files.journal.append(JournalEntry{Event: EventRetention, Phase: PhaseIntent, By: ByRetention,
		Topic: "t", Partition: 0, Broker: 1, Summary: "t/0: log start 0 -> 32"})
	require.NoError(t, err)
	c = reopen(t, c, root, 3)

	entries, err := c.Journal(0, 1000)
	require.NoError(t, err)
	var outcome *JournalEntry
	for i := range entries {
		if e := entries[i]; e.Intent != nil && *e.Intent == off {
			outcome = &entries[i]
		}
	}
	require.NotNil(t, outcome, "the interrupted intent has an outcome")
	require.Equal(t, PhaseFailed, outcome.Phase)
	require.Equal(t, ByStartup, outcome.By)
	require.Contains(t, outcome.Error, "next retention pass")

	res, err := c.EnforceRetention()
	require.NoError(t, err)
	require.Len(t, res, 1)
}

// docs/design.md § Topic configuration: retention.ms is Kafka's, and Kafka
// rolls an active segment that has passed retention.ms so that it can go
// too. A partition written once and then left idle for a year keeps no
// record older than retention.ms: the pass rolls its only segment and
// deletes it, on every replica; a record written later is served.
func TestRetentionIdlePartitionExpiresOldRecords(t *testing.T) {
	clk := logtest.NewClock(time.Unix(1_700_000_000, 0))
	c, _ := newRetentionCluster(t, clk, map[string]string{"retention.ms": "60000", "segment.ms": "60000"})
	sendSized(t, c, 5, 100)
	clk.Advance(365 * 24 * time.Hour)
	res, err := c.EnforceRetention()
	require.NoError(t, err)
	require.Len(t, res, 1)
	for id := 1; id <= 3; id++ {
		require.Equal(t, uint64(5), replicaOf(t, c, id).LogStart(), "broker %d serves no record a year older than retention.ms", id)
	}
	_, err = c.ReadCommitted("t", 0, 0, 10)
	require.ErrorIs(t, err, client.ErrOffsetOutOfRange)
	sendSized(t, c, 1, 100)
	recs, err := c.ReadCommitted("t", 0, 5, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)

	// A partition with an unexpired record keeps its active segment.
	res, err = c.EnforceRetention()
	require.NoError(t, err)
	require.Empty(t, res)
}
