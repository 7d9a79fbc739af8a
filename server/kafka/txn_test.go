package kafka_test

import (
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/topic/envelope"
)

// TestKafkaTxnRaw walks one committed and one aborted transaction over
// raw frames (KIP-98): FindCoordinator for a transactional id names the
// broker asked; InitProducerID gives the id a producer id at epoch 0; a
// transactional batch is stored with Transactional envelopes; while the
// transaction is open, read_committed stops at its first offset (the
// last stable offset) and OffsetFetch RequireStable answers
// UNSTABLE_OFFSET_COMMIT for the offset it holds; after EndTxn the fetch
// carries the transaction's batch (attribute bit 4, its producer id,
// epoch and base sequence) and its marker as a control batch, and an
// aborted transaction is listed in AbortedTransactions; Describe and
// ListTransactions show the states by Kafka's names.
func TestKafkaTxnRaw(t *testing.T) {
	f := start(t, 3, 2, 3)
	nc := f.dial(t, 2)

	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorType, find.CoordinatorKeys = 4, 1, []string{"tx"}
	fc := roundTrip(t, nc, find, 4).(*kmsg.FindCoordinatorResponse).Coordinators[0]
	require.Zero(t, fc.ErrorCode)
	require.EqualValues(t, 2, fc.NodeID, "the broker asked coordinates")

	p, code := initTxn(t, nc, "tx")
	require.Zero(t, code)
	require.GreaterOrEqual(t, p.pid, int64(0))
	require.Zero(t, p.epoch)

	require.Equal(t, map[int32]int16{0: 0}, p.addPartitions("events", 0))
	require.Zero(t, p.addOffsets("g"))
	st, err := f.c.Status("events", 0)
	var recs []log.Record
	require.NoError(t, err)
	leader := f.dial(t, st.Leader)
	onLeader := *p
	onLeader.nc = leader
	require.Zero(t, onLeader.produce(0, 0, []byte("c1"), []byte("c2")).ErrorCode)
	require.Zero(t, p.commitOffset("g", -1, "", 0, 2))

	recs, err = f.c.ReadCommitted("events", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		env := envelope.Decode(r.Payload)
		require.True(t, env.Transactional, "stored as the transaction's")
		require.Equal(t, p.pid, env.Producer.ID)
	}

	open := fetchAt(t, leader, 1, 0, 0)
	require.Zero(t, open.ErrorCode)
	require.EqualValues(t, 0, open.LastStableOffset, "the open transaction holds the last stable offset at its first record")
	require.EqualValues(t, 2, open.HighWatermark)
	require.Empty(t, open.RecordBatches, "read_committed reads nothing past the last stable offset")
	dirty := batchesOf(t, fetchAt(t, leader, 0, 0, 0).RecordBatches)
	require.Len(t, dirty, 1)
	require.Equal(t, int16(0x10), dirty[0].Attributes&0x30, "transactional, not control")
	require.Equal(t, p.pid, dirty[0].ProducerID)
	require.Zero(t, dirty[0].ProducerEpoch)
	require.Zero(t, dirty[0].FirstSequence)
	require.Equal(t, kerr.UnstableOffsetCommit.Code, fetchStable(t, nc, "g", 0).ErrorCode, "a pending transactional offset")

	described := describeTxns(t, nc, "tx", "nobody")
	require.Zero(t, described[0].ErrorCode)
	require.Equal(t, "Ongoing", described[0].State)
	require.Equal(t, p.pid, described[0].ProducerID)
	require.EqualValues(t, 60_000, described[0].TimeoutMillis)
	require.Positive(t, described[0].StartTimestamp)
	require.Len(t, described[0].Topics, 1)
	require.Equal(t, []int32{0}, described[0].Topics[0].Partitions)
	require.Equal(t, kerr.TransactionalIDNotFound.Code, described[1].ErrorCode)

	// One broker lists the transactions, so a client asking every broker
	// sees each once: the lowest-numbered available.
	for _, id := range []int{2, 3} {
		other := listTxns(t, f.dial(t, id), nil, nil, -1)
		require.Zero(t, other.ErrorCode)
		require.Empty(t, other.TransactionStates, "broker %d lists nothing", id)
	}
	lister := f.dial(t, 1)
	listed := listTxns(t, lister, []string{"Ongoing", "Bogus"}, nil, -1)
	require.Zero(t, listed.ErrorCode)
	require.Equal(t, []string{"Bogus"}, listed.UnknownStateFilters)
	require.Len(t, listed.TransactionStates, 1)
	require.Equal(t, "tx", listed.TransactionStates[0].TransactionalID)
	require.Empty(t, listTxns(t, lister, nil, []int64{p.pid + 1000}, -1).TransactionStates, "filtered by producer id")
	require.Empty(t, listTxns(t, lister, nil, nil, time.Hour.Milliseconds()).TransactionStates, "none has run for an hour")

	require.Zero(t, p.end(true))
	done := fetchAt(t, leader, 1, 0, 0)
	require.Zero(t, done.ErrorCode)
	require.EqualValues(t, 3, done.LastStableOffset, "records and marker stable")
	require.Empty(t, done.AbortedTransactions)
	got := batchesOf(t, done.RecordBatches)
	require.Len(t, got, 2, "the transaction's batch, then its marker")
	require.EqualValues(t, 0, got[0].FirstOffset)
	require.Equal(t, int16(0x10), got[0].Attributes&0x30)
	require.Equal(t, "c2", string(got[0].records[1].Value))
	require.EqualValues(t, 2, got[1].FirstOffset)
	require.Equal(t, p.pid, got[1].ProducerID)
	require.EqualValues(t, -1, got[1].FirstSequence)
	requireControlRecord(t, got[1], 1)
	stable := fetchStable(t, nc, "g", 0)
	require.Zero(t, stable.ErrorCode)
	require.EqualValues(t, 2, stable.Offset, "committed with the transaction")

	require.Equal(t, map[int32]int16{0: 0}, p.addPartitions("events", 0))
	require.Zero(t, onLeader.produce(0, 2, []byte("a1")).ErrorCode)
	require.Zero(t, p.end(false))
	aborted := fetchAt(t, leader, 1, 0, 3)
	require.EqualValues(t, 5, aborted.LastStableOffset)
	require.Len(t, aborted.AbortedTransactions, 1)
	require.Equal(t, p.pid, aborted.AbortedTransactions[0].ProducerID)
	require.EqualValues(t, 3, aborted.AbortedTransactions[0].FirstOffset)
	got = batchesOf(t, aborted.RecordBatches)
	require.Len(t, got, 2)
	require.EqualValues(t, 2, got[0].FirstSequence)
	requireControlRecord(t, got[1], 0)
	require.Empty(t, fetchAt(t, leader, 0, 0, 3).AbortedTransactions, "read_uncommitted is told of none")
	require.Equal(t, "CompleteAbort", describeTxns(t, nc, "tx")[0].State)
	require.Zero(t, fetchStable(t, nc, "g", 0).ErrorCode)
}

