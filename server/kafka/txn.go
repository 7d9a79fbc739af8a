package kafka

import (
	"cmp"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/topic"
)

// Kafka's transactions (KIP-98) are served by the cluster's transaction
// coordinator (backend.Transactions, cluster/transactions.go); this side
// decodes, checks what the answer names item by item (unknown topics and
// partitions, group ids), and maps the coordinator's refusals to Kafka's
// codes (txnCode). Transaction requests are served where consumer groups
// are coordinated (coordinatorCode: every broker of the embedded cluster,
// the metadata group leader's node in a cluster of processes); elsewhere
// they are NOT_COORDINATOR, through the handler table's coordinated rows.
// None of their answers has an error message: every refusal is logged,
// one line a request (logRefused, noteTxnRefusal). The files:
// initproducerid.go (with a transactional id), this one
// (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn), txnoffsetcommit.go, describetransactions.go and
// listtransactions.go; produce.go accepts a transactional batch, fetch.go
// serves markers as control batches and read_committed.

// noteTxnRefusal adds a refused transaction request's transactional id,
// error and args to its line in the server's log (logRefused).
func (x *exchange) noteTxnRefusal(id string, err error, args ...any) {
	if id != "" {
		x.note("transactional_id", id)
	}
	x.note(append([]any{"err", err}, args...)...)
}

// addPartitionsToTxn answers AddPartitionsToTxn (key 24) v0-v3: the
// partitions join the transactional id's open transaction (opening one),
// so that its producer may write to them and their markers are written at
// its end. Every partition is checked first, as Kafka does: one that does
// not exist is UNKNOWN_TOPIC_OR_PARTITION and the others
// OPERATION_NOT_ATTEMPTED, with nothing added; otherwise the
// coordinator's answer is every partition's.
func (s *Server) addPartitionsToTxn(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.AddPartitionsToTxnRequest)
	var parts []cluster.TxnPartition
	codes := map[cluster.TxnPartition]int16{}
	var unknown error
	for _, t := range req.Topics {
		info, terr := s.c.Topic(t.Topic)
		for _, p := range t.Partitions {
			tp := cluster.TxnPartition{Topic: t.Topic, Partition: int(p)}
			parts = append(parts, tp)
			if terr != nil || p < 0 || int(p) >= info.PartitionCount {
				codes[tp] = kerr.UnknownTopicOrPartition.Code
				if unknown == nil {
					unknown = fmt.Errorf("kafka: partition %s/%d: %w", t.Topic, p, cmp.Or(terr, topic.ErrPartitionOutOfRange))
				}
			}
		}
	}
	code := int16(0)
	switch {
	case len(codes) > 0:
		code = kerr.OperationNotAttempted.Code
		x.noteTxnRefusal(req.TransactionalID, unknown, "unknown_partitions", len(codes))
	case len(parts) > 0:
		if err := s.c.AddPartitionsToTxn(x.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, parts); err != nil {
			code = txnCode(err, kmsg.AddPartitionsToTxn, req.Version)
			x.noteTxnRefusal(req.TransactionalID, err)
		}
	}
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			if c, ok := codes[cluster.TxnPartition{Topic: t.Topic, Partition: int(p)}]; ok {
				rp.ErrorCode = c
			}
			x.code(rp.ErrorCode)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func failAddPartitionsToTxn(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// addOffsetsToTxn answers AddOffsetsToTxn (key 25) v0-v3: the consumer
// group joins the open transaction, whose TxnOffsetCommit offsets for it
// become the group's committed offsets when, and only if, the
// transaction commits. A group id that is not a valid consumer id is
// INVALID_GROUP_ID, as OffsetCommit answers it.
func (s *Server) addOffsetsToTxn(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if err := group.ValidateID(req.Group); err != nil {
		resp.ErrorCode = x.code(kerr.InvalidGroupID.Code)
		x.noteTxnRefusal(req.TransactionalID, err, "group", req.Group)
		return resp
	}
	if err := s.c.AddOffsetsToTxn(x.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group); err != nil {
		resp.ErrorCode = x.code(txnCode(err, kmsg.AddOffsetsToTxn, req.Version))
		x.noteTxnRefusal(req.TransactionalID, err, "group", req.Group)
	}
	return resp
}

func failAddOffsetsToTxn(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.AddOffsetsToTxnRequest).ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	resp.ErrorCode = code
	return resp
}

// endTxn answers EndTxn (key 26) v0-v3: the open transaction commits or
// aborts. The answer comes once the coordinator has decided the
// transaction's end durably; its markers reach the partitions then or,
// after a failure, from the coordinator's retries (a later request of the
// id is CONCURRENT_TRANSACTIONS, retriable, until they have).
func (s *Server) endTxn(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	if err := s.c.EndTxn(x.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit); err != nil {
		resp.ErrorCode = x.code(txnCode(err, kmsg.EndTxn, req.Version))
		x.noteTxnRefusal(req.TransactionalID, err, "commit", req.Commit)
	}
	return resp
}

func failEndTxn(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.EndTxnRequest).ResponseKind().(*kmsg.EndTxnResponse)
	resp.ErrorCode = code
	return resp
}
