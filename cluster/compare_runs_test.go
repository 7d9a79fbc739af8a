package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// The leader-epoch histories behind commonPrefix (compare.go, epochs.go;
// docs/design.md § Leader-epoch history): what they prove is not read,
// what they cannot prove is, and the last chunk checks them.

// sendMany writes n records to topic/0 in batches, payloads "r<i>".
func sendMany(t *testing.T, c *Cluster, topicName string, n int) {
	t.Helper()
	prod := NewProducer(c, topicName)
	for at := 0; at < n; {
		k := min(500, n-at)
		msgs := make([]topic.Message, k)
		for i := range msgs {
			msgs[i] = topic.Message{Payload: fmt.Appendf(nil, "r%d", at+i)}
		}
		_, err := prod.SendBatchTo(0, msgs)
		require.NoError(t, err)
		at += k
	}
}

// forge rewrites a stopped replica's record at offset at with another
// payload, keeping every record after it as it was.
func forge(t *testing.T, path string, at uint64) {
	t.Helper()
	recs := readAll(t, path)
	require.Greater(t, uint64(len(recs)), at)
	tail := slices.Clone(recs[at:])
	tail[0].Payload = []byte("forged")
	l, err := log.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.Truncate(at))
	require.NoError(t, l.AppendRecords(tail))
	require.NoError(t, l.Close())
}

// runsOf is broker id's leader-epoch history of topic/partition.
func runsOf(t *testing.T, c *Cluster, id int, topicName string, partition int) []EpochRun {
	t.Helper()
	m, err := c.hosted(id)
	require.NoError(t, err)
	h, err := m.b.epochsOf(topicName, partition)
	require.NoError(t, err)
	return h.snapshot()
}

// logLines collects what a cluster logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) containing(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// twoReplicas writes n records to orders/0, rf 2 on brokers 1 and 2, and
// closes the cluster: its files are the test's to change before
// reopenLogged opens it again.
func twoReplicas(t *testing.T, n int) string {
	t.Helper()
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	sendMany(t, c, "orders", n)
	require.Equal(t, runsOf(t, c, 1, "orders", 0), runsOf(t, c, 2, "orders", 0))
	require.Len(t, runsOf(t, c, 1, "orders", 0), 1)
	require.NoError(t, c.Close())
	return root
}

// reopenLogged opens the cluster at root with brokers 1..n, its log
// lines collected.
func reopenLogged(t *testing.T, root string, n int) (*Cluster, *logLines) {
	t.Helper()
	lines := &logLines{}
	c, err := OpenWithOptions(root, Options{Broker: BrokerOptions{Logf: lines.logf}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= n; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	return c, lines
}

// prefixOf calls commonPrefix on brokers 1 and 2's replicas of orders/0.
func prefixOf(t *testing.T, c *Cluster, upto uint64) (uint64, string) {
	t.Helper()
	p, err := c.partition("orders", 0)
	require.NoError(t, err)
	common, reason, err := c.commonPrefix(context.Background(), p, 1, 2, upto)
	require.NoError(t, err)
	return common, reason
}

// writeEpochs replaces a stopped replica's leader-epoch history.
func writeEpochs(t *testing.T, root string, id int, runs []EpochRun) {
	t.Helper()
	path := filepath.Join(ReplicaDir(root, id, "orders", 0), EpochsFileName)
	require.NoError(t, durable.WriteFile(durable.OS, path, EncodeEpochsFile(runs)))
}

const longLog = 3000

// Two replicas whose histories name one run over the whole log are equal
// there without their records being read: a record forged well before the
// last chunk goes unseen, and nothing is logged.
func TestCommonPrefixTrustsSameRun(t *testing.T) {
	root := twoReplicas(t, longLog)
	forge(t, replicaPath(root, 2, "orders", 0), 100)
	c, lines := reopenLogged(t, root, 2)
	common, reason := prefixOf(t, c, longLog)
	require.Equal(t, uint64(longLog), common, "the early record was not read")
	require.Empty(t, reason)
	require.Empty(t, lines.containing("record by record"))
}

// A difference inside the last chunk before the answer is caught by the
// check of the histories, logged, and the whole range is then compared
// record by record: the first difference, far earlier, is the answer.
func TestCommonPrefixLastChunkCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forged []uint64
		want   uint64
	}{
		{"last chunk only", []uint64{longLog - 10}, longLog - 10},
		{"last chunk and early", []uint64{100, longLog - compareChunk}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := twoReplicas(t, longLog)
			for _, at := range tc.forged {
				forge(t, replicaPath(root, 2, "orders", 0), at)
			}
			c, lines := reopenLogged(t, root, 2)
			common, reason := prefixOf(t, c, longLog)
			require.Equal(t, tc.want, common)
			require.Equal(t, "payload differs", reason)
			logged := lines.containing("record by record")
			require.Len(t, logged, 1)
			require.Contains(t, logged[0], fmt.Sprintf("differ at %d", tc.forged[len(tc.forged)-1]))
		})
	}
}