// fetchStable is OffsetFetch v7 with RequireStable of groupID's offset
// on events/partition.
func fetchStable(t *testing.T, nc net.Conn, groupID string, partition int32) kmsg.OffsetFetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, groupID, true
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "events", Partitions: []int32{partition}}}
	resp := roundTrip(t, nc, req, 7).(*kmsg.OffsetFetchResponse)
	require.Zero(t, resp.ErrorCode)
	return resp.Topics[0].Partitions[0]
}

// TestKafkaTxnRefusals pins the coordinator's refusals as Kafka's codes:
// an older epoch is PRODUCER_FENCED from the version that has the code
// (KIP-588) and INVALID_PRODUCER_EPOCH before it (TxnOffsetCommit never
// gained it); an unknown transactional id INVALID_PRODUCER_ID_MAPPING; an
// end with no transaction open, and offsets of a group not added,
// INVALID_TXN_STATE; a timeout outside 1 ms..15 min
// INVALID_TRANSACTION_TIMEOUT; an empty id INVALID_REQUEST; an unknown
// partition UNKNOWN_TOPIC_OR_PARTITION with the others
// OPERATION_NOT_ATTEMPTED; a transactional batch without a producer id
// CORRUPT_MESSAGE; a v3 commit naming a member of a group without members
// UNKNOWN_MEMBER_ID.
func TestKafkaTxnRefusals(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	old, code := initTxn(t, nc, "tx")
	require.Zero(t, code)
	require.Equal(t, kerr.InvalidTxnState.Code, old.end(true), "no transaction open")
	require.Zero(t, old.addOffsets("g"))
	require.Equal(t, kerr.InvalidTxnState.Code, old.commitOffset("h", -1, "", 0, 0), "group h was not added")
	require.Equal(t, kerr.UnknownMemberID.Code, old.commitOffset("g", 3, "m", 0, 0), "no member m in g")
	require.Zero(t, old.commitOffset("g", -1, "", 0, 0), "no member named: not checked against the group")

	cur := *old
	require.Zero(t, cur.init(4, 60_000), "a new producer with the same id")
	require.Equal(t, old.pid, cur.pid)
	require.Greater(t, cur.epoch, old.epoch, "fencing the old one (its open transaction aborted at an epoch of its own)")
	for _, v := range []int16{0, 1, 2, 3} {
		old.v = v
		fenced := kerr.InvalidProducerEpoch.Code
		if v >= 2 {
			fenced = kerr.ProducerFenced.Code
		}
		require.Equal(t, fenced, old.addPartitions("events", 0)[0], "AddPartitionsToTxn v%d", v)
		require.Equal(t, fenced, old.addOffsets("g"), "AddOffsetsToTxn v%d", v)
		require.Equal(t, fenced, old.end(false), "EndTxn v%d", v)
		require.Equal(t, kerr.InvalidProducerEpoch.Code, old.commitOffset("g", -1, "", 0, 0), "TxnOffsetCommit v%d", v)
	}
	stale := *old
	require.Equal(t, kerr.InvalidProducerEpoch.Code, stale.init(3, 60_000), "KIP-360 with an old epoch, v3")
	require.Equal(t, kerr.ProducerFenced.Code, stale.init(4, 60_000), "v4")

	unknown := &txnProducer{t: t, nc: nc, id: "nobody", pid: cur.pid, epoch: 0, v: 3}
	require.Equal(t, kerr.InvalidProducerIDMapping.Code, unknown.addPartitions("events", 0)[0])
	require.Equal(t, kerr.InvalidProducerIDMapping.Code, unknown.end(true))
	other := &txnProducer{t: t, nc: nc, id: "tx", pid: cur.pid + 1, epoch: cur.epoch, v: 3}
	require.Equal(t, kerr.InvalidProducerIDMapping.Code, other.end(true), "another producer id")

	for _, ms := range []int32{0, -5, int32((16 * time.Minute).Milliseconds())} {
		bad := &txnProducer{t: t, nc: nc, id: "slow", pid: -1, epoch: -1}
		require.Equal(t, kerr.InvalidTransactionTimeout.Code, bad.init(4, ms), "timeout %d ms", ms)
	}
	empty := &txnProducer{t: t, nc: nc, id: "", pid: -1, epoch: -1}
	require.Equal(t, kerr.InvalidRequest.Code, empty.init(4, 60_000))

	codes := cur.addTopics(map[string][]int32{"events": {0, 7}, "nope": {0}})
	require.Equal(t, map[string]map[int32]int16{
		"events": {0: kerr.OperationNotAttempted.Code, 7: kerr.UnknownTopicOrPartition.Code},
		"nope":   {0: kerr.UnknownTopicOrPartition.Code},
	}, codes)
	require.Equal(t, "Empty", describeTxns(t, nc, "tx")[0].State, "nothing was added")
	require.Equal(t, kerr.InvalidGroupID.Code, cur.addOffsets("not a group!"))

	require.Equal(t, kerr.CorruptMessage.Code, roundTrip(t, nc, produceRequest(9, producerBatchOf(t, -1, -1, -1, 0x10, []byte("x"))), 9).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode,
		"a transactional batch without a producer id")
}

