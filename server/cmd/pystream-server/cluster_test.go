package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// These tests run cluster mode as it is deployed: three pystream-server
// processes on loopback, each one broker and one voter of the metadata
// group (docs/phase-7-processes.md, whose sections they cite). They kill, pause and cut
// off real processes; cluster_helpers_test.go is the harness. They do not
// run in parallel: each holds three processes busy and bounds a failover
// in time, which a machine shared with four other clusters would stretch.

// failoverAfter is PYSTREAM_FAILOVER_AFTER in these tests.
const failoverAfter = time.Second

// failoverBound is how soon a partition whose leader's process died must
// have a new leader: FAILOVER_AFTER, a heartbeat interval, a controller
// pass and a Raft commit take about 1.2 s; the rest is room for a loaded
// machine.
const failoverBound = 6 * time.Second

// leaderOtherThan returns a partition of the topic (as node via reports
// it) whose leader is not one of the nodes in not, with its leader and
// epoch.
func (c *testCluster) leaderOtherThan(ctx context.Context, via int, name string, not ...int) (p, leader int, epoch uint64) {
	c.t.Helper()
	d, err := c.topic(ctx, via, name)
	require.NoError(c.t, err)
	for _, ps := range d.Partitions {
		if !slices.Contains(not, ps.Leader) {
			return ps.Partition, ps.Leader, ps.LeaderEpoch
		}
	}
	c.t.Fatalf("every partition of %q is led by one of %v", name, not)
	return 0, 0, 0
}

// victimOutsideController finds the controller and a partition of the
// topic led by another node — a test about a partition's failover, not
// the controller's — and logs both.
func (c *testCluster) victimOutsideController(ctx context.Context, name string) (p, victim int, epoch uint64) {
	c.t.Helper()
	ctrl := c.controller(ctx, c.ids(), 30*time.Second)
	p, victim, epoch = c.leaderOtherThan(ctx, ctrl, name, ctrl)
	c.t.Logf("partition %d is led by node %d at epoch %d; the controller is node %d", p, victim, epoch, ctrl)
	return p, victim, epoch
}

// docs/phase-7-processes.md § Clients reach any node and § A write: a
// produce to any node is written by the partition's leader and
// acknowledged once every active replica holds it; a fetch from any node
// reads the leader's log below the high watermark. So three processes,
// the topic created through one of them, serve the same records at the
// same offsets from every node, and every replica's file holds them.
func TestClusterProduceAndConsumeThroughEveryNode(t *testing.T) {
	const partitions = 3
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", partitions, 3)
	// A replication factor above the number of brokers is refused by
	// whichever node takes it.
	for _, via := range c.ids() {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		_, _, err := c.client(via).CreateTopic(rctx, "too-wide", 1, 4)
		rcancel()
		require.ErrorIs(t, err, apiclient.ErrInvalidArgument, "node %d", via)
	}

	var acks ackLog
	for round := range 3 {
		for _, via := range c.ids() {
			for p := range partitions {
				a, err := c.produceTo(ctx, via, "events", p, fmt.Sprintf("r%d-n%d-p%d", round, via, p), 10*time.Second)
				require.NoError(t, err, "produce to partition %d through node %d", p, via)
				acks.add(a)
			}
			// A keyed record through the same node: routed by its key.
			p := round % partitions
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			value := fmt.Sprintf("keyed-r%d-n%d", round, via)
			res, err := c.client(via).Produce(rctx, "events", []apiclient.ProduceRecord{{Key: keyFor(t, p, partitions), Value: []byte(value)}})
			rcancel()
			require.NoError(t, err)
			require.Equal(t, p, res.Records[0].Partition, "a key routes to one partition whichever node takes it")
			acks.add(ack{value: value, partition: p, offset: res.Records[0].Offset, via: via})
		}
	}

	byPartition := make([][]ack, partitions)
	for _, a := range acks.all() {
		byPartition[a.partition] = append(byPartition[a.partition], a)
	}
	for p := range partitions {
		// Writes were one at a time: every record was acknowledged, in
		// offset order.
		want := make([]string, len(byPartition[p]))
		for i, a := range byPartition[p] {
			require.Equal(t, uint64(i), a.offset, "partition %d: acknowledged offsets follow each other", p)
			want[i] = a.value
		}
		var first *apiclient.FetchResponse
		for _, via := range c.ids() {
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			got, err := c.client(via).Fetch(rctx, "events", p, 0, 1000)
			rcancel()
			require.NoError(t, err, "fetch partition %d through node %d", p, via)
			vals := make([]string, len(got.Records))
			for i, r := range got.Records {
				vals[i] = string(r.Value)
			}
			require.Equal(t, want, vals, "partition %d through node %d", p, via)
			requireAckedOnce(t, got.Records, byPartition[p])
			require.Equal(t, uint64(len(want)), got.HighWatermark)
			require.Equal(t, uint64(len(want)), got.LogEnd, "partition %d through node %d: the leader's log end", p, via)
			if first == nil {
				first = got
			}
			require.Equal(t, first, got, "partition %d: node %d answers as node 1 does", p, via)
		}
	}
	// Every replica holds the same log: the files agree too.
	for p := range partitions {
		want := c.replicaLog(1, "events", p)
		require.Len(t, want, len(byPartition[p]))
		for _, id := range c.ids(1) {
			requireSameLog(t, want, c.replicaLog(id, "events", p), fmt.Sprintf("partition %d: node %d against node 1", p, id))
		}
	}
}

