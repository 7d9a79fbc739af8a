package kafka_test

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnProducer is a transactional producer speaking raw frames on nc: its
// transactional id, producer id and epoch, at the request versions v
// (InitProducerID, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// TxnOffsetCommit).
type txnProducer struct {
	t     *testing.T
	nc    net.Conn
	id    string
	pid   int64
	epoch int16
	v     int16
}

// initTxn sends InitProducerID v4 for id with a 60 s timeout; on success
// the producer takes the answer's id and epoch.
func initTxn(t *testing.T, nc net.Conn, id string) (*txnProducer, int16) {
	t.Helper()
	p := &txnProducer{t: t, nc: nc, id: id, pid: -1, epoch: -1, v: 3}
	return p, p.init(4, 60_000)
}

// init sends InitProducerID at version v with the producer's id and
// epoch (v3+) and timeoutMs, and takes the answer's on success.
func (p *txnProducer) init(v int16, timeoutMs int32) int16 {
	p.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = v, kmsg.StringPtr(p.id), timeoutMs
	req.ProducerID, req.ProducerEpoch = p.pid, p.epoch
	resp := roundTrip(p.t, p.nc, req, v).(*kmsg.InitProducerIDResponse)
	if resp.ErrorCode == 0 {
		p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
	} else {
		require.EqualValues(p.t, -1, resp.ProducerID)
	}
	return resp.ErrorCode
}

// addPartitions sends AddPartitionsToTxn for partitions of topicName
// and returns each partition's code, by partition.
func (p *txnProducer) addPartitions(topicName string, partitions ...int32) map[int32]int16 {
	p.t.Helper()
	return p.addTopics(map[string][]int32{topicName: partitions})[topicName]
}

// addTopics is addPartitions for several topics: codes by topic and
// partition.
func (p *txnProducer) addTopics(topics map[string][]int32) map[string]map[int32]int16 {
	p.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.v, p.id, p.pid, p.epoch
	for name, parts := range topics {
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = name, parts
		req.Topics = append(req.Topics, rt)
	}
	resp := roundTrip(p.t, p.nc, req, p.v).(*kmsg.AddPartitionsToTxnResponse)
	out := map[string]map[int32]int16{}
	for _, rt := range resp.Topics {
		out[rt.Topic] = map[int32]int16{}
		for _, rp := range rt.Partitions {
			out[rt.Topic][rp.Partition] = rp.ErrorCode
		}
	}
	return out
}

// addOffsets sends AddOffsetsToTxn for groupID.
func (p *txnProducer) addOffsets(groupID string) int16 {
	p.t.Helper()
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = p.v, p.id, p.pid, p.epoch, groupID
	return roundTrip(p.t, p.nc, req, p.v).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
}

// commitOffset sends TxnOffsetCommit of one offset of events/partition
// for groupID, naming generation and member (v3).
func (p *txnProducer) commitOffset(groupID string, generation int32, member string, partition int32, offset int64) int16 {
	p.t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = p.v, p.id, groupID, p.pid, p.epoch
	req.Generation, req.MemberID = generation, member
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "events"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = partition, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := roundTrip(p.t, p.nc, req, p.v).(*kmsg.TxnOffsetCommitResponse)
	require.Len(p.t, resp.Topics, 1)
	require.Len(p.t, resp.Topics[0].Partitions, 1)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// end sends EndTxn.
func (p *txnProducer) end(commit bool) int16 {
	p.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.v, p.id, p.pid, p.epoch, commit
	return roundTrip(p.t, p.nc, req, p.v).(*kmsg.EndTxnResponse).ErrorCode
}

// produce sends values to events/partition as one transactional batch
// from sequence seq.
func (p *txnProducer) produce(partition int32, seq int32, values ...[]byte) kmsg.ProduceResponseTopicPartition {
	p.t.Helper()
	req := produceRequest(9, producerBatchOf(p.t, p.pid, p.epoch, seq, 0x10, values...))
	req.Topics[0].Partitions[0].Partition = partition
	return roundTrip(p.t, p.nc, req, 9).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// describeTxns sends DescribeTransactions for ids.
func describeTxns(t *testing.T, nc net.Conn, ids ...string) []kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = ids
	return roundTrip(t, nc, req, 0).(*kmsg.DescribeTransactionsResponse).TransactionStates
}

// listTxns sends ListTransactions v1 with the filters.
func listTxns(t *testing.T, nc net.Conn, states []string, producerIDs []int64, durationMs int64) *kmsg.ListTransactionsResponse {
	t.Helper()
	req := kmsg.NewPtrListTransactionsRequest()
	req.Version, req.StateFilters, req.ProducerIDFilters, req.DurationFilterMillis = 1, states, producerIDs, durationMs
	return roundTrip(t, nc, req, 1).(*kmsg.ListTransactionsResponse)
}

// fetchAt fetches events/partition from offset at isolation level
// isolation (0 read_uncommitted, 1 read_committed), without waiting.
func fetchAt(t *testing.T, nc net.Conn, isolation int8, partition int32, offset int64) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := fetchRequest(0, 0, 1<<20, 1<<20, partition)
	req.IsolationLevel = isolation
	req.Topics[0].Partitions[0].FetchOffset = offset
	resp := roundTrip(t, nc, req, 12).(*kmsg.FetchResponse)
	return resp.Topics[0].Partitions[0]
}

// fetchedBatch is a record batch of a fetch answer with its records.
type fetchedBatch struct {
	kmsg.RecordBatch
	records []kmsg.Record
}

// batchesOf decodes a fetch answer's record batches, checking each
// batch's CRC-32C.
func batchesOf(t *testing.T, b []byte) []fetchedBatch {
	t.Helper()
	var out []fetchedBatch
	for len(b) > 0 {
		var fb fetchedBatch
		require.NoError(t, fb.ReadFrom(b))
		raw := b[:12+fb.Length]
		require.Equal(t, binary.BigEndian.Uint32(raw[17:]), crc32c(raw[21:]), "CRC-32C")
		body := fb.Records
		for range fb.NumRecords {
			n, w := binary.Varint(body)
			require.Positive(t, w)
			var r kmsg.Record
			require.NoError(t, r.ReadFrom(body[:w+int(n)]))
			fb.records = append(fb.records, r)
			body = body[w+int(n):]
		}
		require.Empty(t, body)
		out = append(out, fb)
		b = b[12+fb.Length:]
	}
	return out
}

// requireControlRecord asserts that b is a control batch of one Kafka
// control record of a marker of type typ (0 abort, 1 commit): key
// version 0 and type, value version 0 and coordinator epoch 0.
func requireControlRecord(t *testing.T, b fetchedBatch, typ int16) {
	t.Helper()
	require.Equal(t, int16(0x30), b.Attributes&0x30, "transactional and control")
	require.Len(t, b.records, 1)
	require.Equal(t, []byte{0, 0, 0, byte(typ)}, b.records[0].Key)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0}, b.records[0].Value)
}
