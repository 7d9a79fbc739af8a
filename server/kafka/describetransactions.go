package kafka

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// describeTransactions answers DescribeTransactions (key 65) v0: each
// transactional id's state (Kafka's names), producer id and epoch,
// timeout, the start of its open transaction (-1 when none is open) and
// the partitions it wrote to, by topic; an id the coordinator does not
// know is TRANSACTIONAL_ID_NOT_FOUND. Served where transactions are
// coordinated, NOT_COORDINATOR elsewhere.
func (s *Server) describeTransactions(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	txns, err := s.c.Transactions()
	code := int16(0)
	if err != nil {
		code = txnCode(err, kmsg.DescribeTransactions, req.Version)
		x.noteTxnRefusal("", err)
	}
	byID := map[string]cluster.Transaction{}
	for _, t := range txns {
		byID[t.ID] = t
	}
	for _, id := range req.TransactionalIDs {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ProducerID, ts.ProducerEpoch, ts.StartTimestamp = id, -1, -1, -1
		t, ok := byID[id]
		switch {
		case code != 0:
			ts.ErrorCode = x.code(code)
		case !ok:
			ts.ErrorCode = x.code(kerr.TransactionalIDNotFound.Code)
		default:
			ts.State, ts.ProducerID, ts.ProducerEpoch = txnStateName(t.State), t.ProducerID, t.Epoch
			ts.TimeoutMillis = int32(min(t.Timeout.Milliseconds(), int64(1<<31-1)))
			if !t.Started.IsZero() {
				ts.StartTimestamp = t.Started.UnixMilli()
			}
			ts.Topics = describeTxnTopics(t.Partitions)
		}
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp
}

// describeTxnTopics is parts by topic, topics and partitions ascending.
func describeTxnTopics(parts []cluster.TxnPartition) []kmsg.DescribeTransactionsResponseTransactionStateTopic {
	sorted := slices.Clone(parts)
	slices.SortFunc(sorted, func(a, b cluster.TxnPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var out []kmsg.DescribeTransactionsResponseTransactionStateTopic
	for _, p := range sorted {
		if len(out) == 0 || out[len(out)-1].Topic != p.Topic {
			t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			t.Topic = p.Topic
			out = append(out, t)
		}
		last := &out[len(out)-1]
		last.Partitions = append(last.Partitions, int32(p.Partition))
	}
	return out
}

func failDescribeTransactions(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ErrorCode, ts.ProducerID, ts.ProducerEpoch, ts.StartTimestamp = id, code, -1, -1, -1
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp
}
