package kafka_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/kafka"
)

// commitSimple commits offsets for group without membership (kadm, a
// simple commit) on partitions of "events", next offset off each.
func commitSimple(t *testing.T, adm *kadm.Client, groupID string, off int64, partitions ...int32) {
	t.Helper()
	var os kadm.Offsets
	for _, p := range partitions {
		os.AddOffset("events", p, off, -1)
	}
	resp, err := adm.CommitOffsets(ctx(t), groupID, os)
	require.NoError(t, err)
	require.NoError(t, resp.Error())
}

// fetchOffset is the offset group committed on events/partition, as a raw
// OffsetFetch answers it (-1: none).
func fetchOffset(t *testing.T, nc net.Conn, groupID string, partition int32) int64 {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 7, groupID
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "events", Partitions: []int32{partition}}}
	resp := roundTrip(t, nc, req, 7).(*kmsg.OffsetFetchResponse)
	require.Zero(t, resp.ErrorCode)
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	return resp.Topics[0].Partitions[0].Offset
}

// listedOnce asks every broker's listener for its groups (as kadm,
// sarama and librdkafka do) and counts each group's listings.
func listedOnce(t *testing.T, cl *kgo.Client) map[string]int {
	t.Helper()
	counts := map[string]int{}
	shards := cl.RequestSharded(ctx(t), kmsg.NewPtrListGroupsRequest())
	require.Len(t, shards, 3, "every broker asked")
	for _, s := range shards {
		require.NoError(t, s.Err)
		for _, g := range s.Resp.(*kmsg.ListGroupsResponse).Groups {
			counts[g.Group]++
		}
	}
	return counts
}

// TestKafkaDeleteGroupsKadm: across three brokers each group is listed
// once; kadm deletes a group without members, whose offsets are then
// gone (OffsetFetch answers -1), and not one that does not exist; kadm
// deletes one partition's offset, the others stay.
func TestKafkaDeleteGroupsKadm(t *testing.T) {
	f := start(t, 3, 2, 1)
	cl := f.client(t)
	adm := kadm.NewClient(cl)
	f.produceEach(t, 2, 1)
	commitSimple(t, adm, "billing", 1, 0, 1)
	commitSimple(t, adm, "audit", 0, 0, 1)

	require.Equal(t, map[string]int{"billing": 1, "audit": 1}, listedOnce(t, cl))
	listed, err := adm.ListGroups(ctx(t))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"audit", "billing"}, listed.Groups())

	deleted, err := adm.DeleteOffsets(ctx(t), "audit", kadm.TopicsSet{"events": {1: {}}, "nope": {0: {}}})
	require.NoError(t, err)
	e, ok := deleted.Lookup("events", 1)
	require.True(t, ok)
	require.NoError(t, e)
	e, ok = deleted.Lookup("nope", 0)
	require.True(t, ok)
	require.ErrorIs(t, e, kerr.UnknownTopicOrPartition)
	nc := f.dial(t, 2)
	require.Equal(t, int64(-1), fetchOffset(t, nc, "audit", 1))
	require.Equal(t, int64(0), fetchOffset(t, nc, "audit", 0), "the other partition's offset stays")

	resp, err := adm.DeleteGroups(ctx(t), "billing", "nobody")
	require.NoError(t, err)
	require.NoError(t, resp["billing"].Err)
	require.ErrorIs(t, resp["nobody"].Err, kerr.GroupIDNotFound)
	require.Equal(t, int64(-1), fetchOffset(t, nc, "billing", 0))
	require.Equal(t, int64(-1), fetchOffset(t, nc, "billing", 1))
	require.Equal(t, map[string]int{"audit": 1}, listedOnce(t, cl))
	resp, err = adm.DeleteGroups(ctx(t), "billing")
	require.NoError(t, err)
	require.ErrorIs(t, resp["billing"].Err, kerr.GroupIDNotFound, "deleted already")

	commitSimple(t, adm, "billing", 0, 0)
	require.Equal(t, int64(0), fetchOffset(t, nc, "billing", 0), "a deleted group commits afresh, lower too")
}

