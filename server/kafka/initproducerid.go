package kafka

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// initProducerID answers InitProducerID (key 22) v0-v4.
//
// Without a transactional id, for an idempotent producer: a producer id
// never handed out before in the cluster, at epoch 0
// (backend.Data.NewProducerID). A producer that asks again — after a
// sequence error, or with its id and epoch (v3+, KIP-360) — gets a new
// id, as a Kafka broker gives an idempotent producer: its records are
// then told apart from the old id's.
//
// With one, for a transactional producer: the transactional id's producer
// id and a new epoch from the transaction coordinator
// (backend.Transactions.InitTransactions), which fences every older epoch
// and aborts a transaction an older one left open; v3+ passes the
// producer's current id and epoch (KIP-360), -1 before. The timeout is
// the request's TransactionTimeoutMillis, checked by the coordinator
// (INVALID_TRANSACTION_TIMEOUT). It is served where transactions are
// coordinated (coordinatorCode: NOT_COORDINATOR elsewhere); an empty
// transactional id is INVALID_REQUEST, as Kafka answers it (the
// coordinator's cluster.ErrInvalidArgument).
func (s *Server) initProducerID(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		s.initTransactions(x, req, resp)
		return resp
	}
	id, err := s.c.NewProducerID(x.ctx)
	if err != nil {
		x.fault("err", fmt.Errorf("no producer id: %w", err))
		resp.ErrorCode = x.code(kerr.CoordinatorNotAvailable.Code)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}

// initTransactions fills resp for an InitProducerID with a transactional
// id.
func (s *Server) initTransactions(x *exchange, req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) {
	id := *req.TransactionalID
	if code := s.coordinatorCode(); code != 0 {
		resp.ErrorCode = x.refuse(code, s.coordinatorReason())
		return
	}
	pid, epoch := int64(-1), int16(-1)
	if req.Version >= 3 {
		pid, epoch = req.ProducerID, req.ProducerEpoch
	}
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	newID, newEpoch, err := s.c.InitTransactions(x.ctx, id, timeout, pid, epoch)
	if err != nil {
		resp.ErrorCode = x.code(txnCode(err, kmsg.InitProducerID, req.Version))
		x.noteTxnRefusal(id, err)
		return
	}
	resp.ProducerID, resp.ProducerEpoch = newID, newEpoch
}

func failInitProducerID(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.InitProducerIDRequest).ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = -1, -1, code
	return resp
}