// docs/phase-7-processes.md § Failure detection (and its timeline): a
// partition leader's process killed under load is failed over within
// FAILOVER_AFTER plus a controller pass; producers through the other nodes
// go on; § The rule that keeps acknowledged records: every acknowledged
// record is readable exactly once, at the offset it was acknowledged with.
// § Rejoining: the killed node restarted on its data directory is
// re-admitted, and its own log file then holds exactly the leader's
// records.
func TestClusterSIGKILLPartitionLeaderUnderLoad(t *testing.T) {
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "load", 3, 3)
	// A partition led by a node that is not the controller: this test is
	// about the partition's failover, TestClusterSIGKILLController about the
	// controller's.
	p, victim, epoch := c.victimOutsideController(ctx, "load")
	survivors := c.ids(victim)

	var acks ackLog
	stop := c.producers(ctx, 4, 5000, survivors, "load", p, &acks)
	defer stop()
	c.waitAcks(ctx, &acks, time.Time{}, 40, "the producers write before the kill")

	killed := time.Now()
	c.kill(victim)
	leader, newEpoch := c.waitNewLeader(ctx, survivors[0], "load", p, epoch, survivors, 30*time.Second)
	took := c.failedOverAt(ctx, survivors[0], "load", p, newEpoch).Sub(killed)
	t.Logf("partition %d: node %d leads at epoch %d, %v after node %d was killed (FAILOVER_AFTER=%v)", p, leader, newEpoch, took, victim, failoverAfter)
	require.Less(t, took, failoverBound, "the failover took too long")
	c.waitAcks(ctx, &acks, time.Now(), 40, "the producers go on after the failover")
	stop()

	all := acks.all()
	t.Logf("%d records acknowledged", len(all))
	for _, via := range survivors {
		requireAckedOnce(t, c.readPartition(ctx, via, "load", p), all)
	}

	c.restart(ctx, victim)
	d := c.waitActive(ctx, victim, "load", 30*time.Second)
	require.Equal(t, leader, d.Partitions[p].Leader, "the returning node is a follower")
	requireAckedOnce(t, c.readPartition(ctx, victim, "load", p), all)
	c.waitSameLog(ctx, leader, victim, "load", p)
}

// docs/phase-7-processes.md § What Raft holds: the metadata lives in the
// Raft group, not in any one process. Killing the process that leads it
// elects another controller with every topic and journal entry intact;
// § Failure detection, "When the dead node also led the Raft group": the
// partitions it led fail over to live nodes after the election, and writes
// to every partition go on.
func TestClusterSIGKILLController(t *testing.T) {
	const partitions = 3
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "meta", partitions, 3)
	var acks ackLog
	for p := range partitions {
		a, err := c.produceTo(ctx, 1, "meta", p, fmt.Sprintf("before-%d", p), 10*time.Second)
		require.NoError(t, err)
		acks.add(a)
	}
	ctrl := c.controller(ctx, c.ids(), 30*time.Second)
	survivors := c.ids(ctrl)
	before, err := c.topic(ctx, survivors[0], "meta")
	require.NoError(t, err)
	journalBefore, err := c.journal(ctx, survivors[0])
	require.NoError(t, err)
	led := []int{}
	for _, ps := range before.Partitions {
		if ps.Leader == ctrl {
			led = append(led, ps.Partition)
		}
	}
	t.Logf("node %d is the controller and leads partitions %v", ctrl, led)

	killed := time.Now()
	c.kill(ctrl)
	next := c.controller(ctx, survivors, 30*time.Second)
	t.Logf("node %d leads the metadata group %v after node %d was killed", next, time.Since(killed), ctrl)
	for _, p := range led {
		leader, _ := c.waitNewLeader(ctx, survivors[0], "meta", p, before.Partitions[p].LeaderEpoch, survivors, 30*time.Second)
		t.Logf("partition %d: node %d leads, %v after the kill", p, leader, time.Since(killed))
	}

	for _, via := range survivors {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		topics, err := c.client(via).Topics(rctx)
		rcancel()
		require.NoError(t, err)
		require.Equal(t, []apiclient.TopicSummary{{Name: "meta", PartitionCount: partitions, ReplicationFactor: 3}}, topics.Topics, "node %d", via)
		// A node applies the failover a moment after the controller
		// commits it.
		var d *apiclient.TopicDetail
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d sees every partition led by a live node", via), func() (bool, string) {
			d, err = c.topic(ctx, via, "meta")
			if err != nil {
				return false, err.Error()
			}
			for _, ps := range d.Partitions {
				if !slices.Contains(survivors, ps.Leader) {
					return false, fmt.Sprintf("partition %d led by %d", ps.Partition, ps.Leader)
				}
			}
			return true, ""
		})
		for _, ps := range d.Partitions {
			require.Equal(t, before.Partitions[ps.Partition].Placement, ps.Placement, "node %d: partition %d keeps its placement", via, ps.Partition)
		}
		j, err := c.journal(ctx, via)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(j), len(journalBefore))
		require.Equal(t, journalBefore, j[:len(journalBefore)], "node %d: the journal keeps what it held", via)
	}

	for p := range partitions {
		for _, via := range survivors {
			a, err := c.produceRetry(ctx, []int{via}, "meta", p, func(attempt int) string { return fmt.Sprintf("after-%d-n%d-a%d", p, via, attempt) }, 100)
			require.NoError(t, err, "partition %d through node %d", p, via)
			acks.add(a)
		}
	}
	byPartition := make([][]ack, partitions)
	for _, a := range acks.all() {
		byPartition[a.partition] = append(byPartition[a.partition], a)
	}
	for p := range partitions {
		for _, via := range survivors {
			requireAckedOnce(t, c.readPartition(ctx, via, "meta", p), byPartition[p])
		}
	}
}