// TestKafkaTxnNotCoordinator: in a cluster of processes a transactional
// id is coordinated where groups are: FindCoordinator for one names that
// node, and a transaction request reaching another node is
// NOT_COORDINATOR (ListTransactions there answers an empty list).
func TestKafkaTxnNotCoordinator(t *testing.T) {
	f := start(t, 1, 1, 1)
	var coordinator atomic.Int32
	coordinator.Store(2)
	_, node := f.nodeListener(t, &coordinator)

	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorType, find.CoordinatorKeys = 4, 1, []string{"tx"}
	fc := roundTrip(t, node, find, 4).(*kmsg.FindCoordinatorResponse).Coordinators[0]
	require.Zero(t, fc.ErrorCode)
	require.EqualValues(t, 2, fc.NodeID)

	p := &txnProducer{t: t, nc: node, id: "tx", pid: -1, epoch: -1, v: 3}
	require.Equal(t, kerr.NotCoordinator.Code, p.init(4, 60_000))
	p.pid, p.epoch = 1, 0
	require.Equal(t, kerr.NotCoordinator.Code, p.addPartitions("events", 0)[0])
	require.Equal(t, kerr.NotCoordinator.Code, p.addOffsets("g"))
	require.Equal(t, kerr.NotCoordinator.Code, p.commitOffset("g", -1, "", 0, 0))
	require.Equal(t, kerr.NotCoordinator.Code, p.end(true))
	require.Equal(t, kerr.NotCoordinator.Code, describeTxns(t, node, "tx")[0].ErrorCode)
	listed := listTxns(t, node, nil, nil, -1)
	require.Zero(t, listed.ErrorCode)
	require.Empty(t, listed.TransactionStates)

	coordinator.Store(1)
	_, code := initTxn(t, node, "tx")
	require.Zero(t, code, "served once this node coordinates")
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	coordinator.Store(2)
	require.Zero(t, roundTrip(t, node, init, 4).(*kmsg.InitProducerIDResponse).ErrorCode, "an idempotent producer's id comes from any node")
}