// Where the histories name different runs from offset k on, the replicas
// differ from k, whatever their records: the reason names both runs.
func TestCommonPrefixDifferentRuns(t *testing.T) {
	root := twoReplicas(t, longLog)
	first := EpochRun{Epoch: 1, ID: 0x1111, Start: 0}
	a := EpochRun{Epoch: 2, ID: 0xaaaa, Start: 2000}
	b := EpochRun{Epoch: 3, ID: 0xbbbb, Start: 2000}
	writeEpochs(t, root, 1, []EpochRun{first, a})
	writeEpochs(t, root, 2, []EpochRun{first, b})
	c, lines := reopenLogged(t, root, 2)
	common, reason := prefixOf(t, c, longLog)
	require.Equal(t, uint64(2000), common)
	require.Equal(t, "offset 2000 was written in epoch 2 (run 000000000000aaaa) on broker 1, in epoch 3 (run 000000000000bbbb) on broker 2", reason)
	require.Empty(t, lines.containing("record by record"), "the records before 2000 are the same")

	// The same, one run starting later on one replica than the other.
	require.NoError(t, c.Close())
	writeEpochs(t, root, 2, []EpochRun{first, {Epoch: 3, ID: 0xbbbb, Start: 2500}})
	c, _ = reopenLogged(t, root, 2)
	common, reason = prefixOf(t, c, longLog)
	require.Equal(t, uint64(2000), common)
	require.Contains(t, reason, "in epoch 2 (run 000000000000aaaa) on broker 1, in epoch 1 (run 0000000000001111) on broker 2")
}

// Replicas with no history (written before histories were kept) are
// compared record by record, as before: the first difference, early or
// late, is found exactly; and where one replica has a history and the
// other none, what is unknown on one side is read too.
func TestCommonPrefixUnknownRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forged  uint64
		history int // the broker that keeps its history; 0: neither
	}{
		{"neither, early", 7, 0},
		{"neither, late", longLog - 1, 0},
		{"one side, early", 1234, 1},
		{"other side, early", 1234, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := twoReplicas(t, longLog)
			for id := 1; id <= 2; id++ {
				if id != tc.history {
					require.NoError(t, os.Remove(filepath.Join(ReplicaDir(root, id, "orders", 0), EpochsFileName)))
				}
			}
			forge(t, replicaPath(root, 2, "orders", 0), tc.forged)
			c, lines := reopenLogged(t, root, 2)
			common, reason := prefixOf(t, c, longLog)
			require.Equal(t, tc.forged, common)
			require.Equal(t, "payload differs", reason)
			require.Empty(t, lines.containing("record by record"), "the records were read before the check")
		})
	}
}