// docs/phase-7-processes.md § A write, step 3 (an older epoch is refused:
// that refusal fences a replaced leader) and § Failure detection ("a fenced
// broker that is in fact alive ... cannot get a write acknowledged that the
// new leader lacks"): a leader paused (SIGSTOP) for three times
// FAILOVER_AFTER with writes in flight to it is replaced; when it runs
// again a write it held is either refused or, if it was acknowledged, on
// the new leader at the offset acknowledged; § Rejoining: it comes back as
// a follower whose log is the leader's.
func TestClusterSIGSTOPLeaderIsFencedAndRejoins(t *testing.T) {
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "fence", 3, 3)
	p, victim, epoch := c.victimOutsideController(ctx, "fence")
	survivors := c.ids(victim)

	// One producer writes straight to the leader's own HTTP port, so that
	// a write is in flight inside it when it stops.
	var acks ackLog
	type outcome struct {
		value string
		a     ack
		err   error
	}
	var stopDirect = make(chan struct{})
	direct := make(chan outcome, 10000)
	go func() {
		defer close(direct)
		for i := 0; i < 10000; i++ {
			select {
			case <-stopDirect:
				return
			default:
			}
			value := fmt.Sprintf("direct-%d", i)
			a, err := c.produceTo(ctx, victim, "fence", p, value, 30*time.Second)
			direct <- outcome{value, a, err}
		}
	}()
	c.eventually(ctx, 30*time.Second, "the leader acknowledges direct writes", func() (bool, string) {
		return len(direct) >= 20, fmt.Sprintf("%d answered", len(direct))
	})

	c.pause(victim)
	paused := time.Now()
	// And one more sent after the stop: certainly in flight.
	late := make(chan outcome, 1)
	go func() {
		a, err := c.produceTo(ctx, victim, "fence", p, "sent-while-stopped", 30*time.Second)
		late <- outcome{"sent-while-stopped", a, err}
	}()
	leader, newEpoch := c.waitNewLeader(ctx, survivors[0], "fence", p, epoch, survivors, 30*time.Second)
	took := c.failedOverAt(ctx, survivors[0], "fence", p, newEpoch).Sub(paused)
	t.Logf("partition %d: node %d leads at epoch %d, %v after node %d stopped", p, leader, newEpoch, took, victim)
	require.Less(t, took, failoverBound, "the failover took too long")
	for i := range 10 {
		a, err := c.produceRetry(ctx, survivors, "fence", p, func(attempt int) string { return fmt.Sprintf("majority-%d-a%d", i, attempt) }, 100)
		require.NoError(t, err)
		acks.add(a)
	}
	// The scenario: the old leader stays stopped for three times the
	// failover delay, well past its fencing.
	if left := 3*failoverAfter - time.Since(paused); left > 0 {
		time.Sleep(left)
	}
	c.resume(victim)
	resumed := time.Now()

	lateOutcome := <-late
	close(stopDirect)
	var directAcks, directRefused int
	for o := range direct {
		if o.err != nil {
			directRefused++
			continue
		}
		directAcks++
		acks.add(o.a)
	}
	if lateOutcome.err == nil {
		t.Logf("the write sent while node %d was stopped was acknowledged at offset %d (through the new leader, it must be there)", victim, lateOutcome.a.offset)
		acks.add(lateOutcome.a)
	} else {
		t.Logf("the write sent while node %d was stopped was refused: %v", victim, lateOutcome.err)
	}
	t.Logf("direct writes to node %d: %d acknowledged, %d refused", victim, directAcks, directRefused)

	d := c.waitActive(ctx, survivors[0], "fence", 30*time.Second)
	t.Logf("node %d is active again %v after it resumed", victim, time.Since(resumed))
	require.Equal(t, leader, d.Partitions[p].Leader, "the old leader rejoins as a follower")
	all := acks.all()
	for _, via := range c.ids() {
		requireAckedOnce(t, c.readPartition(ctx, via, "fence", p), all)
	}
	c.waitSameLog(ctx, leader, victim, "fence", p)
}

