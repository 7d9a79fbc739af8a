package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaClient is a kgo client of the cluster's Kafka listeners, seeded
// with the given nodes, retrying and refreshing its metadata quickly.
func (c *testCluster) kafkaClient(t *testing.T, seeds []int, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	var addrs []string
	for _, id := range seeds {
		addrs = append(addrs, c.node(id).kafkaAddr)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.MetadataMinAge(50 * time.Millisecond), kgo.FetchMaxWait(250 * time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// kafkaRequest sends req to node id's Kafka listener alone.
func (c *testCluster) kafkaRequest(ctx context.Context, t *testing.T, id int, req kmsg.Request) kmsg.Response {
	t.Helper()
	resp, err := c.kafkaTry(ctx, t, id, req)
	require.NoError(t, err, "request to node %d", id)
	return resp
}

// kafkaTry is kafkaRequest returning its error: a node's Kafka listener
// opens a moment after its HTTP API answers.
func (c *testCluster) kafkaTry(ctx context.Context, t *testing.T, id int, req kmsg.Request) (kmsg.Response, error) {
	t.Helper()
	cl := c.kafkaClient(t, []int{id})
	return cl.SeedBrokers()[0].Request(ctx, req)
}

// docs/phase-7-processes.md § Kafka: each node serves its own broker's
// Kafka listener on its own port; Metadata, from any node, lists every
// node at the address it registered, and DescribeCluster names the node
// leading the metadata group as the controller; a request for a partition the node
// does not lead is NOT_LEADER_OR_FOLLOWER (never forwarded). kgo, seeded
// with one node, produces to three partitions with replication factor 3
// and consumes from earliest; the leader of a partition is SIGKILLed
// between two rounds of writes, and after the failover producer and
// consumer carry on against the new leader's node: each offset is read
// exactly once, in order, and every acknowledged record is read back at
// its acknowledged offset.
func TestClusterKafkaProduceConsumeFailover(t *testing.T) {
	const partitions, rounds, perPartition = 3, 6, 5
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", partitions, 3)

	// Metadata lists the three nodes' real addresses, whichever node is
	// asked (a node learns the others' registrations through Raft).
	want := map[int32]string{}
	for _, id := range c.ids() {
		want[int32(id)] = c.node(id).kafkaAddr
	}
	for _, via := range c.ids() {
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d's Metadata lists every node", via), func() (bool, string) {
			r, err := c.kafkaTry(ctx, t, via, kmsg.NewPtrMetadataRequest())
			if err != nil {
				return false, err.Error()
			}
			resp := r.(*kmsg.MetadataResponse)
			got := map[int32]string{}
			for _, b := range resp.Brokers {
				got[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
			}
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("brokers %v, want %v", got, want)
		})
	}

	// DescribeCluster, from any node, names the node that leads the
	// metadata group as the controller, as the nodes report it over HTTP.
	ctl := c.controller(ctx, c.ids(), 10*time.Second)
	for _, via := range c.ids() {
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d's DescribeCluster names controller %d", via, ctl), func() (bool, string) {
			r, err := c.kafkaTry(ctx, t, via, kmsg.NewPtrDescribeClusterRequest())
			if err != nil {
				return false, err.Error()
			}
			resp := r.(*kmsg.DescribeClusterResponse)
			return resp.ErrorCode == 0 && resp.ControllerID == int32(ctl) && len(resp.Brokers) == len(want),
				fmt.Sprintf("code %d, controller %d, %d brokers", resp.ErrorCode, resp.ControllerID, len(resp.Brokers))
		})
	}

	// A node that does not lead partition 0 answers NOT_LEADER_OR_FOLLOWER.
	d, err := c.topic(ctx, 1, "events")
	require.NoError(t, err)
	other := c.ids(d.Partitions[0].Leader)[0]
	lo := kmsg.NewPtrListOffsetsRequest()
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic, lt.Partitions = "events", []kmsg.ListOffsetsRequestTopicPartition{lp}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	resp := c.kafkaRequest(ctx, t, other, lo).(*kmsg.ListOffsetsResponse)
	require.Equal(t, kerr.NotLeaderForPartition.Code, resp.Topics[0].Partitions[0].ErrorCode, "node %d does not lead partition 0", other)

	// A consumer from earliest, running through the whole test.
	type got struct {
		partition int32
		offset    int64
		value     string
	}
	var mu sync.Mutex
	var consumed []got
	cons := c.kafkaClient(t, c.ids(), kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	consCtx, stopConsuming := context.WithCancel(ctx)
	consDone := make(chan struct{})
	go func() {
		defer close(consDone)
		for consCtx.Err() == nil {
			cons.PollFetches(consCtx).EachRecord(func(r *kgo.Record) {
				mu.Lock()
				consumed = append(consumed, got{r.Partition, r.Offset, string(r.Value)})
				mu.Unlock()
			})
		}
	}()
	defer func() { stopConsuming(); <-consDone }()

	prod := c.kafkaClient(t, []int{1}, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	acked := map[string]got{}
	killed := 0
	for round := range rounds {
		if round == 2 {
			p, victim, _ := c.victimOutsideController(ctx, "events")
			t.Logf("round %d: SIGKILL node %d, leader of partition %d", round, victim, p)
			c.kill(victim)
			killed = victim
		}
		var recs []*kgo.Record
		for p := range partitions {
			for i := range perPartition {
				recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(p), Value: fmt.Appendf(nil, "r%d-p%d-%d", round, p, i)})
			}
		}
		start := time.Now()
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr(), "round %d", round)
		t.Logf("round %d acknowledged in %v", round, time.Since(start).Round(time.Millisecond))
		for _, r := range recs {
			acked[string(r.Value)] = got{r.Partition, r.Offset, string(r.Value)}
		}
	}
	d, err = c.topic(ctx, c.ids(killed)[0], "events")
	require.NoError(t, err)
	for _, ps := range d.Partitions {
		require.NotEqual(t, killed, ps.Leader, "partition %d failed over", ps.Partition)
	}

	// The consumer reads each partition's offsets once each, in order,
	// up to the last acknowledged one, and finds every acknowledged record
	// at its offset. A write answered with an error while the killed
	// follower was still in an active set (NOT_ENOUGH_REPLICAS_AFTER_APPEND)
	// was kept by its leader and retried by kgo: its copies are records of
	// their own at other offsets, as in Kafka without idempotent producers.
	last := map[int32]int64{}
	for _, a := range acked {
		last[a.partition] = max(last[a.partition], a.offset)
	}
	read := func() map[int32]map[int64]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[int32]map[int64]string{}
		next := map[int32]int64{}
		for _, g := range consumed {
			require.Equal(t, next[g.partition], g.offset, "partition %d is read in offset order, each offset once", g.partition)
			next[g.partition]++
			if out[g.partition] == nil {
				out[g.partition] = map[int64]string{}
			}
			out[g.partition][g.offset] = g.value
		}
		return out
	}
	c.eventually(ctx, 15*time.Second, "the consumer reads every acknowledged record", func() (bool, string) {
		byOffset := read()
		for p, off := range last {
			if _, ok := byOffset[p][off]; !ok {
				return false, fmt.Sprintf("partition %d: %d records read, the last acknowledged is at %d", p, len(byOffset[p]), off)
			}
		}
		return true, ""
	})
	byOffset := read()
	for v, a := range acked {
		require.Equal(t, v, byOffset[a.partition][a.offset], "partition %d offset %d holds its acknowledged record", a.partition, a.offset)
	}
}
