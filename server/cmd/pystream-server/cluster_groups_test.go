package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// docs/kafka.md § Consumer groups: in a cluster of processes a group's
// membership lives on one node, the metadata group's leader. Every
// node's FindCoordinator names it, a JoinGroup reaching another node is
// NOT_COORDINATOR, and a kgo group consumer seeded with another node
// finds its way there, consumes and commits. When the coordinator's
// process is SIGKILLed, the consumer finds the new leader, joins its
// (empty) coordinator again and reads on from the committed offsets.
func TestClusterKafkaConsumerGroup(t *testing.T) {
	const partitions, per = 3, 5
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", partitions, 3)
	leader := c.controller(ctx, c.ids(), 30*time.Second)
	c.awaitCoordinator(ctx, t, c.ids(), leader)

	other := c.ids(leader)[0]
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.SessionTimeoutMillis, join.ProtocolType = "billing", 6000, "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	resp := c.kafkaRequest(ctx, t, other, join).(*kmsg.JoinGroupResponse)
	require.Equal(t, kerr.NotCoordinator.Code, resp.ErrorCode, "node %d does not coordinate groups", other)

	prod := c.kafkaClient(t, []int{other}, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(round int) {
		var recs []*kgo.Record
		for p := range partitions {
			for i := range per {
				recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(p), Value: fmt.Appendf(nil, "r%d-p%d-%d", round, p, i)})
			}
		}
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr(), "round %d", round)
	}
	cons := c.kafkaClient(t, []int{other}, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
	read := map[string]bool{}
	next := map[int32]int64{} // the next offset to read, by partition
	// consume reads until it holds every record value produced and has
	// committed each partition's end (a write retried across the
	// failover may have left copies of its records at later offsets).
	// A commit may fail while the client still names the killed
	// coordinator, and one after it joined the new coordinator again
	// starts from the committed offsets: it polls and commits until the
	// committed offsets are the ends.
	consume := func(want int) {
		adm := kadm.NewClient(c.kafkaClient(t, c.ids(leader))) // one that never cached a killed coordinator
		var why string
		for {
			require.NoError(t, ctx.Err(), "%d of %d records read; %s", len(read), want, why)
			pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
			cons.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
				read[string(r.Value)] = true
				next[r.Partition] = max(next[r.Partition], r.Offset+1)
			})
			pcancel()
			if len(read) < want {
				continue
			}
			ends, err := adm.ListEndOffsets(ctx, "events")
			if err != nil {
				why = "end offsets: " + err.Error()
				continue
			}
			if err := cons.CommitUncommittedOffsets(ctx); err != nil {
				why = "commit: " + err.Error()
				continue
			}
			committed, err := adm.FetchOffsets(ctx, "billing")
			if err != nil {
				// Metadata still lists the killed node, and kgo may send
				// its FindCoordinator there; the next try goes elsewhere.
				why = "fetch offsets: " + err.Error()
				continue
			}
			done := true
			for p := range int32(partitions) {
				o, _ := committed.Lookup("events", p)
				e, _ := ends.Lookup("events", p)
				if o.At != e.Offset {
					done, why = false, fmt.Sprintf("partition %d committed up to %d, its end is %d", p, o.At, e.Offset)
				}
			}
			if done {
				return
			}
		}
	}
	produce(0)
	consume(partitions * per)

	t.Logf("SIGKILL node %d, the group coordinator", leader)
	c.kill(leader)
	next2 := c.controller(ctx, c.ids(leader), 30*time.Second)
	c.awaitCoordinator(ctx, t, c.ids(leader), next2)
	produce(1)
	consume(2 * partitions * per)
}