// docs/phase-7-processes.md § Failure detection, across a network
// partition: a leader cut off from both other nodes acknowledges nothing
// (its followers cannot confirm a write) while the majority fails the
// partition over and takes writes. § Proving a prefix: when the network
// heals, every replica converges on the new leader's records; what the
// isolated leader had written and never acknowledged is cut from its log
// into a quarantine file, and the journal's "cuts offsets" entry names it.
func TestClusterNetworkPartitionFencesIsolatedLeader(t *testing.T) {
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter, proxies: true})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "split", 3, 3)
	p, victim, epoch := c.victimOutsideController(ctx, "split")
	majority := c.ids(victim)

	var acks ackLog
	for i := range 5 {
		a, err := c.produceTo(ctx, majority[i%2], "split", p, fmt.Sprintf("before-%d", i), 10*time.Second)
		require.NoError(t, err)
		acks.add(a)
	}

	c.isolate(victim)
	isolated := time.Now()
	// Writes straight to the isolated leader, before the majority fences
	// it: it appends them and cannot replicate them, so it refuses them.
	var unacked []string
	for i := range 3 {
		value := fmt.Sprintf("isolated-%d", i)
		_, err := c.produceTo(ctx, victim, "split", p, value, 3*time.Second)
		require.Error(t, err, "the isolated leader acknowledged %q", value)
		unacked = append(unacked, value)
	}
	t.Logf("%d writes to the isolated leader refused, the last %v after the cut", len(unacked), time.Since(isolated))

	leader, newEpoch := c.waitNewLeader(ctx, majority[0], "split", p, epoch, majority, 30*time.Second)
	took := c.failedOverAt(ctx, majority[0], "split", p, newEpoch).Sub(isolated)
	t.Logf("partition %d: node %d leads at epoch %d, %v after node %d was cut off", p, leader, newEpoch, took, victim)
	require.Less(t, took, failoverBound, "the failover took too long")
	// Fenced: a write straight to it still fails (or hangs until the
	// client gives up).
	for i := range 2 {
		value := fmt.Sprintf("fenced-%d", i)
		_, err := c.produceTo(ctx, victim, "split", p, value, 3*time.Second)
		require.Error(t, err, "the fenced leader acknowledged %q", value)
		unacked = append(unacked, value)
	}
	for i := range 10 {
		a, err := c.produceRetry(ctx, majority, "split", p, func(attempt int) string { return fmt.Sprintf("majority-%d-a%d", i, attempt) }, 100)
		require.NoError(t, err)
		acks.add(a)
	}

	c.rejoin(victim)
	healed := time.Now()
	c.waitActive(ctx, leader, "split", 30*time.Second)
	t.Logf("node %d is active again %v after the network healed", victim, time.Since(healed))
	all := acks.all()
	for _, via := range c.ids() {
		recs := c.readPartition(ctx, via, "split", p)
		requireAckedOnce(t, recs, all)
		for _, r := range recs {
			require.NotContains(t, unacked, string(r.Value), "a record no one acknowledged became readable")
		}
	}
	for _, id := range c.ids(leader) {
		c.waitSameLog(ctx, leader, id, "split", p)
	}

	// The isolated leader's unacknowledged records are in quarantine, and
	// the journal names the file.
	files := c.quarantined(victim, "split", p)
	require.Len(t, files, 1, "one cut, one quarantine file")
	var file string
	var cut []string
	for f, recs := range files {
		file, cut = f, values(recs)
	}
	require.Equal(t, unacked, cut, "the quarantine file holds the isolated leader's unacknowledged records")
	c.eventually(ctx, 10*time.Second, "the journal names the quarantine file", func() (bool, string) {
		entries, err := c.journal(ctx, leader)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range entries {
			if e.Quarantine == file && strings.Contains(e.Summary, "cuts offsets") && e.Broker == victim {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d entries, none names %s", len(entries), file)
	})
}