// End to end: followers take their leader's runs with its records; a new
// leader starts a new run at its log end with its epoch, which the
// followers take; a leader whose log is reopened starts a new run at the
// same epoch.
func TestEpochHistoryFollowsLeaders(t *testing.T) {
	c, root, ffs := newFullDiskCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendMany(t, c, "orders", 1000)
	st := mustStatus(t, c)
	first := runsOf(t, c, st.Leader, "orders", 0)
	require.Len(t, first, 1)
	require.Equal(t, EpochRun{Epoch: st.LeaderEpoch, ID: first[0].ID, Start: 0}, first[0])
	sameEverywhere := func(t *testing.T, want []EpochRun) {
		t.Helper()
		for _, id := range mustStatus(t, c).Active {
			require.Equal(t, want, runsOf(t, c, id, "orders", 0), "broker %d", id)
		}
	}
	sameEverywhere(t, first)

	// A failover: the new leader's first append starts a run at its log
	// end, at the new epoch.
	require.NoError(t, c.StopBroker(st.Leader))
	_, err := c.Failover("orders", 0)
	require.NoError(t, err)
	st2 := mustStatus(t, c)
	require.Greater(t, st2.LeaderEpoch, st.LeaderEpoch)
	require.Equal(t, first, runsOf(t, c, st2.Leader, "orders", 0), "no run before the first append")
	sendMany(t, c, "orders", 10)
	second := runsOf(t, c, st2.Leader, "orders", 0)
	require.Len(t, second, 2)
	require.Equal(t, first[0], second[0])
	require.Equal(t, st2.LeaderEpoch, second[1].Epoch)
	require.Equal(t, uint64(1000), second[1].Start)
	require.NotEqual(t, first[0].ID, second[1].ID)
	sameEverywhere(t, second)

	// A leader move, back to the first leader once it is recovered.
	_, err = c.StartBroker(st.Leader)
	require.NoError(t, err)
	_, err = c.RecoverReplica("orders", 0, st.Leader)
	require.NoError(t, err)
	sameEverywhere(t, second)
	_, err = c.MoveLeader("orders", 0, st.Leader)
	require.NoError(t, err)
	st3 := mustStatus(t, c)
	require.Equal(t, st.Leader, st3.Leader)
	sendMany(t, c, "orders", 5)
	third := runsOf(t, c, st3.Leader, "orders", 0)
	require.Len(t, third, 3)
	require.Equal(t, second, third[:2])
	require.Equal(t, EpochRun{Epoch: st3.LeaderEpoch, ID: third[2].ID, Start: 1010}, third[2])
	sameEverywhere(t, third)

	// A failed write, then the leader's log reopened: a new run at the
	// same epoch, from its log end.
	ffs.SetFault(logtest.FullDisk(under(root, brokerDir(st3.Leader))))
	_, err = NewProducer(c, "orders").Send(nil, []byte("lost"))
	require.True(t, durable.NoSpace(err), "%v", err)
	ffs.SetFault(nil)
	_, err = c.ReopenBroker(st3.Leader)
	require.NoError(t, err)
	sendMany(t, c, "orders", 1)
	fourth := runsOf(t, c, st3.Leader, "orders", 0)
	require.Len(t, fourth, 4)
	require.Equal(t, third, fourth[:3])
	require.Equal(t, st3.LeaderEpoch, mustStatus(t, c).LeaderEpoch)
	require.Equal(t, EpochRun{Epoch: st3.LeaderEpoch, ID: fourth[3].ID, Start: 1015}, fourth[3])
	require.NotEqual(t, third[2].ID, fourth[3].ID)
	sameEverywhere(t, fourth)
}