// awaitCoordinator waits until every node of via names node id, at its
// registered Kafka address, as the coordinator of group "billing".
func (c *testCluster) awaitCoordinator(ctx context.Context, t *testing.T, via []int, id int) {
	t.Helper()
	for _, n := range via {
		c.eventually(ctx, 10*time.Second, fmt.Sprintf("node %d names node %d the group coordinator", n, id), func() (bool, string) {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorKey, req.CoordinatorKeys = "billing", []string{"billing"}
			r, err := c.kafkaTry(ctx, t, n, req)
			if err != nil {
				return false, err.Error()
			}
			resp := r.(*kmsg.FindCoordinatorResponse)
			code, node, host, port := resp.ErrorCode, resp.NodeID, resp.Host, resp.Port
			if len(resp.Coordinators) > 0 { // v4+
				k := resp.Coordinators[0]
				code, node, host, port = k.ErrorCode, k.NodeID, k.Host, k.Port
			}
			addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
			return code == 0 && int(node) == id && addr == c.node(id).kafkaAddr,
				fmt.Sprintf("code %d, node %d at %s", code, node, addr)
		})
	}
}

// docs/kafka.md § Deleting groups and offsets: in a cluster of processes
// the group coordinator deletes a group's offsets (DeleteGroups) and a
// partition's (OffsetDelete) through the metadata group; another node
// answers NOT_COORDINATOR and lists no groups, so that a client asking
// every node lists each group once. The deletions hold after every node
// is killed and started again.
func TestClusterKafkaDeleteGroups(t *testing.T) {
	c := startCluster(t, clusterOptions{failoverAfter: failoverAfter})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c.createTopic(ctx, 1, "events", 2, 3)
	leader := c.controller(ctx, c.ids(), 30*time.Second)
	c.awaitCoordinator(ctx, t, c.ids(), leader)
	other := c.ids(leader)[0]

	cl := c.kafkaClient(t, c.ids(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 0, Value: []byte("a")},
		&kgo.Record{Topic: "events", Partition: 1, Value: []byte("b")}).FirstErr())
	adm := kadm.NewClient(cl)
	var os kadm.Offsets
	os.AddOffset("events", 0, 1, -1)
	os.AddOffset("events", 1, 1, -1)
	for _, g := range []string{"billing", "audit"} {
		resp, err := adm.CommitOffsets(ctx, g, os)
		require.NoError(t, err)
		require.NoError(t, resp.Error())
	}

	counts := map[string]int{}
	for _, s := range cl.RequestSharded(ctx, kmsg.NewPtrListGroupsRequest()) {
		require.NoError(t, s.Err)
		for _, g := range s.Resp.(*kmsg.ListGroupsResponse).Groups {
			counts[g.Group]++
		}
	}
	require.Equal(t, map[string]int{"billing": 1, "audit": 1}, counts)

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"billing"}
	require.Equal(t, kerr.NotCoordinator.Code, c.kafkaRequest(ctx, t, other, del).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode)
	deleted, err := adm.DeleteGroups(ctx, "billing")
	require.NoError(t, err)
	require.NoError(t, deleted["billing"].Err)
	offs, err := adm.DeleteOffsets(ctx, "audit", kadm.TopicsSet{"events": {1: {}}})
	require.NoError(t, err)
	require.NoError(t, offs.Error())

	for _, id := range c.ids() {
		c.kill(id)
	}
	for _, id := range c.ids() { // all up before any is ready: readiness needs a majority
		require.NoError(t, c.spawn(c.node(id)))
		require.NoError(t, c.waitListening(c.node(id)))
	}
	for _, id := range c.ids() {
		c.waitReady(ctx, id)
	}
	leader = c.controller(ctx, c.ids(), 30*time.Second)
	c.awaitCoordinator(ctx, t, c.ids(), leader)
	after := kadm.NewClient(c.kafkaClient(t, []int{leader}))
	var billing, audit kadm.OffsetResponses
	c.eventually(ctx, 20*time.Second, "the coordinator answers OffsetFetch", func() (bool, string) {
		billing, err = after.FetchOffsets(ctx, "billing")
		if err == nil {
			audit, err = after.FetchOffsets(ctx, "audit")
		}
		return err == nil, fmt.Sprint(err)
	})
	_, ok := billing.Lookup("events", 0)
	require.False(t, ok, "the deleted group's offsets stay gone: %v", billing)
	_, ok = audit.Lookup("events", 1)
	require.False(t, ok, "the deleted partition's offset stays gone: %v", audit)
	o, ok := audit.Lookup("events", 0)
	require.True(t, ok)
	require.Equal(t, int64(1), o.At)
}