// TestKafkaDeleteGroupsSarama: sarama's ClusterAdmin lists each group
// once across three brokers, deletes a partition's offset and a group.
func TestKafkaDeleteGroupsSarama(t *testing.T) {
	f := start(t, 3, 2, 1)
	adm := kadm.NewClient(f.client(t))
	f.produceEach(t, 2, 1)
	commitSimple(t, adm, "billing", 1, 0, 1)
	commitSimple(t, adm, "audit", 1, 0)
	sa, err := sarama.NewClusterAdminFromClient(f.saramaClient(t))
	require.NoError(t, err)

	groups, err := sa.ListConsumerGroups()
	require.NoError(t, err)
	require.Len(t, groups, 2)
	require.Contains(t, groups, "billing")
	require.Contains(t, groups, "audit")

	require.NoError(t, sa.DeleteConsumerGroupOffset("billing", "events", 1))
	nc := f.dial(t, 1)
	require.Equal(t, int64(-1), fetchOffset(t, nc, "billing", 1))
	require.Equal(t, int64(1), fetchOffset(t, nc, "billing", 0))

	require.NoError(t, sa.DeleteConsumerGroup("billing"))
	require.Equal(t, int64(-1), fetchOffset(t, nc, "billing", 0))
	require.ErrorIs(t, sa.DeleteConsumerGroup("billing"), sarama.ErrGroupIDNotFound)
	groups, err = sa.ListConsumerGroups()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"audit": ""}, groups)
}

// TestKafkaDeleteGroupsRaw: DeleteGroups and OffsetDelete refusals, over
// a raw connection: a group with a member (a kgo consumer) is
// NON_EMPTY_GROUP and keeps its offsets, and OffsetDelete refuses the
// topic its member consumes (GROUP_SUBSCRIBED_TO_TOPIC) while deleting
// another's; an unknown group is GROUP_ID_NOT_FOUND, an invalid id
// INVALID_GROUP_ID; once the member leaves, the group is deleted.
func TestKafkaDeleteGroupsRaw(t *testing.T) {
	f := startGroups(t, 1, 2, 1)
	require.NoError(t, f.c.CreateTopic("other", 1, 1))
	f.produceEach(t, 2, 1)
	require.NoError(t, f.c.CommitOffset("billing", "other", 0, 0))
	l := newLedger()
	m := f.groupMember(t, "m1", "billing", l)
	l.awaitCommitted(t, map[int32]int64{0: 1, 1: 1}, 10*time.Second)
	for p := range 2 {
		off, ok, err := f.c.LoadOffset("billing", "events", p)
		require.NoError(t, err)
		require.True(t, ok)
		require.EqualValues(t, 1, off, "partition %d's committed offset", p)
	}
	nc := f.dial(t, 1)

	del := func(groups ...string) map[string]int16 {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Version, req.Groups = 2, groups
		resp := roundTrip(t, nc, req, 2).(*kmsg.DeleteGroupsResponse)
		out := map[string]int16{}
		for _, g := range resp.Groups {
			out[g.Group] = g.ErrorCode
		}
		return out
	}
	offsetDelete := func(groupID string, topics ...string) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = groupID
		for _, tp := range topics {
			req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: tp, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}})
		}
		return roundTrip(t, nc, req, 0).(*kmsg.OffsetDeleteResponse)
	}

	require.Equal(t, map[string]int16{"billing": kerr.NonEmptyGroup.Code, "nobody": kerr.GroupIDNotFound.Code, "bad id": kerr.InvalidGroupID.Code},
		del("billing", "nobody", "bad id"))
	require.Equal(t, int64(1), fetchOffset(t, nc, "billing", 0), "a group with members keeps its offsets")

	od := offsetDelete("billing", "events", "other")
	require.Zero(t, od.ErrorCode)
	codes := map[string]int16{}
	for _, tp := range od.Topics {
		codes[tp.Topic] = tp.Partitions[0].ErrorCode
	}
	require.Equal(t, map[string]int16{"events": kerr.GroupSubscribedToTopic.Code, "other": 0}, codes)
	require.Equal(t, int64(1), fetchOffset(t, nc, "billing", 0), "the member's topic keeps its offsets")
	_, ok, err := f.c.LoadOffset("billing", "other", 0)
	require.NoError(t, err)
	require.False(t, ok, "a topic no member consumes loses its offset")
	require.Equal(t, kerr.GroupIDNotFound.Code, offsetDelete("nobody", "events").ErrorCode)
	require.Equal(t, kerr.InvalidGroupID.Code, offsetDelete("bad id", "events").ErrorCode)

	m.leave()
	require.Eventually(t, func() bool { _, ok := f.groups.Describe("billing"); return !ok }, 10*time.Second, 20*time.Millisecond)
	od = offsetDelete("billing", "events")
	require.Zero(t, od.ErrorCode)
	require.Zero(t, od.Topics[0].Partitions[0].ErrorCode, "an empty group subscribes to nothing")
	require.Equal(t, int64(-1), fetchOffset(t, nc, "billing", 0))
	require.Equal(t, map[string]int16{"billing": 0}, del("billing"))
	require.Equal(t, int64(-1), fetchOffset(t, nc, "billing", 1))
}