// A recovering replica with a long log whose tail was written in a run
// the new leader does not hold (its leader's unacknowledged records) is
// cut, into quarantine, at the new leader's run boundary; afterwards its
// records and its history are the leader's.
func TestRecoverReplicaCutsAtRunBoundary(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendMany(t, c, "orders", longLog)
	old := mustStatus(t, c).Leader
	var others []int
	for _, id := range []int{1, 2, 3} {
		if id != old {
			others = append(others, id)
		}
	}
	for _, id := range others {
		require.NoError(t, c.StopBroker(id))
	}
	prod := NewProducer(c, "orders")
	for i := range 3 {
		_, err := prod.Send(nil, fmt.Appendf(nil, "unacked %d", i))
		require.ErrorIs(t, err, ErrReplicationFailed)
	}
	require.NoError(t, c.StopBroker(old))
	for _, id := range others {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	_, err := c.Failover("orders", 0)
	require.NoError(t, err)
	sendMany(t, c, "orders", 5)
	st := mustStatus(t, c)
	leaderRuns := runsOf(t, c, st.Leader, "orders", 0)
	require.Len(t, leaderRuns, 2)
	require.Equal(t, uint64(longLog), leaderRuns[1].Start)

	_, err = c.StartBroker(old)
	require.NoError(t, err)
	oldRuns := runsOf(t, c, old, "orders", 0)
	require.Equal(t, leaderRuns[:1], oldRuns, "the unacknowledged tail is in the old leader's run")
	rr, err := c.RecoverReplica("orders", 0, old)
	require.NoError(t, err)
	require.Equal(t, uint64(longLog), rr.CommonPrefix)
	require.Equal(t, 3, rr.Dropped)
	require.Equal(t, uint64(longLog), rr.DroppedFrom)
	require.Equal(t, uint64(longLog+3), rr.DroppedTo)
	var quarantined []log.Record
	require.NoError(t, log.ScanFileFrom(rr.Quarantine, longLog, log.Options{}, func(_ int64, r log.Record) error {
		quarantined = append(quarantined, r)
		return nil
	}))
	require.Len(t, quarantined, 3)
	for i, r := range quarantined {
		require.Equal(t, uint64(longLog+i), r.Offset)
		require.Equal(t, fmt.Sprintf("unacked %d", i), string(r.Payload))
	}
	require.Equal(t, leaderRuns, runsOf(t, c, old, "orders", 0))
	require.Equal(t, readAll(t, replicaPath(root, st.Leader, "orders", 0)), readAll(t, replicaPath(root, old, "orders", 0)))
	require.Equal(t, []int{1, 2, 3}, mustStatus(t, c).Active)
}

// A follower reset to start, empty, at its leader's log start keeps no
// run below it: its old history describes records it no longer holds, and
// a stale run there (one its leader never held, after the leader's run at
// its log start began) must not make the leader's runs look repeated and
// the copy fail.
func TestEpochHistoryResetToLeaderStart(t *testing.T) {
	c, root := followerStoppedWhileRetentionRan(t)
	leaderRuns := runsOf(t, c, 1, "t", 0)
	require.Len(t, leaderRuns, 1)
	stale := EpochRun{Epoch: leaderRuns[0].Epoch, ID: leaderRuns[0].ID ^ 1, Start: 3}
	path := filepath.Join(ReplicaDir(root, 3, "t", 0), EpochsFileName)
	require.NoError(t, durable.WriteFile(durable.OS, path, EncodeEpochsFile([]EpochRun{leaderRuns[0], stale})))

	_, err := c.StartBroker(3)
	require.NoError(t, err)
	res, err := c.CatchUp("t", 0, 3)
	require.NoError(t, err)
	require.True(t, res.Reset)
	start := replicaOf(t, c, 1).LogStart()
	require.Equal(t, []EpochRun{{Epoch: leaderRuns[0].Epoch, ID: leaderRuns[0].ID, Start: start}}, runsOf(t, c, 3, "t", 0))
}

// Opening a history drops the runs at or past the log's end, and every
// run when the log is empty: a reset whose history was not cut before a
// crash leaves no stale run.
func TestOpenEpochHistoryTrims(t *testing.T) {
	runs := []EpochRun{{Epoch: 1, ID: 1, Start: 0}, {Epoch: 2, ID: 2, Start: 3}, {Epoch: 2, ID: 3, Start: 9}}
	for _, tc := range []struct {
		name       string
		start, end uint64
		want       []EpochRun
	}{
		{"whole", 0, 10, runs},
		{"cut", 0, 9, runs[:2]},
		{"runs below the log start pruned, the one holding it kept", 8, 10, runs[1:]},
		{"empty, reset", 1000, 1000, nil},
		{"empty at zero", 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, durable.WriteFile(durable.OS, filepath.Join(dir, EpochsFileName), EncodeEpochsFile(runs)))
			h, err := openEpochHistory(durable.OS, dir, tc.start, tc.end, t.Logf)
			require.NoError(t, err)
			if got := h.snapshot(); len(tc.want) > 0 || len(got) > 0 {
				require.Equal(t, tc.want, got)
			}
		})
	}
}