// TestKafkaTxnKgo: a kgo transactional producer commits one transaction
// and aborts another; a read_committed kgo consumer sees the committed
// records only, a read_uncommitted one both, and neither ever sees a
// marker as a record.
func TestKafkaTxnKgo(t *testing.T) {
	f := start(t, 3, 1, 3)
	prod := f.client(t, kgo.TransactionalID("kgo-tx"), kgo.DefaultProduceTopic("events"), kgo.TransactionTimeout(10*time.Second))
	send := func(commit bool, values ...string) {
		require.NoError(t, prod.BeginTransaction())
		for _, v := range values {
			require.NoError(t, prod.ProduceSync(ctx(t), &kgo.Record{Value: []byte(v)}).FirstErr())
		}
		require.NoError(t, prod.EndTransaction(ctx(t), kgo.TransactionEndTry(commit)))
	}
	send(true, "c1", "c2")
	send(false, "a1", "a2")
	send(true, "c3")
	// A last plain record tells the consumers that they have read
	// everything before it.
	plain := f.client(t, kgo.DefaultProduceTopic("events"))
	require.NoError(t, plain.ProduceSync(ctx(t), &kgo.Record{Value: []byte("end")}).FirstErr())

	read := func(isolation kgo.IsolationLevel) []string {
		cl := f.client(t, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(isolation))
		var got []string
		for i := 0; i < 100 && !slices.Contains(got, "end"); i++ {
			fs := cl.PollFetches(ctx(t))
			require.Empty(t, fs.Errors())
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		return got
	}
	require.Equal(t, []string{"c1", "c2", "c3", "end"}, read(kgo.ReadCommitted()))
	require.Equal(t, []string{"c1", "c2", "a1", "a2", "c3", "end"}, read(kgo.ReadUncommitted()))
}

// TestKafkaTxnAuthorization: transaction requests need write, and a
// transactional id is scoped by the principal's prefixes as a topic or a
// group is: a reader's InitProducerID with a transactional id is
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (an idempotent producer's is
// CLUSTER_AUTHORIZATION_FAILED), and so is a "pay" principal's for
// another id; its AddPartitionsToTxn naming a topic outside its prefixes
// adds nothing (TOPIC_AUTHORIZATION_FAILED, the others
// OPERATION_NOT_ATTEMPTED); ListTransactions shows it its own ids only
// and DescribeTransactions refuses the others.
func TestKafkaTxnAuthorization(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopic("payments", 1, 1))
	reader := s.dial(t, 1)
	plainAuth(t, reader, "reader")
	r := &txnProducer{t: t, nc: reader, id: "pay-tx", pid: -1, epoch: -1, v: 3}
	require.Equal(t, kerr.TransactionalIDAuthorizationFailed.Code, r.init(4, 60_000))

	ops := s.dial(t, 1)
	plainAuth(t, ops, "ops")
	_, code := initTxn(t, ops, "ops-tx")
	require.Zero(t, code)

	payer := s.dial(t, 1)
	plainAuth(t, payer, "payer")
	other := &txnProducer{t: t, nc: payer, id: "ops-tx", pid: -1, epoch: -1, v: 3}
	require.Equal(t, kerr.TransactionalIDAuthorizationFailed.Code, other.init(4, 60_000))
	p, code := initTxn(t, payer, "pay-tx")
	require.Zero(t, code)
	require.Equal(t, map[string]map[int32]int16{
		"payments": {0: kerr.OperationNotAttempted.Code},
		"events":   {0: kerr.TopicAuthorizationFailed.Code},
	}, p.addTopics(map[string][]int32{"payments": {0}, "events": {0}}))
	require.Equal(t, map[int32]int16{0: 0}, p.addPartitions("payments", 0))
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, p.addOffsets("ops-group"))

	listed := listTxns(t, payer, nil, nil, -1).TransactionStates
	require.Len(t, listed, 1)
	require.Equal(t, "pay-tx", listed[0].TransactionalID)
	got := describeTxns(t, payer, "pay-tx", "ops-tx")
	require.Len(t, got, 2)
	require.Zero(t, got[0].ErrorCode)
	require.Equal(t, "Ongoing", got[0].State)
	require.Equal(t, "ops-tx", got[1].TransactionalID)
	require.Equal(t, kerr.TransactionalIDAuthorizationFailed.Code, got[1].ErrorCode)
	require.Len(t, listTxns(t, ops, nil, nil, -1).TransactionStates, 2, "an admin without prefixes sees every id")
}