// TestKafkaDeleteGroupsNotCoordinator: in a cluster of processes a node
// that does not coordinate groups answers DeleteGroups and OffsetDelete
// NOT_COORDINATOR, deleting nothing, and lists no groups.
func TestKafkaDeleteGroupsNotCoordinator(t *testing.T) {
	f := start(t, 1, 1, 1)
	require.NoError(t, f.c.CommitOffset("billing", "events", 0, 0))
	var coordinator atomic.Int32
	coordinator.Store(2)
	_, node := f.nodeListener(t, &coordinator)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version, req.Groups = 1, []string{"billing"}
	resp := roundTrip(t, node, req, 1).(*kmsg.DeleteGroupsResponse)
	require.Equal(t, kerr.NotCoordinator.Code, resp.Groups[0].ErrorCode)
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group, od.Topics = "billing", []kmsg.OffsetDeleteRequestTopic{{Topic: "events", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	require.Equal(t, kerr.NotCoordinator.Code, roundTrip(t, node, od, 0).(*kmsg.OffsetDeleteResponse).ErrorCode)
	list := roundTrip(t, node, kmsg.NewPtrListGroupsRequest(), 0).(*kmsg.ListGroupsResponse)
	require.Empty(t, list.Groups)
	_, ok, err := f.c.LoadOffset("billing", "events", 0)
	require.NoError(t, err)
	require.True(t, ok)
}

// TestKafkaDeleteGroupsSurviveRestart: a group deleted and an offset
// deleted through the listener stay deleted when the cluster is opened
// again.
func TestKafkaDeleteGroupsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	c, err := cluster.Open(dir)
	require.NoError(t, err)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	require.NoError(t, c.CreateTopic("events", 2, 1))
	srv, err := kafka.New(embedded(c), kafka.Config{Host: "127.0.0.1"})
	require.NoError(t, err)
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	srv.Reconcile()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr(1)))
	require.NoError(t, err)
	adm := kadm.NewClient(cl)
	commitSimple(t, adm, "billing", 0, 0, 1)
	commitSimple(t, adm, "audit", 0, 0, 1)
	resp, err := adm.DeleteGroups(ctx(t), "billing")
	require.NoError(t, err)
	require.NoError(t, resp["billing"].Err)
	deleted, err := adm.DeleteOffsets(ctx(t), "audit", kadm.TopicsSet{"events": {1: {}}})
	require.NoError(t, err)
	require.NoError(t, deleted.Error())
	cl.Close()
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, c.Close())

	c, err = cluster.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	list, err := c.ListAllOffsets()
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "audit", list[0].ConsumerID)
	require.Equal(t, 0, list[0].Partition)
}

// TestKafkaDeleteGroupsSASL: deleting a group or its offsets is an admin
// request: a writer is answered GROUP_AUTHORIZATION_FAILED and deletes
// nothing; an admin deletes.
func TestKafkaDeleteGroupsSASL(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	store, err := s.c.OffsetStore()
	require.NoError(t, err)
	require.NoError(t, store.Commit("billing", "events", 0, 0))

	writer := kadm.NewClient(s.as(t, auth.MechanismPlain, "writer"))
	resp, err := writer.DeleteGroups(ctx(t), "billing")
	require.NoError(t, err)
	require.ErrorIs(t, resp["billing"].Err, kerr.GroupAuthorizationFailed)
	_, err = writer.DeleteOffsets(ctx(t), "billing", kadm.TopicsSet{"events": {0: {}}})
	require.ErrorIs(t, err, kerr.GroupAuthorizationFailed)
	_, ok, err := s.c.LoadOffset("billing", "events", 0)
	require.NoError(t, err)
	require.True(t, ok, "a writer deletes nothing")

	ops := kadm.NewClient(s.as(t, auth.MechanismPlain, "ops"))
	resp, err = ops.DeleteGroups(ctx(t), "billing")
	require.NoError(t, err)
	require.NoError(t, resp["billing"].Err)
	_, ok, err = s.c.LoadOffset("billing", "events", 0)
	require.NoError(t, err)
	require.False(t, ok)
}