// TestKafkaFetchBatchesByProducer: a fetch sends one batch per run of
// records of one producer identity — records without a producer with
// -1s, an idempotent producer's with its id, epoch and base sequence, not
// transactional — so that a client checking sequences sees them as
// written.
func TestKafkaFetchBatchesByProducer(t *testing.T) {
	f := start(t, 1, 1, 1)
	nc := f.dial(t, 1)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	pid := roundTrip(t, nc, init, 4).(*kmsg.InitProducerIDResponse).ProducerID
	for _, b := range [][]byte{batchOf(t, []byte("p1"), []byte("p2")), producerBatchOf(t, pid, 0, 0, 0, []byte("i1"), []byte("i2")),
		producerBatchOf(t, pid, 0, 2, 0, []byte("i3")), batchOf(t, []byte("p3"))} {
		require.Zero(t, roundTrip(t, nc, produceRequest(9, b), 9).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
	}
	got := batchesOf(t, fetchAt(t, nc, 0, 0, 0).RecordBatches)
	require.Len(t, got, 3, "plain, the producer's run, plain")
	type batch struct {
		first, pid int64
		seq        int32
		n          int
	}
	var shapes []batch
	for _, b := range got {
		require.Zero(t, b.Attributes&0x30, "neither transactional nor control")
		shapes = append(shapes, batch{b.FirstOffset, b.ProducerID, b.FirstSequence, len(b.records)})
	}
	require.Equal(t, []batch{{0, -1, -1, 2}, {2, pid, 0, 3}, {5, -1, -1, 1}}, shapes)
}
